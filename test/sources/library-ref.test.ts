import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { UserError } from '../../src/core/errors.js';
import { ValidationError } from '../../src/core/errors.js';
import { formatLibraryRef, latestVersionFirst, libraryRefSchema, parseLibraryRef, semverOf, versionMatches, versionSpec } from '../../src/core/library-ref.js';
import { addSpecFor, selectVersion, VersionNotIndexedError } from '../../src/core/sources/resolve.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('parseLibraryRef', () => {
  it('reads names, exact versions, majors, ranges, scoped names and ids', () => {
    expect(parseLibraryRef('react')).toEqual({ kind: 'name', name: 'react', version: null });
    expect(parseLibraryRef(' react@18.3.1 ')).toEqual({ kind: 'name', name: 'react', version: { text: '18.3.1', range: '18.3.1' } });
    expect(parseLibraryRef('react@18')).toMatchObject({ name: 'react', version: { text: '18', range: '>=18.0.0 <19.0.0-0' } });
    expect(parseLibraryRef('react@^18.2')).toMatchObject({ version: { text: '^18.2', range: '>=18.2.0 <19.0.0-0' } });
    expect(parseLibraryRef('react@~18.2.1')).toMatchObject({ version: { text: '~18.2.1', range: '>=18.2.1 <18.3.0-0' } });
    expect(parseLibraryRef('@scope/pkg@1.2')).toMatchObject({ name: '@scope/pkg', version: { text: '1.2' } });
    expect(parseLibraryRef('@scope/pkg')).toEqual({ kind: 'name', name: '@scope/pkg', version: null });
    expect(parseLibraryRef('django@main')).toMatchObject({ name: 'django', version: { text: 'main', range: null } });
    expect(parseLibraryRef(ID.toUpperCase())).toEqual({ kind: 'id', id: ID });
    expect(formatLibraryRef(parseLibraryRef('@scope/pkg@^1.2'))).toBe('@scope/pkg@^1.2');
  });

  it('refuses what cannot name a library with a clear ValidationError', () => {
    for (const bad of ['', '   ', 'react@', 'react@  ', '@', 'a\nb', `x@${'1'.repeat(101)}`, 'y'.repeat(201)]) {
      expect(() => parseLibraryRef(bad), JSON.stringify(bad)).toThrow(ValidationError);
    }
    expect(libraryRefSchema.safeParse('react@').success).toBe(false);
    expect(libraryRefSchema.parse('react@18')).toMatchObject({ name: 'react' });
  });

  it('property: any string parses or is a ValidationError, never another throw', () => {
    const pieces = fc.oneof(fc.string(), fc.constantFrom('@', '^', '~', '.', '/', '||', ' ', '\u2028', 'x', '*', '-rc.1', 'v'), fc.nat().map(String));
    const texts = fc.oneof(
      fc.string({ maxLength: 400 }),
      fc.string({ unit: 'grapheme', maxLength: 50 }),
      fc.array(pieces, { maxLength: 12 }).map((p) => p.join('')),
    );
    fc.assert(
      fc.property(texts, (text) => {
        try {
          const ref = parseLibraryRef(text);
          if (ref.kind === 'name') {
            expect(ref.name.length).toBeGreaterThan(0);
            // What a parse yields parses back to itself.
            expect(parseLibraryRef(formatLibraryRef(ref))).toEqual(ref);
          }
        } catch (error) {
          expect(error).toBeInstanceOf(ValidationError);
          expect((error as Error).message.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe('versions', () => {
  it('reads plain release numbers as semver, and labels not as numbers', () => {
    expect(semverOf('3.12')?.version).toBe('3.12.0');
    expect(semverOf('v1.2.3')?.version).toBe('1.2.3');
    expect(semverOf('19.0.0-rc.1')?.version).toBe('19.0.0-rc.1');
    for (const label of ['main', 'abc1234', 'latest', '', '2.0.0rc1']) expect(semverOf(label), label).toBeNull();
    expect(versionMatches('18.3.1', versionSpec('18'))).toBe(true);
    expect(versionMatches('v18.3.1', versionSpec('^18.2'))).toBe(true);
    expect(versionMatches('19.0.0', versionSpec('18'))).toBe(false);
    expect(versionMatches('abc1234', versionSpec('1234'))).toBe(false);
    expect(versionMatches('main', versionSpec('main'))).toBe(true);
  });

  it('orders the latest first: semver, then labels by date', () => {
    const rows = [
      { version: '9.0.0' },
      { version: 'main', last_crawled_at: new Date('2026-01-02') },
      { version: '19.0.0' },
      { version: '', created_at: new Date('2020-01-01') },
      { version: '3.12' },
      { version: 'dev', last_crawled_at: new Date('2026-03-01') },
      { version: '19.0.0-rc.1' },
    ];
    expect(rows.sort(latestVersionFirst).map((r) => r.version)).toEqual(['19.0.0', '19.0.0-rc.1', '9.0.0', '3.12', 'dev', 'main', '']);
  });

  it('property: the comparator is a total order (antisymmetric, transitive)', () => {
    const version = fc.oneof(
      fc.constantFrom('1', '1.0', '1.0.0', 'v1.0.0', '2.0.0-rc.1', 'main', '', 'abc1234'),
      fc.string({ maxLength: 8 }),
      fc.tuple(fc.nat(30), fc.nat(30), fc.nat(30)).map((t) => t.join('.')),
    );
    const row = fc.record({ version, last_crawled_at: fc.option(fc.date({ noInvalidDate: true }), { nil: null }) });
    fc.assert(
      fc.property(row, row, row, (a, b, c) => {
        expect(Math.sign(latestVersionFirst(a, b))).toBe(-Math.sign(latestVersionFirst(b, a)) || 0);
        if (latestVersionFirst(a, b) <= 0 && latestVersionFirst(b, c) <= 0) expect(latestVersionFirst(a, c)).toBeLessThanOrEqual(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('selects the asked version or says it is not indexed, never another one', () => {
    const versions = [
      { id: 'b', name: 'lib', version: '1.3.0' },
      { id: 'a', name: 'lib', version: '1.2.5' },
      { id: 'm', name: 'lib', version: 'main' },
    ];
    expect(selectVersion(versions, null).id).toBe('b');
    expect(selectVersion(versions, versionSpec('1')).id).toBe('b');
    expect(selectVersion(versions, versionSpec('~1.2')).id).toBe('a');
    expect(selectVersion(versions, versionSpec('main')).id).toBe('m');
    expect(selectVersion(versions, versionSpec('latest')).id).toBe('b');
    let error: unknown;
    try {
      selectVersion(versions, versionSpec('3'));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VersionNotIndexedError);
    const e = error as UserError;
    expect(e.message).toBe('lib@3 is not indexed; indexed versions: 1.3.0, 1.2.5, main.');
    expect(e).toMatchObject({ code: 'version_not_indexed', status: 404, details: [{ name: 'lib', requested: '3', indexed: ['1.3.0', '1.2.5', 'main'] }] });
    expect(e.hint).toContain('docdex add <its package (npm:lib@3), repository URL@tag, or docs URL>');
  });

  it('says how to index a version from the recorded origin', () => {
    expect(addSpecFor('18.2.0', [{ metadata: { origin: 'npm:react@18.3.1' } }])).toBe('npm:react@18.2.0');
    expect(addSpecFor('2', [{ metadata: {} }, { metadata: { origin: 'npm:@scope/pkg' } }])).toBe('npm:@scope/pkg@2');
    expect(addSpecFor('v2', [{ metadata: { origin: 'git@host:org/acme.git' } }])).toBe('git@host:org/acme.git@v2');
    expect(addSpecFor('1.0', [{}])).toBeNull();
  });
});
