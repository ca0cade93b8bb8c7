/**
 * Which library a documentation site documents, and at which version, from what its start page says about
 * itself: its `<title>`, `og:site_name`, the titles of its OpenSearch description and of its links home, `<meta>` tags that name a
 * version (`nodejs.org:node-version`, `docsearch:version`), its generator, and a version in its URL's path.
 * "Index | Node.js v18.20.4 Documentation" is node@18.20.4, "PostgreSQL 15.20 Documentation" postgresql@15.20,
 * "json — Python 3.11.2 documentation" python@3.11.2. The name is the common one people type (`--source node`):
 * lower case, words joined by "-", without the version, "Documentation" and the like, or a ".js" ending.
 * Pure; every input is the site's own text, so anything is accepted and the answer is always a safe name.
 */

export interface SiteSignals {
  /** The page's `<title>` text. */
  title: string;
  /** `og:site_name` or `application-name`. */
  siteName: string | null;
  /** `<meta name="generator">`: "mkdocs-1.4.2, mkdocs-material-9.5.3", "Docusaurus v3.1.0", "rustdoc". */
  generator: string | null;
  /** Contents of `<meta>` tags whose name says version (`nodejs.org:node-version`, `docsearch:version`). */
  versions: readonly string[];
  /** Titles of OpenSearch description links: Sphinx writes "Search within Python 3.11.2 documentation". */
  searchTitles: readonly string[];
  /** Titles of links to the site's home page (`rel="home"`, DocBook's "Home" link): "PostgreSQL 15.20 Documentation". */
  homeTitles: readonly string[];
  /** The page's URL: a version in its path (`/3.12/`, `/v2.4.1/`, docs.rs's `/serde/1.0.197/`). */
  url: string;
}

export interface SiteIdentity {
  /** The common name: `node`, `python`, `postgresql`, `material-for-mkdocs`; '' when the site names none. */
  name: string;
  /** The version the site documents, '' when it states none. */
  version: string;
  /** The site's own title, as it gives it ("Node.js v18.20.4 Documentation"); '' when it has none. */
  title: string;
}

const MAX_NAME = 100;
const MAX_VERSION = 50;
const MAX_INPUT = 1000;

// Title separators between a page's and the site's part ("Page — Site", "Page | Site", "Page - Site"), and ": "
// between a name and its tagline ("Guava: Google Core Libraries for Java").
const SEPARATORS = /\s+[—–|·»-]\s+|\s+::\s+/u;
/** A site title longer than this many words is a tagline ("Rapidly build modern websites…"), not a name. */
const MAX_NAME_WORDS = 5;

/**
 * Words that say what kind of page it is, not whose: dropped from either end of the name ("Python 3.11.2
 * documentation", "Welcome to Flask", "The Rust Programming Language" keeps "rust-programming-language").
 */
const GENERIC = new Set([
  'a',
  'and',
  'api',
  'apis',
  'current',
  'dev',
  'developer',
  'developers',
  'doc',
  'docs',
  'documentation',
  'documents',
  'en',
  'english',
  'for',
  'guide',
  'guides',
  'handbook',
  'home',
  'index',
  'introduction',
  'latest',
  'main',
  'manual',
  'master',
  'of',
  'official',
  'online',
  'overview',
  'page',
  'reference',
  'release',
  'site',
  'stable',
  'the',
  'to',
  'user',
  'version',
  'welcome',
  'website',
]);

// A version as sites write it: 3.11.2, v18.20.4, 15.20, 2024.1, 3.0.x, 2.0.0-rc.1, 33.0.0-jre, v9; a plain
// number only right after a word ("Python 3"), never a year.
const DOTTED = String.raw`v?\d{1,6}(?:\.(?:\d{1,6}|x)){1,3}(?:[-+][0-9A-Za-z]+(?:\.[0-9A-Za-z]+)*)?|v\d{1,6}`;
const VERSION_IN_TEXT = new RegExp(String.raw`(?<![\p{L}\p{N}._-])(?:${DOTTED}|(?<=\p{L}\s)\d{1,3})(?![\p{L}\p{N}_]|\.\d)`, 'u');
/** A tag's whole content as a version ("v18.20.4", "2.4.1", "3"); "current" or "next" is none. */
const VERSION_ALONE = new RegExp(String.raw`^(?:${DOTTED}|\d{1,3})$`, 'u');

// Zero-width, bidi and other format characters, control characters: never part of a name.
const INVISIBLE = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;

function clean(text: string | null | undefined): string {
  if (typeof text !== 'string') return '';
  return text.slice(0, MAX_INPUT).normalize('NFKC').replace(INVISIBLE, '').replace(/\s+/g, ' ').trim();
}

/** A version label as stored: no "v", no ".x" ("3.0.x" is 3.0), bounded; '' for anything else. */
function versionLabel(raw: string): string {
  const text = raw
    .trim()
    .replace(/^v/i, '')
    .replace(/(\.x)+$/i, '');
  if (text === '' || text.length > MAX_VERSION || !/^\d/.test(text) || /\s/.test(text)) return '';
  return text;
}

/**
 * The first version written in `text`, and what names the library: the words before the version ("Java SE" of
 * "Java SE 17 & JDK 17"), else the text without it.
 */
function findVersion(text: string): { version: string; rest: string } {
  const match = VERSION_IN_TEXT.exec(text);
  const version = match ? versionLabel(match[0]) : '';
  if (!match || version === '') return { version: '', rest: text };
  const before = text.slice(0, match.index);
  return { version, rest: commonName(before) !== '' ? before : `${before} ${text.slice(match.index + match[0].length)}` };
}

