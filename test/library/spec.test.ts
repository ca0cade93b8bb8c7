import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { parseAddRequest, parseLibrarySpec, refProblem } from '../../src/core/library-spec.js';

describe('library specs', () => {
  it.each([
    ['npm:react@18.3.1', { kind: 'package', ecosystem: 'npm', name: 'react', version: '18.3.1' }],
    ['npm:@scope/pkg', { kind: 'package', ecosystem: 'npm', name: '@scope/pkg' }],
    ['npm:@scope/pkg@^2.1', { kind: 'package', ecosystem: 'npm', name: '@scope/pkg', version: '^2.1' }],
    ['npm:left-pad@latest', { kind: 'package', ecosystem: 'npm', name: 'left-pad' }],
    ['pypi:requests@2.32.3', { kind: 'package', ecosystem: 'pypi', name: 'requests', version: '2.32.3' }],
    ['crates:serde@1', { kind: 'package', ecosystem: 'crates', name: 'serde', version: '1' }],
    ['https://docs.python.org/3/', { kind: 'url', url: 'https://docs.python.org/3/' }],
    ['https://www.npmjs.com/package/@scope/pkg', { kind: 'url', url: 'https://www.npmjs.com/package/@scope/pkg' }],
    ['https://github.com/acme/widgets', { kind: 'git', remote: 'https://github.com/acme/widgets', transport: 'https' }],
    ['https://github.com/acme/widgets@v1.2.0', { kind: 'git', remote: 'https://github.com/acme/widgets', ref: 'v1.2.0', transport: 'https' }],
    ['http://127.0.0.1:8080/repo.git@main', { kind: 'git', remote: 'http://127.0.0.1:8080/repo.git', ref: 'main', transport: 'http' }],
    ['git@github.com:acme/widgets.git@release/2.x', { kind: 'git', remote: 'git@github.com:acme/widgets.git', ref: 'release/2.x', transport: 'ssh' }],
    ['ssh://git@host/acme/w.git', { kind: 'git', remote: 'ssh://git@host/acme/w.git', transport: 'ssh' }],
    ['file:///srv/repos/acme@v1.0.0', { kind: 'git', remote: 'file:///srv/repos/acme', ref: 'v1.0.0', transport: 'file' }],
    ['./acme', { kind: 'git', remote: './acme', transport: 'local' }],
    ['/srv/acme@0123abc', { kind: 'git', remote: '/srv/acme', ref: '0123abc', transport: 'local' }],
  ])('%s', (spec, expected) => {
    expect(parseLibrarySpec(spec)).toMatchObject(expected);
  });

  it.each([
    ['', 'empty'],
    ['react@18', 'neither a URL'],
    ['npm:', 'not a valid npm package name'],
    ['npm:React', 'not a valid npm package name'],
    ['npm:react@', 'version after @ is empty'],
    ['npm:react@not a range', 'spaces'],
    ['crates:serde@>>1', 'semver range'],
    ['https://user:tok@github.com/acme/w.git', 'credentials in the URL'],
    ['https://github.com/acme/w@--upload-pack=x', 'not a valid git ref'],
    ['./acme@../../etc', 'not a valid git ref'],
    ['-c core.pager=x', 'spaces'],
    ['--upload-pack=x', 'starts with "-"'],
    ['ftp://example.com/x', 'scheme "ftp"'],
  ])('refuses %j (%s)', (spec, why) => {
    expect(() => parseLibrarySpec(spec)).toThrow(why);
    try {
      parseLibrarySpec(spec);
    } catch (error) {
      expect((error as UserError).code).toBe('invalid_library_spec');
      expect((error as UserError).hint).toMatch(/npm:react@18.3.1/);
    }
  });

  it('any text is a spec or a UserError, never another throw; a git ref is never an option', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          fc.constantFrom('npm:', 'pypi:', 'crates:', 'https://github.com/', 'git@h:', 'file://', './').chain((p) => fc.string({ maxLength: 60 }).map((s) => p + s)),
        ),
        (text) => {
          try {
            const spec = parseLibrarySpec(text);
            if (spec.kind === 'git' && spec.ref !== undefined) expect(refProblem(spec.ref)).toBeNull();
            if (spec.kind === 'git') expect(spec.remote.startsWith('-')).toBe(false);
          } catch (error) {
            expect(error).toBeInstanceOf(UserError);
          }
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('an add request: one job per spec; a name or version only with one spec; paths stay inside the repository', () => {
    expect(parseAddRequest({ specs: ['npm:a', 'pypi:b'] }).specs).toHaveLength(2);
    expect(parseAddRequest({ specs: ['./r'], path: ['docs/'] }).maxRepoMb).toBe(500);
    expect(() => parseAddRequest({ specs: ['npm:a', 'npm:b'], name: 'x' })).toThrow(/one spec at a time/);
    expect(() => parseAddRequest({ specs: ['./r'], path: ['../x'] })).toThrow(/inside the repository/);
    expect(() => parseAddRequest({ specs: [] })).toThrow(/at least one spec/);
    expect(() => parseAddRequest({ specs: ['npm:a'], bogus: 1 })).toThrow(/Invalid add request/);
    fc.assert(
      fc.property(fc.anything(), (body) => {
        try {
          parseAddRequest(body);
        } catch (error) {
          expect(error).toBeInstanceOf(UserError);
        }
      }),
      { numRuns: 500 },
    );
  });
});
