// `npm run bench`: runs every benchmark against the built dist/ and prints one table per issue.
// Each bench module exports an async function returning rows; a missing or failing bench prints why.
import { performance } from 'node:perf_hooks';
import { benchStartup } from './startup.ts';

type Row = Record<string, string | number>;
type BenchFn = () => Promise<Row[]>;
type Bench = { name: string; load: () => Promise<BenchFn> };

// Each module is imported by URL so a bench that is not written yet reports itself instead of breaking the run.
const fromModule = (file: string, exportName: string) => async (): Promise<BenchFn> => ((await import(new URL(file, import.meta.url).href)) as Record<string, BenchFn>)[exportName]!;

const benches: Bench[] = [
  { name: 'CLI cold start (issues 2, 52)', load: async () => benchStartup },
  { name: 'extraction (issue 3)', load: fromModule('./extract.ts', 'benchExtract') },
  { name: 'crawl (issue 4)', load: fromModule('./crawl.ts', 'benchCrawl') },
  { name: 'storing pages (issue 52)', load: fromModule('./store.ts', 'benchStore') },
  { name: 'search (issue 5)', load: fromModule('./search.ts', 'benchSearch') },
  { name: 'daemon load (issue 6)', load: fromModule('./daemon.ts', 'benchDaemon') },
  { name: 'sandbox (issue 12)', load: fromModule('./sandbox.ts', 'benchSandbox') },
  { name: 'rendered pages (issue 34)', load: fromModule('./render.ts', 'benchRender') },
  { name: 'screening (issue 36)', load: fromModule('./screening.ts', 'benchScreening') },
  { name: 'index packs (issue 38)', load: fromModule('./pack.ts', 'benchPack') },
  { name: 'git repositories of docs (issue 50)', load: fromModule('./git-index.ts', 'benchGitIndex') },
  { name: 'hostile JSON bodies (issue 48)', load: fromModule('./bodies.ts', 'benchBodies') },
];

export function printTable(title: string, rows: Row[]): void {
  console.log(`\n## ${title}`);
  if (rows.length === 0) return console.log('(no rows)');
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(width[i]!)).join(' | ')} |`;
  console.log(line(cols));
  console.log(`|${width.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) console.log(line(cols.map((c) => String(r[c] ?? ''))));
}

const only = process.argv.slice(2);
for (const bench of benches) {
  if (only.length > 0 && !only.some((o) => bench.name.toLowerCase().includes(o.toLowerCase()))) continue;
  const started = performance.now();
  try {
    const fn = await bench.load();
    printTable(bench.name, await fn());
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    printTable(bench.name, [{ result: code === 'ERR_MODULE_NOT_FOUND' ? 'not implemented yet' : `failed: ${(error as Error).message}` }]);
  }
  console.log(`(${((performance.now() - started) / 1000).toFixed(1)} s)`);
}
