import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import type { ProjectDependency } from '../../src/core/project/dependency.js';
import { readPythonProject } from '../../src/core/project/manifests/python.js';

/** pyproject.toml (PEP 621, PEP 735, Poetry), requirements files, uv.lock and poetry.lock, from fixture projects. */

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'manifests');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-python-manifests-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function project(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(path.join(scratch, 'p-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

function summary(dependencies: ProjectDependency[]): Record<string, [string | null, string | null, boolean, string]> {
  return Object.fromEntries(dependencies.map((d) => [`${d.name}@${d.version ?? ''}`, [d.version, d.range, d.direct, d.manifest]]));
}

async function invalid(root: string): Promise<UserError> {
  const error = await readPythonProject(root).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UserError);
  expect((error as UserError).code).toBe('manifest_invalid');
  return error as UserError;
}

describe('readPythonProject', () => {
  it('reads a uv project: the root package’s dependencies, extras and dev groups are direct, git packages skipped', async () => {
    const result = await readPythonProject(path.join(FIXTURES, 'python-uv'));
    expect(result?.files).toEqual(['pyproject.toml', 'uv.lock']);
    expect(summary(result!.dependencies)).toEqual({
      'anyio@4.6.2.post1': ['4.6.2.post1', null, false, 'uv.lock'],
      'click@8.1.7': ['8.1.7', '>=8.1', true, 'uv.lock'],
      'httpx@0.27.2': ['0.27.2', '>=0.27', true, 'uv.lock'],
      'idna@3.10': ['3.10', null, false, 'uv.lock'],
      'pydantic@2.9.2': ['2.9.2', '>=2.9,<3', true, 'uv.lock'],
      'email-validator@2.2.0': ['2.2.0', null, false, 'uv.lock'],
      'pytest@8.3.3': ['8.3.3', '>=8.3', true, 'uv.lock'],
      'ruff@0.7.1': ['0.7.1', '==0.7.1', true, 'uv.lock'],
      'sniffio@1.3.1': ['1.3.1', null, false, 'uv.lock'],
    });
    expect(result!.dependencies.every((d) => d.ecosystem === 'pypi')).toBe(true);
  });

  it('leaves out what [tool.uv.sources] takes from git, a path, a URL or the workspace, locked or not', async () => {
    const pyproject = [
      '[project]',
      'name = "app"',
      'version = "0.1.0"',
      'dependencies = ["my_lib", "local-tool", "torch>=2", "tinyparse>=1"]',
      '',
      '[tool.uv.sources]',
      'My-Lib = { git = "https://github.com/acme/my-lib", rev = "abc123" }',
      'local-tool = [{ path = "../local-tool", marker = "sys_platform == \'linux\'" }]',
      'torch = { index = "pytorch" }',
      '',
    ].join('\n');
    const lock = [
      'version = 1',
      '',
      '[[package]]',
      'name = "app"',
      'version = "0.1.0"',
      'source = { virtual = "." }',
      'dependencies = [{ name = "my-lib" }, { name = "tinyparse" }]',
      '',
      '[[package]]',
      'name = "my-lib"',
      'version = "0.3.0"',
      'source = { git = "https://github.com/acme/my-lib?rev=abc123#abc1234567890abc1234567890abc1234567890" }',
      '',
      '[[package]]',
      'name = "tinyparse"',
      'version = "1.4.0"',
      'source = { registry = "https://pypi.org/simple" }',
      '',
    ].join('\n');
    const result = await readPythonProject(project({ 'pyproject.toml': pyproject, 'uv.lock': lock }));
    // Without the sources table, my-lib (locked from git) came back as a range-less PyPI package: its newest release.
    expect(summary(result!.dependencies)).toEqual({ 'tinyparse@1.4.0': ['1.4.0', '>=1', true, 'uv.lock'], 'torch@': [null, '>=2', true, 'pyproject.toml'] });
    const bad = await invalid(project({ 'pyproject.toml': '[project]\nname = "x"\n[tool]\nuv = { sources = 3 }\n' }));
    expect(bad.message).toMatch(/\[tool\.uv\.sources\] is not a table/);
  });

  it('reads a Poetry project: direct means named in pyproject.toml; python, path and directory packages are no dependencies', async () => {
    const result = await readPythonProject(path.join(FIXTURES, 'python-poetry'));
    expect(result?.files).toEqual(['pyproject.toml', 'poetry.lock']);
    expect(summary(result!.dependencies)).toEqual({
      'certifi@2024.8.30': ['2024.8.30', null, false, 'poetry.lock'],
      'flask@3.0.3': ['3.0.3', '3.0.3', true, 'poetry.lock'],
      'numpy@1.26.4': ['1.26.4', '<2', true, 'poetry.lock'],
      'pytest@8.3.3': ['8.3.3', null, true, 'poetry.lock'],
      'requests@2.32.3': ['2.32.3', '^2.31', true, 'poetry.lock'],
      'werkzeug@3.0.4': ['3.0.4', null, false, 'poetry.lock'],
    });
  });

  it('reads requirements files: includes inside the project only, once each; -e, URLs, paths and options skipped; == pins are versions', async () => {
    const result = await readPythonProject(path.join(FIXTURES, 'python-requirements'));
    expect(result?.files).toEqual(['requirements-dev.txt', 'requirements.txt', 'reqs/base.txt', 'reqs/more/deep.txt']);
    expect(summary(result!.dependencies)).toEqual({
      'pytest@': [null, '~=8.3', true, 'requirements-dev.txt'],
      'black@24.10.0': ['24.10.0', '==24.10.0', true, 'requirements-dev.txt'],
      'django@': [null, '>=4.2,<5.0', true, 'requirements.txt'],
      'requests@2.32.3': ['2.32.3', '==2.32.3', true, 'requirements.txt'],
      'zope-interface@': [null, '==7.1.*', true, 'reqs/more/deep.txt'],
      'typing-extensions@': [null, '>=4.12', true, 'reqs/base.txt'],
    });
    expect(result?.notes).toEqual(['requirements.txt line 11: -r ../outside.txt leaves the project directory; not followed']);
  });

  it('takes an editable root and workspace members of uv.lock as the project’s own packages', async () => {
    const lock = [
      'version = 1',
      'requires-python = ">=3.11"',
      '[manifest]\nmembers = ["app", "lib"]',
      '[[package]]\nname = "App"\nversion = "1.0.0"\nsource = { editable = "." }\ndependencies = [{ name = "lib" }, { name = "Typing_Extensions" }]',
      '[[package]]\nname = "lib"\nversion = "0.1.0"\nsource = { editable = "packages/lib" }\ndependencies = [{ name = "attrs" }]',
      '[[package]]\nname = "attrs"\nversion = "24.2.0"\nsource = { registry = "https://pypi.org/simple" }',
      '[[package]]\nname = "typing-extensions"\nversion = "4.12.2"\nsource = { registry = "https://pypi.org/simple" }',
      '[[package]]\nname = "six"\nversion = "1.16.0"\nsource = { registry = "https://pypi.org/simple" }',
    ].join('\n\n');
    const result = await readPythonProject(project({ 'uv.lock': lock, 'pyproject.toml': '[tool.poetry.dev-dependencies]\nmypy = "^1.11"\n' }));
    expect(result!.dependencies.map((d) => [d.name, d.version, d.direct])).toEqual([
      ['attrs', '24.2.0', true],
      ['typing-extensions', '4.12.2', true],
      ['six', '1.16.0', false],
      ['mypy', null, true],
    ]);
  });

  it('caps how deep includes are followed', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 8; i++) files[i === 0 ? 'requirements.txt' : `r${i}.txt`] = `-r r${i + 1}.txt\npkg${i}\n`;
    const result = await readPythonProject(project(files));
    expect(result!.dependencies.map((d) => d.name).sort()).toEqual(['pkg0', 'pkg1', 'pkg2', 'pkg3', 'pkg4', 'pkg5']);
    expect(result?.notes).toEqual(['r5.txt line 1: -r r6.txt is nested more than 5 deep; not followed']);
  });

  it('is null for a directory without Python manifests', async () => {
    expect(await readPythonProject(project({ 'README.md': '# nothing' }))).toBeNull();
  });

  it('answers manifest_invalid naming the file and what is wrong', async () => {
    expect((await invalid(project({ 'pyproject.toml': '[project\nname = 1' }))).message).toMatch(/^Cannot read pyproject\.toml: it is not valid TOML \(line 1/);
    expect((await invalid(project({ 'pyproject.toml': '[project]\ndependencies = "requests"' }))).message).toContain('project.dependencies is not a list');
    expect((await invalid(project({ 'pyproject.toml': '[project]\ndependencies = ["requests >>> 2"]' }))).message).toContain('project.dependencies[0] "requests >>> 2" is not a PEP 508 requirement');
    expect((await invalid(project({ 'requirements.txt': 'ok\nnot a requirement!\n' }))).message).toContain('requirements.txt: line 2');
    expect((await invalid(project({ 'uv.lock': 'version = 1\n[[package]]\nname = "x"\n' }))).message).toBe('Cannot read uv.lock: package "x" has no version.');
    expect((await invalid(project({ 'poetry.lock': 'package = 3' }))).message).toContain('poetry.lock');
    expect((await invalid(project({ 'requirements.txt': Buffer.from([0x61, 0xff, 0xfe, 0x0a]) }))).message).toContain('not UTF-8');
  });

  it('refuses a manifest that is a symlink out of the project, and an include that is one', async () => {
    const outside = project({ 'secret.txt': 'leaked==1.0\n' });
    const root = project({});
    symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'requirements.txt'));
    expect((await invalid(root)).message).toContain('symlink to a file outside the project');
    const other = project({ 'requirements.txt': '-r inc.txt\n' });
    symlinkSync(path.join(outside, 'secret.txt'), path.join(other, 'inc.txt'));
    expect((await invalid(other)).message).toMatch(/^Cannot read inc\.txt: it is a symlink/);
  });

  it('follows a symlink that stays inside the project', async () => {
    const root = project({ 'deps/real.txt': 'attrs==24.2.0\n' });
    symlinkSync(path.join(root, 'deps', 'real.txt'), path.join(root, 'requirements.txt'));
    expect((await readPythonProject(root))!.dependencies.map((d) => `${d.name}@${d.version}`)).toEqual(['attrs@24.2.0']);
  });

  it('copies of the fixtures read the same from another place', async () => {
    const copy = path.join(scratch, 'uv-copy');
    cpSync(path.join(FIXTURES, 'python-uv'), copy, { recursive: true });
    expect((await readPythonProject(copy))!.dependencies).toHaveLength(9);
  });
});
