/**
 * The git tag that marks a release: projects spell it `v1.2.3`, `1.2.3`, or, in monorepos, `<name>@1.2.3`
 * (changesets, lerna) and `<name>-v1.2.3` (release-please, cargo-release). The candidates are tried against
 * the tags the remote actually has (`git ls-remote --tags`), in order.
 */

/** Tags that may name `version` of package `name`, most common spelling first. */
export function tagCandidates(name: string, version: string): string[] {
  const bare = name.startsWith('@') && name.includes('/') ? name.slice(name.indexOf('/') + 1) : undefined;
  const named = [name, ...(bare === undefined ? [] : [bare])];
  const short = bare ?? name;
  const candidates = [`v${version}`, version, ...named.map((n) => `${n}@${version}`), `${short}-v${version}`, `${short}-${version}`, `${short}/v${version}`];
  return [...new Set(candidates)];
}

/** `refs/tags/v1.2.3^{}` (ls-remote's peeled line) and `refs/tags/v1.2.3` both name the tag `v1.2.3`. */
function tagName(ref: string): string {
  return ref
    .trim()
    .replace(/^refs\/tags\//, '')
    .replace(/\^\{\}$/, '');
}

/**
 * The first candidate the remote has, spelled as the remote spells it: an exact match wins; failing any, a
 * match ignoring case (`V1.2.3`). Undefined when none of them is a tag there.
 */
export function pickTag(candidates: string[], remoteTags: string[]): string | undefined {
  const names = remoteTags.map(tagName).filter((t) => t !== '');
  const exact = new Set(names);
  const found = candidates.find((c) => exact.has(c));
  if (found !== undefined) return found;
  const folded = new Map<string, string>();
  for (const name of [...names].sort()) if (!folded.has(name.toLowerCase())) folded.set(name.toLowerCase(), name);
  for (const candidate of candidates) {
    const match = folded.get(candidate.toLowerCase());
    if (match !== undefined) return match;
  }
  return undefined;
}
