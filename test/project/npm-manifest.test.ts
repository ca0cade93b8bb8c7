import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { isUserError } from '../../src/core/errors.js';
import type { ProjectDependency } from '../../src/core/project/dependency.js';
import { parseBunLock, parsePackageJson, parsePackageLock } from '../../src/core/project/manifests/npm-lock.js';
import { readNpmProject } from '../../src/core/project/manifests/npm.js';
import { parsePnpmLock } from '../../src/core/project/manifests/pnpm-lock.js';
import { parseYarnLock } from '../../src/core/project/manifests/yarn-lock.js';

const FIXTURES = path.resolve('test/fixtures/projects');

function summary(deps: ProjectDependency[]): string[] {
  return deps.map((d) => `${d.direct ? 'direct' : 'transitive'} ${d.name}@${d.version ?? d.range} (${d.manifest})`).sort();
}

const LOCKED_DIRECT = ['@types/node@20.11.30', 'fsevents@2.3.3', 'lodash@4.17.21', 'semver@7.6.3'];
const TRANSITIVE = ['lru-cache@6.0.0', 'undici-types@5.26.5', 'yallist@4.0.0'];

function expected(lockfile: string, extraTransitive: string[] = []): string[] {
  return [...LOCKED_DIRECT.map((d) => `direct ${d} (${lockfile})`), 'direct react@>=18 (package.json)', ...[...TRANSITIVE, ...extraTransitive].map((d) => `transitive ${d} (${lockfile})`)].sort();
}

describe('readNpmProject', () => {
  it.each([
    ['npm-lock', 'package-lock.json', ['semver@6.3.1']],
    ['npm-lock-v1', 'package-lock.json', []],
    ['pnpm-v6', 'pnpm-lock.yaml', []],
    ['pnpm-v9', 'pnpm-lock.yaml', []],
    ['yarn-classic', 'yarn.lock', []],
    ['yarn-berry', 'yarn.lock', []],
    ['bun', 'bun.lock', ['semver@6.3.1']],
  ])('%s: exact versions from %s, direct and transitive, non-registry deps skipped', async (dir, lockfile, extra) => {
    const result = await readNpmProject(path.join(FIXTURES, dir));
    expect(result).not.toBeNull();
    expect(summary(result!.dependencies)).toEqual(expected(lockfile, extra));
    expect(result!.files).toEqual(['package.json', lockfile]);
    expect(result!.skipped!.map((s) => `${s.name}: ${s.reason.split(' (')[0]}`).sort()).toEqual(['gh-dep: a GitHub dependency', 'local-lib: a local path']);
  });

  it('without a lockfile, direct dependencies carry their ranges and no version', async () => {
    const result = await readNpmProject(path.join(FIXTURES, 'npm-nolock'));
    expect(result!.dependencies.every((d) => d.direct && d.version === null)).toBe(true);
    expect(summary(result!.dependencies)).toContain('direct semver@^7.6.0 (package.json)');
    expect(result!.files).toEqual(['package.json']);
  });

  const temp: string[] = [];
  afterAll(async () => Promise.all(temp.map((dir) => rm(dir, { recursive: true, force: true }))));

  async function project(files: Record<string, string>): Promise<string> {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-npm-'));
    temp.push(dir);
    for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, name), text);
    return dir;
  }

  it('is null without a package.json', async () => {
    expect(await readNpmProject(await project({}))).toBeNull();
  });

  it('a malformed lockfile is manifest_invalid naming the file', async () => {
    const dir = await project({ 'package.json': '{"dependencies":{"semver":"^7"}}', 'package-lock.json': '{"lockfileVersion": 3, "packages": {' });
    await expect(readNpmProject(dir)).rejects.toMatchObject({ code: 'manifest_invalid', message: expect.stringMatching(/^package-lock\.json is not a valid lockfile: not JSON/) });
  });

  it('a malformed pnpm lockfile names the file and what is wrong', async () => {
    const dir = await project({ 'package.json': '{}', 'pnpm-lock.yaml': "lockfileVersion: '9.0'\nimporters: [1, 2]\n" });
    await expect(readNpmProject(dir)).rejects.toMatchObject({ code: 'manifest_invalid', message: 'pnpm-lock.yaml is not a valid lockfile: "importers" is not a mapping.' });
  });

  it('a lockfile over the size cap is refused before it is read', async () => {
    const dir = await project({ 'package.json': '{}', 'yarn.lock': '' });
    await truncate(path.join(dir, 'yarn.lock'), 51 * 1024 * 1024);
    await expect(readNpmProject(dir)).rejects.toMatchObject({ code: 'manifest_invalid', message: 'yarn.lock is not a valid lockfile: it is larger than 50 MB.' });
  });

  it('a FIFO under a lockfile name is refused at once, never waited on', async () => {
    const dir = await project({ 'package.json': '{}' });
    execFileSync('mkfifo', [path.join(dir, 'pnpm-lock.yaml')]);
    await expect(readNpmProject(dir)).rejects.toMatchObject({ code: 'manifest_invalid', message: 'pnpm-lock.yaml is not a valid lockfile: it is not a regular file.' });
  });

  it('an npm: alias is indexed under the real package name', async () => {
    const dir = await project({
      'package.json': '{"dependencies":{"old-semver":"npm:semver@^6"}}',
      'package-lock.json': JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/old-semver': { name: 'semver', version: '6.3.1', resolved: 'https://r/semver-6.3.1.tgz' } } }),
    });
    const result = await readNpmProject(dir);
    expect(summary(result!.dependencies)).toEqual(['direct semver@6.3.1 (package-lock.json)']);
  });
});

function onlyManifestInvalid(parse: (text: string) => unknown, text: string): void {
  try {
    parse(text);
  } catch (error) {
    if (!isUserError(error) || error.code !== 'manifest_invalid') throw error;
  }
}

const PARSERS: [string, (text: string) => unknown][] = [
  ['package.json', parsePackageJson],
  ['package-lock.json', (text) => parsePackageLock(text)],
  ['pnpm-lock.yaml', parsePnpmLock],
  ['yarn.lock', (text) => parseYarnLock(text, [{ key: 'a', name: 'a', range: '^1' }])],
  ['bun.lock', (text) => parseBunLock(text)],
];

/** Text shaped like the formats (JSON and YAML values, yarn-like lines), so the property reaches past the first parse error. */
const shaped = fc.oneof(
  fc.string(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.dictionary(fc.string(), fc.jsonValue()).map((v) => JSON.stringify({ lockfileVersion: 3, packages: v, dependencies: v })),
  fc.dictionary(fc.string(), fc.jsonValue()).map((v) => JSON.stringify({ lockfileVersion: 1, dependencies: v })),
  fc.dictionary(fc.string(), fc.jsonValue()).map((v) => `lockfileVersion: '9.0'\nimporters:\n  .: ${JSON.stringify({ dependencies: v })}\npackages: ${JSON.stringify(v)}\n`),
  fc
    .array(fc.tuple(fc.string(), fc.string()), { maxLength: 8 })
    .map((lines) => lines.map(([k, v]) => `${JSON.stringify(k)}:\n  version ${JSON.stringify(v)}\n  resolution ${JSON.stringify(v)}`).join('\n')),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes).toString('latin1')),
);

describe.each(PARSERS)('%s parser on hostile input', (_name, parse) => {
  it('never throws anything but a manifest_invalid UserError', () => {
    fc.assert(
      fc.property(shaped, (text) => {
        onlyManifestInvalid(parse, text);
      }),
      { numRuns: 400 },
    );
  });
});
