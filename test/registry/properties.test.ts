import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/core/errors.js';
import { readCrateDocument } from '../../src/core/registry/crates.js';
import { readGoInfo } from '../../src/core/registry/go.js';
import { pickTag } from '../../src/core/registry/index.js';
import type { ResolvedPackage } from '../../src/core/registry/index.js';
import { readNpmDocument } from '../../src/core/registry/npm.js';
import { pickPep440Version } from '../../src/core/registry/pep440.js';
import { choosePypiVersion, readPypiRelease } from '../../src/core/registry/pypi.js';
import { normaliseRepositoryUrl } from '../../src/core/registry/repository-url.js';
import { tagCandidates } from '../../src/core/registry/tags.js';
import { readmeEntryName } from '../../src/core/registry/tarball.js';
import { pickSemverVersion } from '../../src/core/registry/versions.js';

/**
 * Registry answers are outside input: any JSON gives a resolved package or a clear UserError, never a crash.
 * Repository URLs from registries come in every spelling; each normalises to one https URL or to nothing.
 */

const ANSWER_CODES = ['bad_gateway', 'package_not_found', 'version_not_found'];
const URL = 'http://127.0.0.1:1/doc';

function expectResultOrClearError(read: () => ResolvedPackage | string): void {
  let result: ResolvedPackage | string;
  try {
    result = read();
  } catch (error) {
    expect(error).toBeInstanceOf(UserError);
    expect(ANSWER_CODES).toContain((error as UserError).code);
    return;
  }
  if (typeof result === 'string') return;
  expect(typeof result.version).toBe('string');
  expect(typeof result.name).toBe('string');
  for (const link of [result.homepage, result.documentation, result.tarball, result.repository?.url]) {
    if (link !== undefined) expect(link).toMatch(/^https?:\/\/[^/@]+\//);
  }
  expect(result.repository?.directory ?? '').not.toMatch(/(^|\/)\.\.(\/|$)|^\//);
}

const text = fc.oneof(fc.string(), fc.constantFrom('git+https://github.com/o/r.git', 'github:o/r', 'https://docs.example.org', '../x', 'javascript:alert(1)', '1.0.0', '^1'));
const anyValue = fc.oneof(fc.jsonValue(), text);
const versionKey = fc.oneof(fc.constantFrom('1.0.0', '2.0.0-rc.1', '0.1.0', '1.2', 'latest', '2024.1', '1.0.0.post1', '__proto__'), fc.string({ maxLength: 8 }));

const npmDocument = fc.record(
  {
    name: anyValue,
    'dist-tags': fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), versionKey), anyValue),
    versions: fc.oneof(
      fc.dictionary(
        versionKey,
        fc.record(
          { repository: fc.oneof(anyValue, fc.record({ url: anyValue, directory: anyValue })), homepage: anyValue, dist: fc.oneof(anyValue, fc.record({ tarball: anyValue })) },
          { requiredKeys: [] },
        ),
      ),
      anyValue,
    ),
  },
  { requiredKeys: [] },
);

const pypiDocument = fc.record(
  {
    info: fc.oneof(
      fc.record(
        {
          name: anyValue,
          version: anyValue,
          home_page: anyValue,
          docs_url: anyValue,
          project_urls: fc.oneof(fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(text, fc.constant(null))), anyValue),
        },
        { requiredKeys: [] },
      ),
      anyValue,
    ),
    releases: fc.oneof(fc.dictionary(versionKey, fc.array(fc.record({ yanked: anyValue }, { requiredKeys: [] }), { maxLength: 2 })), anyValue),
  },
  { requiredKeys: [] },
);

const crateDocument = fc.record(
  {
    crate: fc.oneof(
      fc.record({ name: anyValue, max_stable_version: anyValue, max_version: anyValue, repository: anyValue, documentation: anyValue, homepage: anyValue }, { requiredKeys: [] }),
      anyValue,
    ),
    versions: fc.oneof(fc.array(fc.record({ num: fc.oneof(versionKey, anyValue), yanked: anyValue, repository: anyValue }, { requiredKeys: [] }), { maxLength: 5 }), anyValue),
  },
  { requiredKeys: [] },
);

const requested = fc.option(fc.oneof(versionKey, fc.constantFrom('1', '^1.0', '~2.0.0', '>=0', '~=1.0', '==1.*', 'next')), { nil: undefined });

