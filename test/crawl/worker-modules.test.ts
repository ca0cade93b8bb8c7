import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

// Records every module the main thread of a process loads, written out when it exits.
const RECORDER = `
import module from 'node:module';
import { writeFileSync } from 'node:fs';
const loaded = [];
module.registerHooks({ load(url, context, next) { loaded.push(url); return next(url, context); } });
process.on('exit', () => writeFileSync(process.env.DOCDEX_TEST_LOADED, loaded.join('\\n')));
`;

/** The extractors' own parsers: a worker runs them in its extraction threads only. */
const EXTRACTOR_PACKAGES = ['htmlparser2', 'mdast-util-from-markdown', 'micromark', 'dom-serializer'];

describe("a worker's own thread (issue 52, crawl worker memory)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'docdex-worker-modules-'));
    writeFileSync(path.join(dir, 'recorder.mjs'), RECORDER);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('loads no extractor: the crawl and upload workers extract in their pool threads', async () => {
    const out = path.join(dir, 'loaded.txt');
    const workers = ['crawl/worker.js', 'upload/worker.js'].map((f) => pathToFileURL(path.join(ROOT, 'dist', 'core', f)).href);
    const result = await execa(
      process.execPath,
      ['--import', pathToFileURL(path.join(dir, 'recorder.mjs')).href, '--input-type=module', '-e', workers.map((w) => `await import(${JSON.stringify(w)});`).join('\n')],
      {
        env: { DOCDEX_TEST_LOADED: out, PATH: process.env.PATH ?? '' },
        extendEnv: false,
        reject: false,
        timeout: 60_000,
      },
    );
    expect(result.exitCode, String(result.stderr)).toBe(0);
    const loaded = readFileSync(out, 'utf8').split('\n');
    // The recorder saw the workers themselves, so an empty list cannot pass for a lean one.
    for (const worker of workers) expect(loaded).toContain(worker);
    const packages = new Set(loaded.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter(Boolean));
    expect(EXTRACTOR_PACKAGES.filter((p) => packages.has(p))).toEqual([]);
    expect(loaded.filter((u) => u.endsWith('/dist/core/extract/index.js'))).toEqual([]);
  });
});
