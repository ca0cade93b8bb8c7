import fc from 'fast-check';
import { stringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { parseCargoLock } from '../../src/core/project/manifests/cargo-lock.js';
import { parseCargoManifest } from '../../src/core/project/manifests/cargo-manifest.js';
import { parseGoMod } from '../../src/core/project/manifests/go.js';
import { parsePoetryLock, parseUvLock } from '../../src/core/project/manifests/python-locks.js';
import { parsePyproject } from '../../src/core/project/manifests/python-pyproject.js';
import { parseRequirementsText } from '../../src/core/project/manifests/python-requirements.js';

/** Hostile manifests: whatever the text, each parser returns or throws a manifest_invalid UserError, nothing else. */

const PARSERS: Record<string, (text: string) => unknown> = {
  'pyproject.toml': parsePyproject,
  'requirements.txt': (text) => parseRequirementsText(text, 'requirements.txt'),
  'poetry.lock': parsePoetryLock,
  'uv.lock': parseUvLock,
  'go.mod': parseGoMod,
  'Cargo.toml': (text) => parseCargoManifest('Cargo.toml', text),
  'Cargo.lock': (text) => parseCargoLock(text, new Set(['serde'])),
};

function onlyManifestInvalid(parse: (text: string) => unknown, text: string): void {
  try {
    parse(text);
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).code).toBe('manifest_invalid');
    expect((error as UserError).message.length).toBeLessThan(600);
  }
}

// Fragments of each format, so generated text reaches past the first syntax check.
const FRAGMENTS = [
  '[project]\n',
  'dependencies = [',
  '"requests>=2"',
  ']\n',
  '[tool.poetry.dependencies]\n',
  'python = "^3.10"\n',
  '[[package]]\n',
  'name = "x"\n',
  'version = "1.0"\n',
  'source = { virtual = "." }\n',
  'dependencies = [{ name = "y" }]\n',
  'require (\n',
  ')\n',
  'example.com/a v1.2.3 // indirect\n',
  'replace a.com/b => ./x\n',
  'replace a.com/b v1.0.0 => c.com/d v1.1.0\n',
  '[workspace]\nmembers = ["*"]\n',
  '[dependencies]\n',
  'serde = { workspace = true }\n',
  '-r other.txt\n',
  '-e .\n',
  'pkg==1.0 --hash=sha256:ab \\\n',
  '"',
  '`',
  '#',
  '//',
  '\n',
  '=',
];

const fragmentText = fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string({ maxLength: 12 })), { maxLength: 30 }).map((parts) => parts.join(''));

// TOML documents of arbitrary shape under the keys the readers look at.
const tomlValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 20 }),
    fc.integer(),
    fc.boolean(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(
      fc.constantFrom(
        'name',
        'version',
        'source',
        'dependencies',
        'workspace',
        'package',
        'path',
        'git',
        'virtual',
        'registry',
        'members',
        'include-group',
        'optional-dependencies',
        'dev-dependencies',
      ),
      tie('value'),
      { maxKeys: 4 },
    ),
  ),
})).value;

const tomlDocument = fc
  .dictionary(fc.constantFrom('project', 'tool', 'package', 'workspace', 'dependencies', 'dev-dependencies', 'target', 'dependency-groups', 'version'), tomlValue, { maxKeys: 5 })
  .map((document) => {
    try {
      return stringify(document);
    } catch {
      return '';
    }
  });

describe('manifest parsers on hostile input', () => {
  for (const [file, parse] of Object.entries(PARSERS)) {
    it(`${file}: arbitrary text only ever fails with manifest_invalid`, () => {
      fc.assert(
        fc.property(fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 200 }), fragmentText), (text) => onlyManifestInvalid(parse, text)),
        { numRuns: 300 },
      );
    });

    it(`${file}: TOML of any shape only ever fails with manifest_invalid`, () => {
      fc.assert(
        fc.property(tomlDocument, (text) => onlyManifestInvalid(parse, text)),
        { numRuns: 300 },
      );
    });
  }
});