describe('registry answers (properties)', () => {
  it('an npm package document, whatever its shape, gives a package or a clear error', () => {
    fc.assert(
      fc.property(fc.oneof(npmDocument, fc.jsonValue()), requested, (doc, version) => {
        expectResultOrClearError(() => readNpmDocument(doc, { ecosystem: 'npm', name: 'pkg', ...(version === undefined ? {} : { version }) }, URL));
      }),
      { numRuns: 400 },
    );
  });

  it('a PyPI release or project document, whatever its shape, gives a package, a version, or a clear error', () => {
    fc.assert(
      fc.property(fc.oneof(pypiDocument, fc.jsonValue()), requested, (doc, version) => {
        expectResultOrClearError(() => readPypiRelease(doc, URL));
        expectResultOrClearError(() => choosePypiVersion(doc, URL, 'pkg', version ?? '1'));
      }),
      { numRuns: 400 },
    );
  });

  it('a crates.io crate document, whatever its shape, gives a package or a clear error', () => {
    fc.assert(
      fc.property(fc.oneof(crateDocument, fc.jsonValue()), requested, (doc, version) => {
        expectResultOrClearError(() => readCrateDocument(doc, { ecosystem: 'crates', name: 'pkg', ...(version === undefined ? {} : { version }) }, URL));
      }),
      { numRuns: 400 },
    );
  });

  it('a Go proxy .info answer, whatever its shape, gives a package whose folder and tags stay inside the repository, or a clear error', () => {
    const goVersion = fc.oneof(fc.constantFrom('v1.2.3', 'v0.0.0-20240111152113-08a7c4d5e2a3', 'v2.0.0+incompatible', '1.2.3', 'v1'), fc.string({ maxLength: 12 }));
    const origin = fc.record(
      {
        VCS: fc.oneof(fc.constant('git'), anyValue),
        URL: anyValue,
        Subdir: fc.oneof(fc.constantFrom('sub', '../x', '/etc', 'a/../../b', 'tools/v2'), anyValue),
        Ref: fc.oneof(fc.constantFrom('refs/tags/v1.2.3', 'refs/heads/main'), anyValue),
        Hash: anyValue,
      },
      { requiredKeys: [] },
    );
    const info = fc.record({ Version: fc.oneof(goVersion, anyValue), Time: anyValue, Origin: fc.oneof(origin, anyValue) }, { requiredKeys: [] });
    const module = fc.constantFrom('github.com/o/r', 'github.com/o/r/sub/v2', 'gopkg.in/yaml.v3', 'golang.org/x/sync', 'example.com/m');
    fc.assert(
      fc.property(fc.oneof(info, fc.jsonValue()), module, fc.boolean(), (doc, name, publicProxy) => {
        expectResultOrClearError(() => {
          const resolved = readGoInfo(doc, name, URL, publicProxy);
          expect(resolved.version).toMatch(/^v\d+\.\d+\.\d+/);
          expect(resolved.tagCandidates).toContain(resolved.version.replace(/\+incompatible$/, ''));
          return resolved;
        });
      }),
      { numRuns: 400 },
    );
  });

  it('a chosen version is always one of the published ones', () => {
    fc.assert(
      fc.property(fc.array(versionKey, { maxLength: 8 }), requested, fc.option(versionKey, { nil: undefined }), (published, version, latest) => {
        const semverPick = pickSemverVersion(published, version, latest);
        if (semverPick !== undefined) expect(published).toContain(semverPick);
        const pep440Pick = pickPep440Version(published, version ?? '1');
        if (pep440Pick !== undefined) expect(published).toContain(pep440Pick);
      }),
    );
  });
});

const segment = fc.stringMatching(/^[A-Za-z0-9_][A-Za-z0-9_-]{0,15}$/).filter((s) => !/\.git$/i.test(s));