/** Text as a common name: ".js" dropped, generic words dropped from both ends, lower case, joined by "-". */
function commonName(text: string): string {
  // A name with a tagline keeps the name ("guava: google core libraries for java").
  const head = text.toLowerCase().split(/:\s/u)[0] ?? '';
  const words = head
    .replace(/([\p{L}\p{N}])\.js\b/gu, '$1')
    .split(/[^\p{L}\p{N}.+#]+/u)
    .map((w) => w.replace(/^[.+#]+|\.+$/g, ''))
    .filter((w) => w !== '');
  while (words.length > 0 && GENERIC.has(words[0]!)) words.shift();
  while (words.length > 0 && (GENERIC.has(words.at(-1)!) || words.at(-1) === 'js')) words.pop();
  if (words.length === 0 || words.length > MAX_NAME_WORDS) return '';
  const name = words.join('-').slice(0, MAX_NAME).replace(/-+$/, '');
  // A name is never only digits: that is a version ("3.11.2 Documentation").
  return /\p{L}/u.test(name) ? name : '';
}

interface Candidate {
  text: string;
  /** The site's own title for people, when this candidate is one. */
  title: string;
}

/** rustdoc: "serde - Rust" and "Serialize in serde::ser - Rust" both document the crate serde. */
function rustdocCrate(title: string, generator: string): Candidate | null {
  const match = /^(?:.+? in )?([A-Za-z_][A-Za-z0-9_]*)(?:::\S+)? - Rust$/.exec(title);
  if (!match || !(generator.toLowerCase() === 'rustdoc' || title.endsWith(' - Rust'))) return null;
  return { text: match[1]!, title: match[1]! };
}

/** javadoc: "Overview (Guava: Google Core Libraries for Java 33.0.0-jre API)" names the library in parentheses. */
function parenthesised(title: string): Candidate | null {
  const match = /^[^()]{1,200}\(([^()]{2,200})\)$/.exec(title);
  return match ? { text: match[1]!, title: match[1]! } : null;
}

/** Where a site names itself, most trusted first. */
function candidates(signals: SiteSignals): Candidate[] {
  const title = clean(signals.title);
  const generator = clean(signals.generator);
  const list: Candidate[] = [];
  const rust = rustdocCrate(title, generator);
  if (rust) list.push(rust);
  const siteName = clean(signals.siteName);
  if (siteName) list.push({ text: siteName, title: siteName });
  for (const raw of signals.searchTitles.slice(0, 5)) {
    const text = clean(raw)
      .replace(/^search\s+(?:within\s+|in\s+)?/i, '')
      .replace(/\s+search$/i, '');
    if (text) list.push({ text, title: text });
  }
  for (const raw of signals.homeTitles.slice(0, 5)) {
    const text = clean(raw);
    if (text) list.push({ text, title: text });
  }
  const javadoc = parenthesised(title);
  if (javadoc) list.push(javadoc);
  // The site's part of a title is its last; a start page's title may be the site's name alone.
  const parts = title.split(SEPARATORS).filter((p) => p.trim() !== '');
  for (const part of parts.reverse()) list.push({ text: part.trim(), title: part.trim() });
  return list;
}

/** A version from the tags that name one, the generator when the site is the generator's own, or the URL's path. */
function versionFromElsewhere(signals: SiteSignals, name: string): string {
  for (const raw of signals.versions.slice(0, 10)) {
    const text = clean(raw);
    if (VERSION_ALONE.test(text)) return versionLabel(text);
  }
  // "mkdocs-1.4.2, mkdocs-material-9.5.3" on MkDocs' own site: the tool's version is the library's.
  for (const part of clean(signals.generator).split(/,\s*/)) {
    const match = /^(.+?)[\s-]+(v?\d[\w.+-]*)$/.exec(part);
    if (match && name !== '' && commonName(match[1]!) === name) return versionLabel(match[2]!);
  }
  return versionFromUrl(signals.url);
}

/** A path segment that is a version with a dot or a "v" (`/3.12/`, `/v2.4.1/`); a bare number is too often something else. */
function versionFromUrl(url: string): string {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return '';
  }
  for (const segment of path.split('/').slice(0, 8)) {
    if (/^v?\d{1,6}(\.(\d{1,6}|x)){1,3}$/.test(segment) || /^v\d{1,6}$/.test(segment)) return versionLabel(segment);
  }
  return '';
}

/**
 * The site's name and version from its own signals. The first signal that yields a name gives it (and the
 * version written beside it); otherwise the version comes from any part of the title, a version tag, the
 * generator or the URL. A site that names nothing gives an empty name, so the caller falls back to its host.
 */
export function siteIdentity(signals: SiteSignals): SiteIdentity {
  const list = candidates(signals).map((c) => ({ ...c, ...findVersion(c.text) }));
  const named = list.map((c) => commonName(c.rest));
  const chosen = named.findIndex((name) => name !== '');
  if (chosen < 0) return { name: '', version: list.find((c) => c.version !== '')?.version ?? versionFromElsewhere(signals, ''), title: list[0]?.title.slice(0, 200) ?? '' };
  const name = named[chosen]!;
  // The version beside the name, else beside the same name elsewhere ("Python" as og:site_name, "Python 3.11
  // documentation" in the title), else a version alone in a part of the title ("mylib - v1.2.3").
  const version = list[chosen]!.version || list.find((c, i) => c.version !== '' && (named[i] === name || named[i] === ''))?.version || versionFromElsewhere(signals, name);
  return { name, version, title: list[chosen]!.title.slice(0, 200) };
}
