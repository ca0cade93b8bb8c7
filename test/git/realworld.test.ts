import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { sharedRealworldCorpus } from '../helpers/corpus-sets.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * The docs people index, as their repositories hold them (../shared/corpus/realworld: react.dev's MDX, vite's
 * VitePress with a `<<<` import, fastapi's MkDocs pages taking their code from `docs_src/`), each made a tagged
 * git repository and indexed with `docdex add file://…@v1 --path <docs>`: vite through the real binary with
 * `--wait`, react.dev and fastapi from the index the peer benchmark shares (the same add, in process).
 */

const corpus =
  process.env.DOCDEX_REALWORLD_DIR ?? [path.resolve(ROOT, '..', 'shared', 'corpus', 'realworld'), path.resolve(ROOT, '..', '..', 'shared', 'corpus', 'realworld')].find((d) => existsSync(d));
const REPOSITORIES = { 'react.dev': 'src/content', vite: 'docs', fastapi: 'docs/en/docs' } as const;
type Name = keyof typeof REPOSITORIES;
// The shared index holds python's HTML site beside the repositories (the peer benchmark reads both).
const corpusDir = process.env.DOCDEX_CORPUS_DIR;
const present = corpus !== undefined && Object.keys(REPOSITORIES).every((r) => existsSync(path.join(corpus, r))) && corpusDir !== undefined && existsSync(path.join(corpusDir, 'python'));
const reason =
  corpus === undefined
    ? 'no ../shared/corpus/realworld (set DOCDEX_REALWORLD_DIR)'
    : corpusDir === undefined || !existsSync(path.join(corpusDir, 'python'))
      ? 'DOCDEX_CORPUS_DIR does not hold the python site (run ../shared/bin/fetch-doc-corpus)'
      : `${corpus} lacks one of ${Object.keys(REPOSITORIES).join(', ')}`;

if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    describe('real-world docs repositories', () => {
      it('has the corpus (DOCDEX_REQUIRE_CORPUS=1)', () => {
        throw new Error(`The real-world repository tests cannot run: ${reason}.`);
      });
    });
  } else {
    console.log(`Skipping real-world repository tests: ${reason}.`);
  }
}

describe.runIf(present)('real-world docs repositories indexed with docdex add', () => {
  let db: TestDatabase;
  let temp: string;
  const jobs = new Map<Name, { includes_resolved: number; includes_unresolved: number; snippets_extracted: number }>();
  const sourceIds = new Map<Name, string>();

  beforeAll(async () => {
    // react.dev and fastapi from the corpus the peer benchmark shares (the same `docdex add file://…@tag --path`
    // through addLibraries, built once per run); vite, the smallest, through the real binary as a user types it.
    const shared = await sharedRealworldCorpus(corpusDir!, corpus!);
    db = shared.db;
    for (const r of shared.manifest.repositories) {
      const name = (r.library === 'react' ? 'react.dev' : r.library) as Name;
      if (name !== 'vite') sourceIds.set(name, r.sourceId);
    }
    temp = mkdtempSync(path.join(os.tmpdir(), 'docdex-realworld-'));
    const env = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
    const identity = ['-c', 'user.name=docdex test', '-c', 'user.email=test@example.invalid', '-c', 'commit.gpgsign=false', '-c', 'tag.gpgsign=false'];
    const dir = path.join(temp, 'vite');
    cpSync(path.join(corpus!, 'vite'), dir, { recursive: true });
    for (const args of [
      ['init', '-q'],
      ['add', '-A'],
      ['commit', '-qm', 'corpus'],
      ['tag', 'v1'],
    ])
      await execa('git', [...identity, ...args], { cwd: dir, env });
    const added = await runCli(['add', `file://${dir}@v1`, '--path', REPOSITORIES.vite, '--name', 'vite-cli', '--wait', '--json'], { env: db.env, timeout: 600_000 });
    expect(added.exitCode, String(added.stderr)).toBe(0);
    const { rows } = await db.pool.query<{ id: string }>(`SELECT id FROM sources WHERE name = 'vite-cli'`);
    sourceIds.set('vite', rows[0]!.id);
    for (const [name, id] of sourceIds) {
      const job = await db.pool.query(`SELECT includes_resolved, includes_unresolved, snippets_extracted FROM upload_jobs WHERE source_id = $1`, [id]);
      jobs.set(name, job.rows[0]);
      console.log(`${name}: ${JSON.stringify(job.rows[0])}`);
    }
  }, 1_800_000);

  afterAll(async () => {
    await db?.drop();
    if (temp) rmSync(temp, { recursive: true, force: true });
  });

  async function snippets(name: Name): Promise<Array<{ title: string; description: string; code: string; filename: string | null; language: string; source_url: string }>> {
    const { rows } = await db.pool.query(`SELECT sn.title, sn.description, sn.code, sn.filename, sn.language, sn.source_url FROM snippets sn WHERE sn.source_id = $1 AND sn.kind = 'snippet'`, [
      sourceIds.get(name),
    ]);
    return rows;
  }

  it('fastapi: the code its pages take from docs_src is indexed, and the one file outside the corpus is reported', async () => {
    const job = jobs.get('fastapi')!;
    expect(job.includes_resolved).toBeGreaterThanOrEqual(440);
    expect(job.includes_unresolved).toBeLessThanOrEqual(1);
    const all = await snippets('fastapi');
    expect(all.length).toBeGreaterThanOrEqual(650);
    expect(all.some((s) => s.code.includes('{* ../../docs_src'))).toBe(false);
    const cors = all.filter((s) => s.source_url.includes('/tutorial/cors.md'));
    expect(cors.some((s) => s.code.includes('CORSMiddleware') && s.language === 'python')).toBe(true);
    for (const s of all) expect(s.description).not.toMatch(/^\/{3,}|\s\/{3,}\s/);
  });

  it('react.dev: titles and anchors from {/*id*/} heading ids, Sandpack filenames, no component markup in text', async () => {
    const all = await snippets('react.dev');
    expect(all.length).toBeGreaterThan(2500);
    for (const s of all) {
      expect(s.title).not.toMatch(/\{\/|\{#/);
      expect(s.description).not.toMatch(/\{\/\*|<\/?(?:Sandpack|Pitfall|DeepDive|Intro|Note|Solution|Hint)\b/);
    }
    expect(all.filter((s) => s.filename !== null).length).toBeGreaterThan(500);
    const ref = all.find((s) => s.source_url.endsWith('/learn/referencing-values-with-refs.md#adding-a-ref-to-your-component'));
    expect(ref?.title).toBe('Adding a ref to your component | Referencing Values with Refs');
  });

  it('vite: the `<<<` import of the deploy workflow is a YAML snippet named by its label', async () => {
    expect(jobs.get('vite')).toMatchObject({ includes_resolved: 1, includes_unresolved: 0 });
    const all = await snippets('vite');
    const deploy = all.find((s) => s.filename === '.github/workflows/deploy.yml');
    expect(deploy).toMatchObject({ language: 'yaml' });
    expect(deploy?.code).toContain('actions/deploy-pages');
  });
});
