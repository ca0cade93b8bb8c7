// Search at scale (issues 5, 52): at each size (BENCH_SEARCH_SIZES, default 100,000 and 1,000,000; or BENCH_SNIPPETS
// alone) generated snippets of ~500 bytes in varied
// vocabularies and languages, with their pages' sections (issue 50: each page's sections as extraction cuts
// them, rows of kind section beside the snippets, as a crawl stores them), stored in a scratch database
// through the real schema (generated search vectors,
// GIN indexes, the lexicon queue and its refreshes), then a fixed mix of 200 queries through searchSnippets
// (BENCH_SEARCH_PASSES passes, default 3: the median pass is reported with the range of all), next
// to EXPLAIN ANALYZE of the ranking statement it runs (the floor, with docdex / floor as the ratio). Each corpus is kept and reused (migrated forward) while its size
// and the generator are unchanged (BENCH_REBUILD=1 regenerates).
// Run alone: npm run build && node --experimental-strip-types bench/search.ts
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { loadConfig } from '../dist/core/config.js';
import { createPool, resolveConnection } from '../dist/core/db/connect.js';
import type { ConnectionInfo } from '../dist/core/db/connect.js';
import { latestMigrationId, migrate } from '../dist/core/db/migrate.js';
import { extractSections } from '../dist/core/extract/sections.js';
import { refreshSearchTerms } from '../dist/core/search/lexicon.js';
import { explainSearch, searchSnippets } from '../dist/core/search/search.js';
import { clearWordStatsCache } from '../dist/core/search/typo.js';
import type { SearchOptions } from '../dist/core/search/search.js';
import { typoAt } from './harness/relevance.ts';
import { vectorFloorSeconds } from './harness/vectors.ts';

type Row = Record<string, string | number>;

// 2: each batch's text comes from its own seed, and the query mix picks snippets by code hash, so a rebuild
// gives the same corpus and the same 200 queries (version 1 let the two writers' race decide both).
// 3: each page's sections are stored too (issue 50). Its corpus has a database of its own (the version in the
// name), so the version-2 corpus stays to measure the code before sections against.
const GENERATOR_VERSION = 3;
const BATCH = 2000;
const PASSES = Math.max(1, Number(process.env.BENCH_SEARCH_PASSES ?? 3));
const SNIPPETS_PER_PAGE = 10;

// ---------------------------------------------------------------------------------------------------------
// Deterministic text generation.

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TECH_WORDS = (
  'file read write open close stream buffer request response server client connect socket query table index ' +
  'column row insert update delete select transaction commit rollback cache memory thread process worker queue ' +
  'event listener callback promise async await error exception handler retry timeout signal config option ' +
  'setting path directory module package import export function method class object instance property value ' +
  'string number array list map set dict key parse format encode decode json yaml xml html template render ' +
  'route middleware session cookie token auth user password hash encrypt certificate log logger level debug ' +
  'test assert mock fixture benchmark profile metric trace span deploy build compile bundle install version ' +
  'date time timezone interval schedule cron job task batch pipeline filter sort group merge join split chunk ' +
  'iterate generator yield lambda closure decorator context manager resource pool limit offset page cursor ' +
  'download upload fetch http url header body status redirect proxy cors websocket channel message publish ' +
  'subscribe notify lock mutex atomic concurrent parallel sync serialize schema migration model field validate'
).split(' ');

const SYLLABLES = 'ka lo mi ter sun pra vel dor nix qua rem tos zen bri cal fen gor hul jas lum mor nep ost pid rax sil tum urb vox wen yal zor ash bek cor dun eft fip gal hox'.split(' ');

class Vocabulary {
  readonly words: string[];
  private readonly cdf: number[];
  constructor(rand: () => number, size: number) {
    const synthetic = new Set<string>();
    while (synthetic.size < size) {
      const n = 2 + Math.floor(rand() * 2);
      let w = '';
      for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
      if (!TECH_WORDS.includes(w)) synthetic.add(w);
    }
    // Real words first: they take the head of the Zipf distribution, as in real docs.
    this.words = [...TECH_WORDS, ...synthetic];
    let sum = 0;
    this.cdf = this.words.map((_, i) => (sum += 1 / (i + 1) ** 1.05));
    this.cdf = this.cdf.map((c) => c / sum);
  }
  pick(r: number): string {
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cdf[mid]! < r) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }
}

