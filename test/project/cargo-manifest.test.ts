import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { readCargoProject } from '../../src/core/project/manifests/cargo.js';

/** Cargo.toml (a package, a workspace and its members) with Cargo.lock. */

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'manifests');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-cargo-manifest-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function project(files: Record<string, string>): string {
  const dir = mkdtempSync(path.join(scratch, 'p-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

describe('readCargoProject', () => {
  it('reads a workspace: member globs, exclude, inherited and renamed dependencies, Cargo.lock versions and directness', async () => {
    const result = await readCargoProject(path.join(FIXTURES, 'cargo-workspace'));
    expect(result?.files).toEqual(['Cargo.toml', 'crates/app/Cargo.toml', 'crates/core-lib/Cargo.toml', 'crates/macros/Cargo.toml', 'tools/xtask/Cargo.toml', 'Cargo.lock']);
    const rows = Object.fromEntries(result!.dependencies.map((d) => [`${d.name}@${d.version}`, [d.direct, d.range]]));
    expect(rows).toEqual({
      'anyhow@1.0.93': [true, '=1.0.93'],
      'cc@1.1.31': [true, '^1.1'],
      'clap@4.5.20': [true, '^4.5'],
      'libc@0.2.161': [true, '^0.2'],
      'mio@1.0.2': [false, null],
      'serde@1.0.215': [true, '^1.0.200'],
      // Renamed in the manifest (`json = { package = "serde_json" }`): the real crate.
      'serde_json@1.0.132': [true, '^1.0'],
      'syn@1.0.109': [false, null],
      'syn@2.0.87': [true, '^2'],
      'tempfile@3.13.0': [true, '^3'],
      'tokio@1.41.0': [true, '^1.40'],
    });
    expect(result!.dependencies.every((d) => d.ecosystem === 'crates' && d.manifest === 'Cargo.lock')).toBe(true);
    expect(result?.notes).toEqual([
      'Cargo.toml: workspace member ../escape is outside the project directory; not read',
      'crates/app/Cargo.toml: private-thing comes from another registry than crates.io; skipped',
    ]);
  });

  it('reads a single package without a lockfile: ranges in node-semver spelling, exact pins as versions', async () => {
    const result = await readCargoProject(path.join(FIXTURES, 'cargo-package'));
    expect(result?.files).toEqual(['Cargo.toml']);
    expect(result!.dependencies.map((d) => [d.name, d.version, d.range, d.direct])).toEqual([
      ['regex', null, '^1.11', true],
      ['rand', null, '>=0.8 <0.10', true],
      ['itoa', null, null, true],
    ]);
  });

  it('is null without a Cargo.toml', async () => {
    expect(await readCargoProject(project({ 'README.md': '' }))).toBeNull();
  });

  it('does not follow a member folder that is a symlink out of the project', async () => {
    const outside = project({ 'Cargo.toml': '[package]\nname = "evil"\n[dependencies]\nsecret = "1"\n' });
    const root = project({ 'Cargo.toml': '[workspace]\nmembers = ["crates/*", "linked"]\n', 'crates/a/Cargo.toml': '[package]\nname = "a"\n[dependencies]\nonce_cell = "1"\n' });
    symlinkSync(outside, path.join(root, 'crates', 'b'));
    symlinkSync(outside, path.join(root, 'linked'));
    await expect(readCargoProject(root)).rejects.toMatchObject({ code: 'manifest_invalid', message: 'Cannot read linked/Cargo.toml: it is a symlink to a file outside the project directory.' });
    rmSync(path.join(root, 'linked'));
    writeFileSync(path.join(root, 'Cargo.toml'), '[workspace]\nmembers = ["crates/*"]\n');
    expect((await readCargoProject(root))!.dependencies.map((d) => d.name)).toEqual(['once_cell']);
  });

  it('answers manifest_invalid naming the file and the entry', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ 'Cargo.toml': '[package\n' }, 'Cannot read Cargo.toml: it is not valid TOML (line 1'],
      [{ 'Cargo.toml': '[package]\nname = "x"\n[dependencies]\nserde = 1\n' }, 'dependencies.serde is neither a version requirement nor a table'],
      [{ 'Cargo.toml': '[package]\nname = "x"\n[dependencies]\nserde = { workspace = true }\n' }, 'has workspace = true, but [workspace.dependencies] has no serde'],
      [{ 'Cargo.toml': '[workspace]\nmembers = "crates/*"\n' }, 'workspace.members is not a list of strings'],
      [{ 'Cargo.toml': 'title = "no sections"\n' }, 'it has neither a [package] nor a [workspace] section'],
      [{ 'Cargo.toml': '[package]\nname = "x"\n', 'Cargo.lock': 'version = 4\n[[package]]\nname = "y"\n' }, 'Cannot read Cargo.lock: package "y" has no version'],
      [
        { 'Cargo.toml': '[workspace]\nmembers = ["m"]\n', 'm/Cargo.toml': '[package]\nname = "m"\n[dev-dependencies]\nx = { version = 2 }\n' },
        'Cannot read m/Cargo.toml: dev-dependencies.x.version is not a string',
      ],
    ];
    for (const [files, message] of cases) {
      await expect(readCargoProject(project(files))).rejects.toMatchObject({ code: 'manifest_invalid', message: expect.stringContaining(message) });
    }
  });
});
