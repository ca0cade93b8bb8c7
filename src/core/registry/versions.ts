import semver from 'semver';

/**
 * Choosing the one published version a request means: the exact version, the newest match of a semver range
 * (`18`, `^18.2`, `~1.2.1`; prereleases only when the range names one, as npm does), or the latest release.
 */

/** A request string's exact version as the registry spells it, or undefined. */
function exactMatch(published: readonly string[], requested: string): string | undefined {
  if (published.includes(requested)) return requested;
  const cleaned = semver.clean(requested);
  return cleaned !== null && published.includes(cleaned) ? cleaned : undefined;
}

/** The published version `requested` means for npm and crates.io, or undefined when none matches. */
export function pickSemverVersion(published: readonly string[], requested: string | undefined, latest: string | undefined): string | undefined {
  if (requested === undefined || requested === 'latest') {
    if (latest !== undefined && published.includes(latest)) return latest;
    return semver.maxSatisfying([...published], '*') ?? newestFirst(published)[0];
  }
  const exact = exactMatch(published, requested);
  if (exact !== undefined) return exact;
  const range = semver.validRange(requested);
  if (range === null) return undefined;
  return (
    semver.maxSatisfying(
      published.filter((v) => semver.valid(v) !== null),
      range,
    ) ?? undefined
  );
}

/** Published semver versions, newest first: stable releases before prereleases, for "the newest are …" lists. */
export function newestFirst(published: readonly string[]): string[] {
  const valid = published.filter((v) => semver.valid(v) !== null).sort(semver.rcompare);
  return [...valid.filter((v) => semver.prerelease(v) === null), ...valid.filter((v) => semver.prerelease(v) !== null)];
}