const LANGUAGES = ['python', 'javascript', 'typescript', 'sql', 'shell', 'go', 'rust', 'java'] as const;
type Lang = (typeof LANGUAGES)[number];

class Generator {
  private rand: () => number;
  readonly vocab: Vocabulary;
  constructor(seed: number) {
    this.rand = mulberry32(seed);
    this.vocab = new Vocabulary(mulberry32(7), 30_000);
  }
  /** Restarts the text stream (the vocabulary stays): a batch's text depends on its number only. */
  reseed(seed: number): void {
    this.rand = mulberry32(seed);
  }
  word(): string {
    return this.vocab.pick(this.rand());
  }
  int(n: number): number {
    return Math.floor(this.rand() * n);
  }
  cap(w: string): string {
    return w[0]!.toUpperCase() + w.slice(1);
  }
  camel(): string {
    return this.word() + this.cap(this.word());
  }
  snake(): string {
    return `${this.word()}_${this.word()}`;
  }
  type(): string {
    return this.cap(this.word()) + this.cap(this.word());
  }
  sentence(words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.word());
    return `${this.cap(out.join(' '))}.`;
  }
  code(lang: Lang): string {
    const a = this.word();
    const b = this.word();
    const n = this.int(1000);
    switch (lang) {
      case 'python':
        return `import ${a}\nfrom ${a}.${b} import ${this.type()}\n\ndef ${this.snake()}(${this.word()}, ${this.word()}=${n}):\n    """${this.sentence(6)}"""\n    ${this.word()} = ${a}.${this.snake()}(${this.word()})\n    for ${this.word()} in ${this.word()}.${this.word()}():\n        print(${this.word()}.${this.snake()})\n    return ${this.word()}\n`;
      case 'javascript':
        return `const ${a} = require('${a}-${b}');\n\nasync function ${this.camel()}(${this.word()}) {\n  const ${this.word()} = await ${a}.${this.camel()}(${this.word()}, { ${this.word()}: ${n}, ${this.word()}: '${this.word()}' });\n  // ${this.sentence(5)}\n  return ${this.word()}.${this.camel()}();\n}\nmodule.exports = { ${this.camel()} };\n`;
      case 'typescript':
        return `import { ${this.type()} } from '${a}/${b}';\n\nexport interface ${this.type()} {\n  ${this.word()}: string;\n  ${this.word()}?: number;\n}\n\nexport function ${this.camel()}(${this.word()}: ${this.type()}): Promise<void> {\n  return ${this.word()}.${this.camel()}(${n});\n}\n`;
      case 'sql':
        return `SELECT ${a}.${this.word()}, ${b}.${this.snake()}\n  FROM ${a}\n  JOIN ${b} ON ${b}.${a}_id = ${a}.id\n WHERE ${a}.${this.word()} > ${n}\n ORDER BY ${b}.${this.word()} DESC\n LIMIT ${this.int(100)};\n-- ${this.sentence(6)}\n`;
      case 'shell':
        return `$ ${a} ${b} --${this.word()} ${this.word()} --${this.word()}=${n}\n$ ${a} ${this.word()} ./${this.word()}/${this.word()}.conf\n# ${this.sentence(7)}\n$ export ${a.toUpperCase()}_${b.toUpperCase()}=${this.word()}\n`;
      case 'go':
        return `package ${a}\n\nimport "${a}/${b}"\n\nfunc ${this.type()}(${this.word()} string) (*${b}.${this.type()}, error) {\n\t${this.word()}, err := ${b}.${this.type()}(${this.word()}, ${n})\n\tif err != nil {\n\t\treturn nil, err\n\t}\n\treturn ${this.word()}, nil\n}\n`;
      case 'rust':
        return `use ${a}::${b}::${this.type()};\n\npub fn ${this.snake()}(${this.word()}: &str) -> Result<${this.type()}, Error> {\n    let ${this.word()} = ${this.type()}::${this.snake()}(${this.word()}, ${n})?;\n    // ${this.sentence(5)}\n    Ok(${this.word()})\n}\n`;
      case 'java':
        return `import ${a}.${b}.${this.type()};\n\npublic class ${this.type()} {\n    public ${this.type()} ${this.camel()}(String ${this.word()}) {\n        return ${this.word()}.${this.camel()}(${n});\n    }\n}\n`;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Corpus.

interface SourceSpec {
  name: string;
  language: Lang;
}

const SOURCE_NAMES = ['react', 'django', 'fastapi', 'postgres', 'tokio', 'spring', 'express', 'kubernetes', 'pandas', 'gin'];

function sourceSpecs(): SourceSpec[] {
  const out: SourceSpec[] = [];
  for (let i = 0; i < 40; i++) out.push({ name: i < SOURCE_NAMES.length ? SOURCE_NAMES[i]! : `lib${String(i).padStart(2, '0')}`, language: LANGUAGES[i % LANGUAGES.length]! });
  return out;
}

/** The pages' sections as extraction cuts them (extract/sections.ts), stored as a crawl stores them; returns how many. */
async function insertSections(client: pg.ClientBase, sourceId: string, docIds: string[], urls: string[], titles: string[], markdowns: string[]): Promise<number> {
  const rows = markdowns.flatMap((markdown, p) => extractSections({ url: urls[p]!, title: titles[p]!, markdown }, []).map((s) => ({ ...s, page: p })));
  const ins = await client.query<{ id: number; document_id: string; position: number }>(
    `INSERT INTO snippets (source_id, document_id, kind, title, description, language, code, code_hash, source_url, position)
     SELECT $1, ($2::uuid[])[x.page + 1], 'section', x.title, x.description, x.language, x.code, x.hash, x.url, x.position
       FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[])
         AS x(title, description, language, code, hash, url, page, position)
     RETURNING id, document_id, position`,
    [
      sourceId,
      docIds,
      rows.map((s) => s.title),
      rows.map((s) => s.description),
      rows.map((s) => s.language),
      rows.map((s) => s.text),
      rows.map((s) => `s${s.hash}`),
      rows.map((s) => s.sourceUrl),
      rows.map((s) => s.page),
      rows.map((s) => s.position),
    ],
  );
  await client.query('INSERT INTO snippet_occurrences (snippet_id, document_id, position) SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::int[])', [
    ins.rows.map((r) => r.id),
    ins.rows.map((r) => r.document_id),
    ins.rows.map((r) => r.position),
  ]);
  return ins.rows.length;
}

export async function generate(pool: pg.Pool, total: number): Promise<{ seconds: number; rate: number }> {
  const specs = sourceSpecs();
  const sources = await pool.query<{ id: string }>(`INSERT INTO sources (name, kind) SELECT unnest($1::text[]), 'crawl' RETURNING id`, [specs.map((s) => s.name)]);
  const sourceIds = sources.rows.map((r) => r.id);
  const jobs = await pool.query<{ id: string }>(
    `INSERT INTO crawl_jobs (source_id, name, status, start_urls)
     SELECT s, 'bench', 'completed', ARRAY['https://bench.example/'] FROM unnest($1::uuid[]) AS s RETURNING id`,
    [sourceIds],
  );
  const jobIds = jobs.rows.map((r) => r.id);
  const batches = Math.ceil(total / BATCH);
  let next = 0;
  const started = performance.now();
  // Two writers: the machine has two cores, and PostgreSQL does the vector and index work per row. Which
  // writer takes which batch is a race, so each batch's text comes from its own seed.
  const writer = async () => {
    const g = new Generator(0);
    for (;;) {
      const b = next++;
      if (b >= batches) return;
      g.reseed(1_000_003 * (b + 1));
      const count = Math.min(BATCH, total - b * BATCH);
      const si = b % specs.length;
      const spec = specs[si]!;
      const pages = Math.ceil(count / SNIPPETS_PER_PAGE);
      const urls: string[] = [];
      const pageTitles: string[] = [];
      const markdowns: string[] = [];
      const snippet = {
        title: [] as string[],
        description: [] as string[],
        language: [] as string[],
        code: [] as string[],
        hash: [] as string[],
        url: [] as string[],
        page: [] as number[],
        position: [] as number[],
      };
      for (let p = 0; p < pages; p++) {
        const url = `https://${spec.name}.bench.example/b${b}/p${p}.html`;
        const pageTitle = `${g.cap(g.word())} ${g.word()} ${g.word()}`;
        const md: string[] = [`# ${pageTitle}`, g.sentence(20)];
        for (let k = 0; k < SNIPPETS_PER_PAGE && snippet.code.length < count; k++) {
          // Most snippets are in the source's language; some pages mix in shell and SQL, as docs do.
          const lang = g.int(10) < 7 ? spec.language : LANGUAGES[g.int(LANGUAGES.length)]!;
          const section = `${g.cap(g.word())} ${g.word()}`;
          const description = `${g.sentence(12 + g.int(10))} ${g.sentence(8 + g.int(8))}`;
          const code = g.code(lang);
          md.push(`## ${section}`, description, `\`\`\`${lang}\n${code}\`\`\``);
          snippet.title.push(`${section} | ${pageTitle}`);
          snippet.description.push(description);
          snippet.language.push(lang);
          snippet.code.push(code);
          snippet.hash.push(`${b}-${p}-${k}`);
          snippet.url.push(`${url}#${section.toLowerCase().replace(/\W+/g, '-')}`);
          snippet.page.push(p);
          snippet.position.push(k);
        }
        urls.push(url);
        pageTitles.push(pageTitle);
        markdowns.push(md.join('\n\n'));
      }
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const docs = await client.query<{ id: string }>(
          `INSERT INTO documents (source_id, url, title, markdown, content_hash, source_type, crawl_job_id)
           SELECT $1, u, t, m, md5(m), 'crawled', $2 FROM unnest($3::text[], $4::text[], $5::text[]) AS x(u, t, m)
           RETURNING id`,
          [sourceIds[si], jobIds[si], urls, pageTitles, markdowns],
        );
        const docIds = docs.rows.map((r) => r.id);
        const ins = await client.query<{ id: number; document_id: string; position: number }>(
          `INSERT INTO snippets (source_id, document_id, title, description, language, code, code_hash, source_url, position)
           SELECT $1, ($2::uuid[])[x.page + 1], x.title, x.description, x.language, x.code, x.hash, x.url, x.position
             FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::int[], $10::int[])
               AS x(title, description, language, code, hash, url, page, position)
           RETURNING id, document_id, position`,
          [sourceIds[si], docIds, snippet.title, snippet.description, snippet.language, snippet.code, snippet.hash, snippet.url, snippet.page, snippet.position],
        );
        await client.query(
          `INSERT INTO snippet_occurrences (snippet_id, document_id, position)
           SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::int[])`,
          [ins.rows.map((r) => r.id), ins.rows.map((r) => r.document_id), ins.rows.map((r) => r.position)],
        );
        const sections = await insertSections(client, sourceIds[si]!, docIds, urls, pageTitles, markdowns);
        await client.query('UPDATE sources SET snippet_count = snippet_count + $2, section_count = section_count + $4, document_count = document_count + $3 WHERE id = $1', [
          sourceIds[si],
          count,
          pages,
          sections,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
      // As storePage does after each page: the lexicon is part of the ingest cost.
      await refreshSearchTerms(pool, 5000);
    }
  };
  await Promise.all([writer(), writer()]);
  await refreshSearchTerms(pool);
  const seconds = (performance.now() - started) / 1000;
  await pool.query('VACUUM ANALYZE');
  return { seconds, rate: total / seconds };
}

// ---------------------------------------------------------------------------------------------------------
// Queries: a fixed mix drawn from the stored corpus (so each kind has real matches), by code hash: snippet ids
// follow the writers' race, hashes (batch-page-position) do not.

function typo(word: string, k: number): string {
  if (word.length < 5) return word;
  return typoAt(word, k % 2 === 0 ? 'swap' : 'drop', 1 + (k % (word.length - 2)));
}

export async function queryMix(pool: pg.Pool, total: number): Promise<SearchOptions[]> {
  const specs = sourceSpecs();
  const picked = Array.from({ length: 100 }, (_, i) => {
    const n = Math.min(total - 1, Math.floor(((i * 7919) % 100) * (total / 100)) + i);
    const b = Math.floor(n / BATCH);
    const o = n % BATCH;
    return { order: n, source: specs[b % specs.length]!.name, hash: `${b}-${Math.floor(o / SNIPPETS_PER_PAGE)}-${o % SNIPPETS_PER_PAGE}` };
  });
  const { rows } = await pool.query<{ title: string; description: string; code: string; language: string; source: string }>(
    `SELECT s.title, s.description, s.code, s.language, src.name AS source
       FROM unnest($1::text[], $2::text[], $3::int[]) AS t(source, hash, ord)
       JOIN sources src ON src.name = t.source JOIN snippets s ON s.source_id = src.id AND s.code_hash = t.hash
      ORDER BY t.ord`,
    [picked.map((p) => p.source), picked.map((p) => p.hash), picked.map((p) => p.order)],
  );
  if (rows.length !== picked.length) throw new Error(`query mix: found ${rows.length} of ${picked.length} sampled snippets; rebuild with BENCH_REBUILD=1`);
  const words = (text: string): string[] => text.toLowerCase().match(/[a-z]{4,}/g) ?? [];
  const mix: SearchOptions[] = [];
  // Half the words are drawn from the head of the vocabulary (words in most snippets: the worst case for an
  // index), half from the rest (what people usually search for: a specific name or concept).
  const head = new Set(TECH_WORDS.slice(0, 100));
  rows.forEach((r, i) => {
    const desc = words(r.description);
    const specific = desc.filter((w) => !head.has(w));
    const ident = r.code.match(/\b[a-z]+[A-Z][a-zA-Z]+\b|\b[a-z]+_[a-z_]+\b|\b[a-z]+\.[a-z_]+\b/)?.[0] ?? desc[0] ?? 'file';
    const any = (k: number) => desc[(i * 3 + k) % Math.max(desc.length, 1)] ?? 'file';
    const rare = (k: number) => specific[(i * 5 + k) % Math.max(specific.length, 1)] ?? any(k);
    const pick = (k: number) => (k % 2 === 0 ? rare(k) : any(k));
    // 2 queries per sampled snippet: 200 in all, in a fixed rotation of kinds.
    const kinds: SearchOptions[] = [
      { query: pick(0) },
      { query: `${pick(1)} ${pick(2)}` },
      { query: ident },
      { query: typo(rare(3), i) },
      { query: `${pick(4)} ${pick(5)}`, source: r.source },
      { query: ident, language: r.language },
      { query: typo(ident, i), source: r.source.toUpperCase() },
      { query: `${rare(6)} ${any(7)} ${rare(8)}`, language: r.language, source: r.source },
      { query: any(9) },
      // A quoted phrase, as people quote them: around a distinctive word.
      { query: `"${desc.slice(Math.max(0, desc.indexOf(rare(10))), Math.max(0, desc.indexOf(rare(10))) + 2).join(' ')}"` },
    ];
    mix.push(kinds[(2 * i) % kinds.length]!, kinds[(2 * i + 1) % kinds.length]!);
  });
  return mix.slice(0, 200);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export async function ensureDatabase(info: ConnectionInfo, name: string, fresh: boolean): Promise<ConnectionInfo> {
  const adminConfig = { ...info.config };
  const withDb = (db: string) => {
    const c = { ...info.config };
    if (typeof c.connectionString === 'string') {
      const url = new URL(c.connectionString);
      url.pathname = `/${db}`;
      c.connectionString = url.toString();
    } else c.database = db;
    return c;
  };
  Object.assign(adminConfig, withDb('postgres'));
  const admin = new pg.Client(adminConfig);
  await admin.connect();
  try {
    if (fresh) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    if ((await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 0) await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return { ...info, config: withDb(name), display: name };
}

/** The generated corpus of `total` snippets in its scratch database, generated on first use and then reused. */
export async function openBenchCorpus(total: number): Promise<{ info: ConnectionInfo; pool: pg.Pool; ingest: { seconds: number; rate: number; reused: boolean } }> {
  const config = loadConfig();
  const name = `docdex_bench_search_${total}_g${GENERATOR_VERSION}`;
  let info = await ensureDatabase(await resolveConnection(config), name, false);
  let pool = createPool(info, { max: 4, applicationName: 'docdex-bench' });
  await pool.query('CREATE TABLE IF NOT EXISTS bench_meta (snippets integer, generator integer, schema integer, seconds float8, rate float8)').catch(() => undefined);
  const meta = await pool.query<{ snippets: number; generator: number; schema: number; seconds: number; rate: number }>('SELECT * FROM bench_meta').catch(() => ({ rows: [] }));
  const m = meta.rows[0];
  let ingest: { seconds: number; rate: number; reused: boolean };
  if (m && m.snippets === total && m.generator === GENERATOR_VERSION && process.env.BENCH_REBUILD !== '1') {
    // Later migrations apply to the kept corpus like to any database; only a new generator or size regenerates.
    await migrate(pool).catch((error: unknown) => console.warn(`bench: migrating the kept corpus failed, measuring it as it is: ${(error as Error).message}`));
    ingest = { seconds: m.seconds, rate: m.rate, reused: true };
  } else {
    await pool.end();
    info = await ensureDatabase(await resolveConnection(config), name, true);
    pool = createPool(info, { max: 4, applicationName: 'docdex-bench' });
    await migrate(pool);
    const g = await generate(pool, total);
    await pool.query('CREATE TABLE bench_meta (snippets integer, generator integer, schema integer, seconds float8, rate float8)');
    await pool.query('INSERT INTO bench_meta VALUES ($1, $2, $3, $4, $5)', [total, GENERATOR_VERSION, latestMigrationId(), g.seconds, g.rate]);
    ingest = { ...g, reused: false };
  }
  return { info, pool, ingest };
}

/** One size's figures: searchSnippets over the mix, and the same ranking statement bare, in one run. */
interface SizeFigures {
  total: number;
  sections: number;
  ingest: { seconds: number; rate: number; reused: boolean };
  floorRate: number;
  passes: Array<{ p50: number; p99: number }>;
  p50: number;
  p99: number;
  cold: number[];
  sql: number[];
  exec: number[];
  sizes: { table_bytes: string; index_bytes: string; search_gin: string; lexicon: string; terms: number };
}

/** The mix `passes` times (after one warm-up pass), each pass's times in the mix's order. */
async function timedPasses(pool: pg.Pool, mix: SearchOptions[]): Promise<number[][]> {
  for (const q of mix) await searchSnippets(pool, q);
  const passes: number[][] = [];
  for (let pass = 0; pass < PASSES; pass++) {
    const times: number[] = [];
    for (const q of mix) {
      const t = performance.now();
      await searchSnippets(pool, q);
      times.push(performance.now() - t);
    }
    passes.push(times);
  }
  return passes;
}

async function measureSize(total: number): Promise<SizeFigures> {
  const { pool, ingest } = await openBenchCorpus(total);
  try {
    const { rows } = await pool.query<SizeFigures['sizes'] & { sections: number }>(
      `SELECT (SELECT COALESCE(sum(section_count), 0)::int FROM sources) AS sections, pg_table_size('snippets') AS table_bytes, pg_indexes_size('snippets') AS index_bytes,
              pg_relation_size('snippets_search') + COALESCE(pg_relation_size(to_regclass('snippets_search_sections')), 0) AS search_gin,
              pg_total_relation_size('search_terms') AS lexicon, (SELECT count(*)::int FROM search_terms) AS terms`,
    );
    const { sections, ...sizes } = rows[0]!;
    const mix = await queryMix(pool, total);
    // Several passes over the mix: one pass of 200 queries moved by several ms at p50 and by 3x at p99 from run
    // to run on this 2-core machine, so the table reports the median pass with the range of all of them.
    const fn = await timedPasses(pool, mix);
    const passes = fn.map((times) => {
      const sorted = [...times].sort((a, b) => a - b);
      return { times, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
    });
    const middle = (key: 'p50' | 'p99') => [...passes].sort((a, b) => a[key] - b[key])[Math.floor(passes.length / 2)]!;
    // The same with the word counts a server keeps for 30 s forgotten first: a query of words not seen lately.
    const cold: number[] = [];
    for (const q of mix) {
      clearWordStatsCache(pool);
      const t = performance.now();
      await searchSnippets(pool, q);
      cold.push(performance.now() - t);
    }
    // The floor: the ranking statement alone, as EXPLAIN ANALYZE times it in the server (planning + execution).
    const sql: number[] = [];
    const exec: number[] = [];
    for (const q of mix) {
      const e = await explainSearch(pool, q);
      sql.push(e.executionMs + e.planningMs);
      exec.push(e.executionMs);
    }
    if (process.env.BENCH_VERBOSE === '1') {
      const slow = mix
        .map((q, i) => ({ q, ms: middle('p50').times[i]!, sql: sql[i]! }))
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 15);
      for (const x of slow) console.log(`${x.ms.toFixed(1).padStart(7)} ms (sql ${x.sql.toFixed(1)})  ${JSON.stringify(x.q)}`);
    }
    const byValue = (a: number, b: number) => a - b;
    const floorRate = total / (await vectorFloorSeconds(pool));
    return { total, sections, ingest, floorRate, passes, p50: middle('p50').p50, p99: middle('p99').p99, cold: cold.sort(byValue), sql: sql.sort(byValue), exec: exec.sort(byValue), sizes };
  } finally {
    await pool.end();
  }
}

const count = (n: number) => n.toLocaleString('en-US');
const ms = (n: number) => `${n.toFixed(1)} ms`;

/** A size's rows: each with docdex, its floor from the same run, and the ratio (issue 52). */
function sizeRows(f: SizeFigures): Row[] {
  const size = `${count(f.total)} snippets (+${count(f.sections)} sections)`;
  const range = (key: 'p50' | 'p99') => {
    const v = f.passes.map((x) => x[key]);
    return f.passes.length > 1 ? ` (${f.passes.length} passes: ${Math.min(...v).toFixed(1)}–${Math.max(...v).toFixed(1)})` : '';
  };
  const perMillion = (bytes: string) => `${(((Number(bytes) / f.total) * 1_000_000) / 1024 / 1024).toFixed(0)} MB`;
  const s50 = percentile(f.sql, 50);
  const s99 = percentile(f.sql, 99);
  // One floor column for every row; each row names its floor.
  const floor = 'floor, same run';
  return [
    {
      row: `search p50, ${size} (floor: the ranking statement bare)`,
      docdex: `${ms(f.p50)}${range('p50')}`,
      [floor]: ms(s50),
      ratio: (f.p50 / Math.max(s50, 0.001)).toFixed(2),
      goal: '≤ 10 ms',
      met: f.p50 <= 10 ? 'yes' : 'no',
    },
    {
      row: `search p99, ${size} (floor: the ranking statement bare)`,
      docdex: `${ms(f.p99)}${range('p99')}`,
      [floor]: ms(s99),
      ratio: (f.p99 / Math.max(s99, 0.001)).toFixed(2),
      goal: '≤ 25 ms',
      met: f.p99 <= 25 ? 'yes' : 'no',
    },
    { row: '  words not seen in 30 s: p50 / p99', docdex: `${ms(percentile(f.cold, 50))} / ${ms(percentile(f.cold, 99))}` },
    { row: '  bare: execution only, p50 / p99', [floor]: `${ms(percentile(f.exec, 50))} / ${ms(percentile(f.exec, 99))}` },
    {
      row: `ingest, ${size}${f.ingest.reused ? ', from the run that generated it' : ''} (floor: the vectors alone, one core, nothing written)`,
      docdex: `${Math.round(f.ingest.rate)} snippets/s (${f.ingest.seconds.toFixed(0)} s)`,
      [floor]: `${Math.round(f.floorRate)} snippets/s`,
      ratio: (f.ingest.rate / f.floorRate).toFixed(2),
      goal: '≥ 5,000/s',
      met: f.ingest.rate >= 5000 ? 'yes' : 'no',
    },
    {
      row: '  snippets table / its indexes / search GIN, per 1M snippets',
      docdex: `${perMillion(f.sizes.table_bytes)} / ${perMillion(f.sizes.index_bytes)} / ${perMillion(f.sizes.search_gin)}`,
    },
    { row: '  lexicon (search_terms)', docdex: `${count(f.sizes.terms)} terms, ${(Number(f.sizes.lexicon) / 1024 / 1024).toFixed(0)} MB` },
  ];
}

/**
 * The sizes measured: BENCH_SEARCH_SIZES (comma-separated), else BENCH_SNIPPETS alone, else 100,000 and
 * 1,000,000 (issue 52's table: how cost grows with the index).
 */
function benchSizes(): number[] {
  const list = process.env.BENCH_SEARCH_SIZES ?? process.env.BENCH_SNIPPETS ?? '100000,1000000';
  return list.split(',').map((n) => Number(n.trim()));
}

export async function benchSearch(): Promise<Row[]> {
  const rows: Row[] = [];
  for (const total of benchSizes()) rows.push(...sizeRows(await measureSize(total)));
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.table(await benchSearch());
}