describe('repository URLs (properties)', () => {
  it('every spelling registries use for a GitHub repository gives the same https URL', () => {
    fc.assert(
      fc.property(segment, segment, (owner, repo) => {
        const expected = { url: `https://github.com/${owner}/${repo}` };
        const spellings = [
          `git+https://github.com/${owner}/${repo}.git`,
          `git://github.com/${owner}/${repo}.git`,
          `git+ssh://git@github.com/${owner}/${repo}.git`,
          `ssh://git@github.com/${owner}/${repo}.git`,
          `git@github.com:${owner}/${repo}.git`,
          `github:${owner}/${repo}`,
          `${owner}/${repo}`,
          `https://github.com/${owner}/${repo}`,
          `http://www.github.com/${owner}/${repo}/`,
          `https://user:secret@github.com/${owner}/${repo}.git#main`,
          `github.com/${owner}/${repo}`,
        ];
        for (const spelling of spellings) expect(normaliseRepositoryUrl(spelling), spelling).toEqual(expected);
        expect(normaliseRepositoryUrl(`https://github.com/${owner}/${repo}/tree/main/packages/${repo}`)).toEqual({ ...expected, directory: `packages/${repo}` });
        expect(normaliseRepositoryUrl(`https://gitlab.com/${owner}/sub/${repo}/-/tree/main/docs`)).toEqual({ url: `https://gitlab.com/${owner}/sub/${repo}`, directory: 'docs' });
      }),
    );
  });

  it('any string gives an http(s) URL without credentials or .git, stable when normalised again, or nothing', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.webUrl({ withQueryParameters: true, withFragments: true }),
          fc.webUrl().map((u) => `git+${u}.git`),
        ),
        (raw) => {
          const location = normaliseRepositoryUrl(raw);
          if (location === undefined) return;
          expect(location.url).toMatch(/^https?:\/\/[^/@?#]+\/[^?#]+$/);
          expect(location.url).not.toMatch(/\.git$/i);
          expect(normaliseRepositoryUrl(location.url)?.url).toBe(location.url);
          if (location.directory !== undefined) expect(location.directory.split('/')).not.toContain('..');
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('pickTag and tag candidates (properties)', () => {
  const tag = fc.oneof(fc.constantFrom('v1.2.3', '1.2.3', 'V1.2.3', 'pkg@1.2.3', 'refs/tags/v1.2.3', 'refs/tags/v1.2.3^{}'), fc.string({ maxLength: 12 }));

  it('picks a tag the remote has, the first candidate it has exactly, whatever the order of the remote list', () => {
    fc.assert(
      fc.property(fc.array(tag, { maxLength: 6 }), fc.array(tag, { maxLength: 10 }), (candidates, remote) => {
        const picked = pickTag(candidates, remote);
        const names = remote
          .map((r) =>
            r
              .trim()
              .replace(/^refs\/tags\//, '')
              .replace(/\^\{\}$/, ''),
          )
          .filter((n) => n !== '');
        if (picked !== undefined) expect(names).toContain(picked);
        const firstExact = candidates.find((c) => names.includes(c));
        if (firstExact !== undefined) expect(picked).toBe(firstExact);
        expect(pickTag(candidates, [...remote].reverse())).toBe(picked);
      }),
    );
  });

  it('lists v1.2.3, 1.2.3 and name@1.2.3 first; scoped names also bare', () => {
    expect(tagCandidates('react', '18.3.1').slice(0, 3)).toEqual(['v18.3.1', '18.3.1', 'react@18.3.1']);
    expect(tagCandidates('@s/p', '1.2.3').slice(0, 4)).toEqual(['v1.2.3', '1.2.3', '@s/p@1.2.3', 'p@1.2.3']);
    expect(pickTag(tagCandidates('@s/p', '1.2.3'), ['refs/tags/p@1.2.3', 'refs/tags/p@1.2.3^{}', 'refs/tags/v1.2.2'])).toBe('p@1.2.3');
    expect(pickTag(tagCandidates('x', '1.0.0'), ['V1.0.0'])).toBe('V1.0.0');
  });
});

describe('tarball entry names (properties)', () => {
  it('only <top folder>/README* with plain segments is taken for the README', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.constantFrom('package/README.md', '../README.md', 'package/../README', '/README', 'a/b/README.md', 'package/README.md/x')), (name) => {
        const filename = readmeEntryName(name);
        if (filename === undefined) return;
        expect(filename).toMatch(/^readme/i);
        expect(name.split('/')).toHaveLength(2);
        expect(name.split('/')).not.toContain('..');
        expect(name.startsWith('/')).toBe(false);
      }),
      { numRuns: 1000 },
    );
    expect(readmeEntryName('package/README.md')).toBe('README.md');
  });
});
