import semver from 'semver';

/**
 * PyPI versions follow PEP 440, not semver. This covers what releases actually use: a release of any number
 * of parts (`2.32.3`, `2024.1`, `1.2.3.4`), pre-releases (`a1`, `b2`, `rc1`), post-releases (`.post1`) and
 * dev releases (`.dev0`), ordered as PEP 440 orders them. Ranges are written in semver syntax (`2`, `^2.31`,
 * `~2.32.0`) or as simple PEP 440 specifiers (`>=2.28,<3`, `~=2.28`, `==2.32.*`), matched on the first three
 * release parts. Epochs and local versions are rare on PyPI and are not ordered (an epoch release never
 * matches a range; it can still be asked for exactly).
 */

interface Pep440 {
  release: number[];
  /** 0 = a, 1 = b, 2 = rc */
  pre?: [number, number];
  post?: number;
  dev?: number;
}

const PATTERN = /^v?(\d+(?:\.\d+){0,9})(?:[-_.]?(a|alpha|b|beta|c|rc|pre|preview)[-_.]?(\d*))?(?:-(\d+)|[-_.]?(?:post|rev|r)[-_.]?(\d*))?(?:[-_.]?dev[-_.]?(\d*))?$/i;
const PRE_RANK: Record<string, number> = { a: 0, alpha: 0, b: 1, beta: 1, c: 2, rc: 2, pre: 2, preview: 2 };

export function parsePep440(text: string): Pep440 | undefined {
  const m = PATTERN.exec(text.trim());
  if (!m) return undefined;
  const release = m[1]!.split('.').map(Number);
  if (release.some((n) => !Number.isSafeInteger(n))) return undefined;
  const parsed: Pep440 = { release };
  if (m[2] !== undefined) parsed.pre = [PRE_RANK[m[2].toLowerCase()]!, Number(m[3] || 0)];
  if (m[4] !== undefined || m[5] !== undefined) parsed.post = Number(m[4] ?? (m[5] || 0));
  if (m[6] !== undefined) parsed.dev = Number(m[6] || 0);
  return parsed;
}

function compareNumbers(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/** PEP 440's sort key: a dev release sorts before its pre-releases, which sort before the release and its posts. */
function sortKey(v: Pep440): number[] {
  const pre = v.pre ?? (v.dev !== undefined && v.post === undefined ? [-1, 0] : [Infinity, 0]);
  return [...pre, v.post ?? -1, v.dev ?? Infinity];
}

export function comparePep440(a: Pep440, b: Pep440): number {
  return compareNumbers(a.release, b.release) || compareNumbers(sortKey(a), sortKey(b));
}

export function isPep440Prerelease(v: Pep440): boolean {
  return v.pre !== undefined || v.dev !== undefined;
}

/** The semver a version stands for in range matching: its first three release parts, and a prerelease tag. */
function asSemver(v: Pep440): string {
  const [major = 0, minor = 0, patch = 0] = v.release;
  const tag = v.pre ? `${['a', 'b', 'rc'][v.pre[0]]}.${v.pre[1]}` : v.dev !== undefined ? `dev.${v.dev}` : '';
  return `${major}.${minor}.${patch}${tag ? `-${tag}` : ''}`;
}

/** `~=X.Y` means `>=X.Y, ==X.*`; `==X.Y.*` means `X.Y.x`; commas separate clauses. Other text is semver already. */
function specifierToRange(requested: string): string | null {
  const clauses = requested.split(',').map((c) => c.trim());
  const translated = clauses.map((clause) => {
    const compatible = /^~=\s*(\d+(?:\.\d+)+)$/.exec(clause);
    if (compatible) {
      const parts = compatible[1]!.split('.');
      const upper = parts.slice(0, -1);
      upper[upper.length - 1] = String(Number(upper[upper.length - 1]) + 1);
      return `>=${compatible[1]} <${upper.join('.')}`;
    }
    const wildcard = /^==\s*(\d+(?:\.\d+)*)\.\*$/.exec(clause);
    if (wildcard) return `${wildcard[1]}.x`;
    return clause.replace(/^==\s*/, '=');
  });
  return semver.validRange(translated.join(' '));
}

/** The published PyPI version `requested` means (exactly, or the newest in its range), or undefined. */
export function pickPep440Version(published: readonly string[], requested: string): string | undefined {
  if (published.includes(requested)) return requested;
  const asked = parsePep440(requested);
  const parsed = published.map((text) => ({ text, v: parsePep440(text) })).filter((p): p is { text: string; v: Pep440 } => p.v !== undefined);
  if (asked) {
    const same = parsed.find((p) => comparePep440(p.v, asked) === 0 && p.v.release.length === asked.release.length);
    if (same) return same.text;
  }
  const range = specifierToRange(requested);
  if (range === null) return undefined;
  const wantsPre = /\d(a|b|rc|dev|-)/i.test(requested);
  const matches = parsed.filter((p) => (wantsPre || !isPep440Prerelease(p.v)) && semver.satisfies(asSemver(p.v), range, { includePrerelease: wantsPre }));
  return matches.sort((x, y) => comparePep440(y.v, x.v))[0]?.text;
}

/** Published PyPI versions, newest first, releases before pre-releases (versions it cannot parse last). */
export function newestPep440First(published: readonly string[]): string[] {
  const parsed = published.map((text) => ({ text, v: parsePep440(text) }));
  const known = parsed.filter((p): p is { text: string; v: Pep440 } => p.v !== undefined).sort((x, y) => comparePep440(y.v, x.v));
  return [...known.filter((p) => !isPep440Prerelease(p.v)), ...known.filter((p) => isPep440Prerelease(p.v))].map((p) => p.text);
}
