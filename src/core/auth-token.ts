/**
 * The REST/MCP bearer tokens (MCP_AUTH_TOKEN, MCP_AUTH_TOKENS) and what each may do.
 *
 * An entry is a token, optionally followed by `:read` or `:full`. Only the entry's last `:`-separated part is
 * looked at, and only those two words are scopes: `abc:read` is the token `abc` with read access, `abc:full`
 * the token `abc` with full access, and anything else (`abc`, `a:b:c`, `abc:reader`) is the whole entry as a
 * token with full access. A token that itself ends in `:read` or `:full` is written with an explicit scope
 * after it (`abc:read:full` is the token `abc:read` with full access), so every entry has one reading.
 */

/** `full`: every tool and route the token's access level opens. `read`: nothing that changes anything. */
export type TokenScope = 'full' | 'read';

export interface AuthToken {
  token: string;
  scope: TokenScope;
}

const SCOPE_SUFFIXES: ReadonlyArray<[string, TokenScope]> = [
  [':read', 'read'],
  [':full', 'full'],
];

/** One configured entry → its token and scope. Pure; never throws. */
export function parseAuthTokenEntry(entry: string): AuthToken {
  for (const [suffix, scope] of SCOPE_SUFFIXES) {
    if (entry.endsWith(suffix)) return { token: entry.slice(0, -suffix.length), scope };
  }
  return { token: entry, scope: 'full' };
}

/** The entry that `parseAuthTokenEntry` reads back as `token` with `scope`, whatever the token contains. */
export function formatAuthTokenEntry({ token, scope }: AuthToken): string {
  return `${token}:${scope}`;
}

/** Thrown when one token is configured with two scopes: which one was meant cannot be known. */
export class TokenScopeConflict extends Error {
  constructor() {
    super('the same token is listed with two scopes (read and full)');
  }
}

/** The configured entries as distinct tokens, in first-seen order. Throws TokenScopeConflict. */
export function parseAuthTokens(entries: readonly string[]): AuthToken[] {
  const byToken = new Map<string, AuthToken>();
  for (const entry of entries) {
    const parsed = parseAuthTokenEntry(entry);
    const known = byToken.get(parsed.token);
    if (known && known.scope !== parsed.scope) throw new TokenScopeConflict();
    if (!known) byToken.set(parsed.token, parsed);
  }
  return [...byToken.values()];
}
