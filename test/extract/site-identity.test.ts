import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { extractDocument } from '../../src/core/extract/index.js';
import { siteIdentity } from '../../src/core/extract/site-identity.js';
import type { SiteSignals } from '../../src/core/extract/site-identity.js';
import { parseLibraryRef, versionMatches } from '../../src/core/library-ref.js';

/**
 * Issue #49, item 2: a crawled site is named as people type it (python@3.11.2, node@18.20.4), from its title,
 * meta tags, generator and URL, for the title conventions of the common documentation generators.
 */

function signals(partial: Partial<SiteSignals>): SiteSignals {
  return { title: '', siteName: null, generator: null, versions: [], searchTitles: [], homeTitles: [], url: 'https://docs.example.org/', ...partial };
}

const CASES: Array<[string, Partial<SiteSignals>, { name: string; version: string }]> = [
  ['Sphinx, a page', { title: 'json — JSON encoder and decoder — Python 3.11.2 documentation' }, { name: 'python', version: '3.11.2' }],
  ['Sphinx, its index (the version alone in the title)', { title: '3.11.2 Documentation', searchTitles: ['Search within Python 3.11.2 documentation'] }, { name: 'python', version: '3.11.2' }],
  ['Sphinx on Read the Docs', { title: 'Welcome to Requests — Requests 2.31.0 documentation' }, { name: 'requests', version: '2.31.0' }],
  ['Sphinx, a version series', { title: 'Welcome to Flask — Flask Documentation (3.0.x)' }, { name: 'flask', version: '3.0' }],
  ['Read the Docs, the version in the path', { title: 'Quickstart — Gizmo documentation', url: 'https://gizmo.readthedocs.io/en/2.1.0/quickstart.html' }, { name: 'gizmo', version: '2.1.0' }],
  ["Node.js's own generator", { title: 'Index | Node.js v18.20.4 Documentation', versions: ['v18.20.4'] }, { name: 'node', version: '18.20.4' }],
  ['DocBook (PostgreSQL)', { title: 'PostgreSQL 15.20 Documentation', generator: 'DocBook XSL Stylesheets Vsnapshot' }, { name: 'postgresql', version: '15.20' }],
  ['DocBook, a page (its Home link names the site)', { title: 'SELECT', homeTitles: ['PostgreSQL 15.20 Documentation'] }, { name: 'postgresql', version: '15.20' }],
  ['MkDocs, its own site', { title: 'MkDocs', generator: 'mkdocs-1.4.2' }, { name: 'mkdocs', version: '1.4.2' }],
  ['MkDocs, a page', { title: 'Getting Started - MkDocs' }, { name: 'mkdocs', version: '' }],
  [
    'Material for MkDocs (the generator is the tool, not the library)',
    { title: 'Setup - Material for MkDocs', generator: 'mkdocs-1.5.3, mkdocs-material-9.5.3' },
    { name: 'material-for-mkdocs', version: '' },
  ],
  ['Docusaurus, its own site', { title: 'Introduction | Docusaurus', generator: 'Docusaurus v3.1.0', versions: ['current'] }, { name: 'docusaurus', version: '3.1.0' }],
  ['Docusaurus, a versioned site', { title: 'Intro | Acme Widgets', generator: 'Docusaurus v3.1.0', versions: ['2.4.1'] }, { name: 'acme-widgets', version: '2.4.1' }],
  ['Docusaurus, og:site_name', { title: 'Intro | Acme', siteName: 'Acme Widgets', versions: ['current'] }, { name: 'acme-widgets', version: '' }],
  ['VitePress', { title: 'Getting Started | Vite', generator: 'VitePress v1.0.0-rc.44' }, { name: 'vite', version: '' }],
  ['VitePress, its own site', { title: 'What is VitePress? | VitePress', generator: 'VitePress v1.0.0' }, { name: 'vitepress', version: '1.0.0' }],
  ['rustdoc on docs.rs, a crate', { title: 'serde - Rust', generator: 'rustdoc', url: 'https://docs.rs/serde/1.0.197/serde/' }, { name: 'serde', version: '1.0.197' }],
  ['rustdoc, an item', { title: 'Serialize in serde::ser - Rust', generator: 'rustdoc', url: 'https://docs.rs/serde/1.0.197/serde/ser/trait.Serialize.html' }, { name: 'serde', version: '1.0.197' }],
  ['javadoc', { title: 'Overview (Guava: Google Core Libraries for Java 33.0.0-jre API)' }, { name: 'guava', version: '33.0.0-jre' }],
  ['javadoc, the JDK', { title: 'String (Java SE 17 & JDK 17)' }, { name: 'java-se', version: '17' }],
  ['TypeDoc', { title: 'mylib - v1.2.3' }, { name: 'mylib', version: '1.2.3' }],
  ['a tagline after the name', { title: 'Tailwind CSS - Rapidly build modern websites without ever leaving your HTML.' }, { name: 'tailwind-css', version: '' }],
  ['a title with nothing else', { title: 'Widget Docs' }, { name: 'widget', version: '' }],
  ['nothing at all', { title: '' }, { name: '', version: '' }],
];

