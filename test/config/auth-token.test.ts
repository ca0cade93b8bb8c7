import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatAuthTokenEntry, parseAuthTokenEntry, parseAuthTokens } from '../../src/core/auth-token.js';
import type { AuthToken } from '../../src/core/auth-token.js';
import { ConfigError, MIN_TOKEN_LENGTH, loadConfig } from '../../src/core/config.js';
import { createScopedTokenChecker } from '../../src/daemon/auth.js';

/** MCP_AUTH_TOKEN(S) entries with an optional `:read`/`:full` scope (core/auth-token.ts has the rule). */

// What a list entry can hold: no comma (the list separator), no surrounding spaces (trimmed).
const entryText = fc.string({ minLength: 1, maxLength: 60 }).map((s) => s.replaceAll(',', '').trim());
const token = fc.oneof(entryText, fc.constantFrom('abc:read', 'x:full', 'a:b:c', ':read', 'read', ':', 'tok:reader'));
const scoped = fc.record({ token, scope: fc.constantFrom('full' as const, 'read' as const) });

describe('parseAuthTokenEntry', () => {
  it('reads examples as documented', () => {
    expect(parseAuthTokenEntry('abc123:read')).toEqual({ token: 'abc123', scope: 'read' });
    expect(parseAuthTokenEntry('abc123')).toEqual({ token: 'abc123', scope: 'full' });
    expect(parseAuthTokenEntry('abc123:full')).toEqual({ token: 'abc123', scope: 'full' });
    expect(parseAuthTokenEntry('a:b:c')).toEqual({ token: 'a:b:c', scope: 'full' });
    expect(parseAuthTokenEntry('abc:reader')).toEqual({ token: 'abc:reader', scope: 'full' });
    expect(parseAuthTokenEntry('abc:read:full')).toEqual({ token: 'abc:read', scope: 'full' });
    expect(parseAuthTokenEntry('abc:READ')).toEqual({ token: 'abc:READ', scope: 'full' });
  });

  it('reads back any token with any scope once the scope is written after it', () => {
    fc.assert(
      fc.property(scoped, (t) => {
        expect(parseAuthTokenEntry(formatAuthTokenEntry(t))).toEqual(t);
      }),
    );
  });

  it('takes any entry without a scope suffix whole, with full access, and never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (entry) => {
        const parsed = parseAuthTokenEntry(entry);
        if (entry.endsWith(':read') || entry.endsWith(':full')) expect(parsed.token).toBe(entry.slice(0, -5));
        else expect(parsed).toEqual({ token: entry, scope: 'full' });
      }),
    );
  });

  it('keeps each token once, and refuses one token given two scopes', () => {
    fc.assert(
      fc.property(fc.array(scoped, { maxLength: 8 }), (entries) => {
        const scopes = new Map<string, Set<string>>();
        for (const e of entries) scopes.set(e.token, (scopes.get(e.token) ?? new Set()).add(e.scope));
        const conflicting = [...scopes.values()].some((s) => s.size > 1);
        const run = () => parseAuthTokens(entries.map(formatAuthTokenEntry));
        if (conflicting) expect(run).toThrow(/two scopes/);
        else expect(run().map((t) => t.token)).toEqual([...scopes.keys()]);
      }),
    );
  });
});

describe('createScopedTokenChecker', () => {
  it('answers the scope of the token presented, and nothing for any other string', () => {
    fc.assert(
      fc.property(fc.uniqueArray(scoped, { selector: (t) => t.token, maxLength: 6 }), fc.string({ maxLength: 40 }), (tokens: AuthToken[], other) => {
        const check = createScopedTokenChecker(tokens);
        for (const t of tokens) expect(check(t.token)).toBe(t.scope);
        if (!tokens.some((t) => t.token === other)) expect(check(other)).toBeUndefined();
        expect(check(undefined)).toBeUndefined();
      }),
    );
  });
});

describe('MCP_AUTH_TOKENS scopes in loadConfig', () => {
  const full = 'f'.repeat(MIN_TOKEN_LENGTH);
  const read = 'r'.repeat(MIN_TOKEN_LENGTH);

  it('gives :read entries read access and the rest full access', () => {
    const config = loadConfig({ MCP_AUTH_ENABLED: 'true', MCP_AUTH_TOKEN: full, MCP_AUTH_TOKENS: `${read}:read, ${full}` });
    expect(config.mcpAuth.tokens).toEqual([
      { token: full, scope: 'full' },
      { token: read, scope: 'read' },
    ]);
  });

  it('measures the token without its scope, and refuses a token given two scopes without echoing it', () => {
    expect(() => loadConfig({ MCP_AUTH_TOKENS: `${'s'.repeat(MIN_TOKEN_LENGTH - 5)}:read` })).toThrow(/at least 32 characters/);
    let error: unknown;
    try {
      loadConfig({ MCP_AUTH_TOKEN: full, MCP_AUTH_TOKENS: `${full}:read` });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toMatch(/two scopes/);
    expect((error as ConfigError).message).not.toContain(full);
    expect((error as ConfigError).exitCode).toBe(2);
  });

  it('reads MCP_READ_ONLY as a boolean', () => {
    expect(loadConfig({ MCP_READ_ONLY: 'true' }).mcp.readOnly).toBe(true);
    expect(() => loadConfig({ MCP_READ_ONLY: 'maybe' })).toThrow(/MCP_READ_ONLY/);
  });
});
