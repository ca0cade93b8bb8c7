import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { parseGoMod, readGoModule } from '../../src/core/project/manifests/go.js';

/** go.mod: require lines and blocks, `// indirect`, replace directives, the directives that name no dependency. */

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'manifests');
const scratch = mkdtempSync(path.join(os.tmpdir(), 'docdex-go-manifest-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function invalid(text: string): UserError {
  let error: unknown;
  try {
    parseGoMod(text);
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(UserError);
  expect((error as UserError).code).toBe('manifest_invalid');
  return error as UserError;
}

describe('readGoModule', () => {
  it('reads require lines and blocks, marks // indirect ones transitive and applies replace directives', async () => {
    const result = await readGoModule(path.join(FIXTURES, 'go-module'));
    expect(result?.files).toEqual(['go.mod']);
    expect(result!.dependencies.map((d) => [d.name, d.version, d.direct])).toEqual([
      ['github.com/BurntSushi/toml', 'v1.4.0', true],
      ['github.com/spf13/cobra', 'v1.8.1', true],
      // replace without a version: every version of x/sync becomes v0.9.0.
      ['golang.org/x/sync', 'v0.9.0', false],
      // replace of one version by another module.
      ['github.com/new/logger', 'v1.2.0', true],
      ['gopkg.in/yaml.v3', 'v3.0.1', false],
      ['github.com/pkg/errors', 'v0.9.1+incompatible', false],
      ['golang.org/x/text', 'v0.0.0-20240111152113-08a7c4d5e2a3', true],
      ['github.com/google/uuid', 'v1.6.0', true],
      ['github.com/inconshreveable/mousetrap', 'v1.1.0', false],
      ['github.com/spf13/pflag', 'v1.0.5', false],
    ]);
    expect(result!.dependencies.every((d) => d.ecosystem === 'go' && d.range === null && d.manifest === 'go.mod')).toBe(true);
    expect(result?.notes).toEqual(['go.mod: github.com/example/shared v0.3.0 is replaced by the local folder ../shared; skipped']);
  });

  it('applies a version-specific replacement only to that version, and reads quoted paths', () => {
    const { dependencies } = parseGoMod('module m\nrequire "example.com/a" v1.0.0\nrequire `example.com/b` v2.0.0\nreplace example.com/a v0.9.0 => example.com/c v1.0.0\n');
    expect(dependencies.map((d) => `${d.name}@${d.version}`)).toEqual(['example.com/a@v1.0.0', 'example.com/b@v2.0.0']);
  });

  it('is null without a go.mod', async () => {
    expect(await readGoModule(mkdtempSync(path.join(scratch, 'empty-')))).toBeNull();
  });

  it('answers manifest_invalid with the line for malformed files', async () => {
    expect(invalid('module m\nrequire (\n  example.com/a v1.0.0\n').message).toBe('Cannot read go.mod: line 2: the require block is never closed.');
    expect(invalid('module m\nrequire example.com/a 1.0.0\n').message).toBe('Cannot read go.mod: line 2: "1.0.0" is not a module version (v1.2.3).');
    expect(invalid('module m\nrequire example.com/a\n').message).toContain('line 2: a require directive reads');
    expect(invalid('modul m\n').message).toContain('line 1: unknown directive "modul"');
    expect(invalid('require "example.com/a v1.0.0\n').message).toContain('unterminated quoted string');
    expect(invalid('replace a.com/x => b.com/y\n').message).toContain('line 1: "" is not a module version');
    expect(invalid('require ../evil v1.0.0\n').message).toContain('is not a module path');
    const dir = mkdtempSync(path.join(scratch, 'bad-'));
    writeFileSync(path.join(dir, 'go.mod'), 'require (\n');
    await expect(readGoModule(dir)).rejects.toMatchObject({ code: 'manifest_invalid' });
  });
});