describe('siteIdentity', () => {
  it.each(CASES)('%s', (_label, input, expected) => {
    expect(siteIdentity(signals(input))).toMatchObject(expected);
  });

  it('gives versions that the library references people type select (python@3.11, node@18)', () => {
    const python = siteIdentity(signals(CASES[0]![1]));
    const node = siteIdentity(signals(CASES.find(([label]) => label.startsWith('Node.js'))![1]));
    for (const [identity, typed] of [
      [python, 'python@3.11'],
      [node, 'node@18'],
    ] as const) {
      const ref = parseLibraryRef(typed);
      expect(ref.kind === 'name' && ref.name === identity.name && ref.version !== null && versionMatches(identity.version, ref.version)).toBe(true);
    }
  });
});

const corpus = process.env.DOCDEX_CORPUS_DIR;
const SITES: Array<[string, string, { name: string; version: string }]> = [
  ['python', 'index.html', { name: 'python', version: '3.11.2' }],
  ['python', 'library/json.html', { name: 'python', version: '3.11.2' }],
  ['node', 'index.html', { name: 'node', version: '18.20.4' }],
  ['node', 'fs.html', { name: 'node', version: '18.20.4' }],
  ['postgres', 'index.html', { name: 'postgresql', version: '15.20' }],
  ['postgres', 'sql-select.html', { name: 'postgresql', version: '15.20' }],
  ['mkdocs', 'index.html', { name: 'mkdocs', version: '' }],
];
const present = Boolean(corpus) && SITES.every(([site, file]) => existsSync(path.join(corpus!, site, file)));
if (!present) {
  if (process.env.DOCDEX_REQUIRE_CORPUS === '1') {
    it('the real documentation corpus is present (DOCDEX_REQUIRE_CORPUS=1)', () => {
      throw new Error('The corpus site identity tests cannot run: DOCDEX_CORPUS_DIR lacks the Python, Node.js, PostgreSQL or MkDocs pages.');
    });
  } else {
    console.log('Skipping the corpus site identity tests: DOCDEX_CORPUS_DIR is not set or lacks the Debian HTML docs.');
  }
}

describe.skipIf(!present)('the Debian HTML docs name themselves', () => {
  it.each(SITES)('%s/%s', (site, file, expected) => {
    const body = readFileSync(path.join(corpus!, site, file));
    const { page } = extractDocument({ url: `http://127.0.0.1:8000/${file}`, contentType: 'text/html', body });
    expect(page.site).toMatchObject(expected);
  });
});

const text = fc.oneof(fc.string({ maxLength: 300 }), fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ unit: 'binary', maxLength: 300 }));
const anySignals = fc.record({
  title: text,
  siteName: fc.option(text),
  generator: fc.option(text),
  versions: fc.array(text, { maxLength: 4 }),
  searchTitles: fc.array(text, { maxLength: 4 }),
  homeTitles: fc.array(text, { maxLength: 4 }),
  url: fc.oneof(fc.webUrl({ withQueryParameters: true }), text),
});

describe('siteIdentity on any input (property)', () => {
  it('never throws, and gives a name and version fit to be a library reference', () => {
    fc.assert(
      fc.property(anySignals, (input) => {
        const { name, version, title } = siteIdentity(input);
        expect(name.length).toBeLessThanOrEqual(100);
        expect(name).toBe(name.toLowerCase());
        expect(name).toMatch(/^(?:[\p{L}\p{N}.+#]+(?:-[\p{L}\p{N}.+#]+)*)?$/u);
        if (name !== '') expect(name).toMatch(/\p{L}/u);
        expect(version.length).toBeLessThanOrEqual(50);
        expect(version).toMatch(/^(?:\d\S*)?$/);
        expect(title.length).toBeLessThanOrEqual(200);
        if (name !== '') {
          const ref = parseLibraryRef(version === '' ? name : `${name}@${version}`);
          expect(ref).toMatchObject({ kind: 'name', name });
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads back any name and version written in the common title forms', () => {
    const word = fc.stringMatching(/^[a-z]{3,10}$/).filter((w) => siteIdentity(signals({ title: w })).name === w);
    const version = fc.tuple(fc.nat(99), fc.nat(99), fc.nat(99)).map((parts) => parts.join('.'));
    const form = fc.constantFrom(
      (n: string, v: string) => `${n} ${v} Documentation`,
      (n: string, v: string) => `Index | ${n} v${v} Documentation`,
      (n: string, v: string) => `intro — ${n} ${v} documentation`,
      (n: string, v: string) => `Getting started - ${n} v${v}`,
      (n: string, v: string) => `Overview (${n} ${v} API)`,
    );
    fc.assert(
      fc.property(word, version, form, (w, v, make) => {
        const display = w[0]!.toUpperCase() + w.slice(1);
        expect(siteIdentity(signals({ title: make(display, v) }))).toMatchObject({ name: w, version: v });
      }),
      { numRuns: 500 },
    );
  });
});
