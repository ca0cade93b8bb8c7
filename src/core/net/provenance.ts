/**
 * Who named a URL, a git remote or a path, which decides what it may reach (SECURITY.md, "What the crawler may
 * reach"). The permission travels with what was named, never with the caller: a command the local user runs
 * also fetches what a registry, a lockfile, a `.docdex.yml`, a page or a pack names, and those get nothing of
 * the user's permission.
 *
 * - `user`: the local user typed it, as a `docdex` argument or in the dashboard. It may also reach loopback
 *   (your own localhost docs), and a git remote may be a local path, `file://` or ssh.
 * - `third_party`: anyone or anything else named it: a REST or MCP caller, a registry's answer, a project's
 *   manifests and `.docdex.yml`, a page, a pack. Public addresses only, plus CRAWL_ALLOW_HOSTS.
 *
 * A value derived from a named one (a package's homepage, a repository's tags) is `third_party`. A stored URL
 * keeps the provenance it was stored with (`sources.typed_by_user`); asking again never raises it.
 */
export type Provenance = 'user' | 'third_party';

/** Whether what was named so gets the local user's permission: loopback, and local or ssh git remotes. */
export function typedByUser(provenance: Provenance): boolean {
  return provenance === 'user';
}

/**
 * The provenance of a stored URL when it is fetched again (a recrawl, a resume, a re-checkout): the user's only
 * when the local user stored it and the local user asks again.
 */
export function askedAgain(stored: boolean, askedBy: Provenance): Provenance {
  return stored && askedBy === 'user' ? 'user' : 'third_party';
}

/**
 * Whether `url` is on the site of a URL the user typed: its origin, or its http/https twin on the default ports
 * (as a crawl's scope counts them). The user's permission reaches no further: a redirect elsewhere was named by
 * the server.
 */
export function onTypedSite(url: URL, typed: URL): boolean {
  return url.origin === typed.origin || (url.port === '' && typed.port === '' && url.hostname === typed.hostname);
}
