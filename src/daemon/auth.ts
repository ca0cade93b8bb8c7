import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AuthToken, TokenScope } from '../core/auth-token.js';
import { sendError } from './errors.js';

/**
 * Bearer tokens compared in constant time, answering with the matching token's scope (undefined: no match).
 * Both sides are hashed first so the comparison has a fixed length and leaks neither the token's length nor a
 * matching prefix; every configured token is always checked, whichever matches.
 */
export function createScopedTokenChecker(tokens: readonly AuthToken[]): (presented: string | undefined) => TokenScope | undefined {
  const digests = tokens.map((t) => ({ digest: createHash('sha256').update(t.token).digest(), scope: t.scope }));
  return (presented) => {
    if (presented === undefined) return undefined;
    const candidate = createHash('sha256').update(presented).digest();
    let found: TokenScope | undefined;
    for (const { digest, scope } of digests) {
      const match = timingSafeEqual(digest, candidate);
      found = match ? scope : found;
    }
    return found;
  };
}

/** A checker for tokens that carry no scope (the manager token, tests): true when one matches. */
export function createTokenChecker(tokens: readonly string[]): (presented: string | undefined) => boolean {
  const check = createScopedTokenChecker(tokens.map((token) => ({ token, scope: 'full' })));
  return (presented) => check(presented) !== undefined;
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function rejectUnauthorized(reply: FastifyReply, realm = 'docdex', message = 'Missing or invalid bearer token: send "Authorization: Bearer <token>".'): FastifyReply {
  void reply.header('WWW-Authenticate', `Bearer realm="${realm}"`);
  return sendError(reply, 'unauthorized', message);
}

/**
 * The 401 of a route that returns a secret (`secret` access, the manager token): it names the one kind of token
 * that opens it, since neither API_AUTH being off nor holding the manager token does (SECURITY.md says why).
 */
export const SECRET_ROUTE_UNAUTHORIZED =
  'This route returns a secret and needs a full REST/MCP token (an MCP_AUTH_TOKENS entry without :read) as "Authorization: Bearer <token>", even on loopback with API_AUTH off; ' +
  'the manager token itself is not accepted. Without configured tokens nothing reads it over HTTP: on this host, `docdex manager token` reads it from the database.';
