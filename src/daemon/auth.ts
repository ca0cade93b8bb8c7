import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendError } from './errors.js';

/**
 * Bearer tokens compared in constant time. Both sides are hashed first so the comparison has a fixed length
 * and leaks neither the token's length nor a matching prefix; every configured token is always checked.
 */
export function createTokenChecker(tokens: readonly string[]): (presented: string | undefined) => boolean {
  const digests = tokens.map((t) => createHash('sha256').update(t).digest());
  return (presented) => {
    if (presented === undefined) return false;
    const candidate = createHash('sha256').update(presented).digest();
    let ok = false;
    for (const d of digests) ok = timingSafeEqual(d, candidate) || ok;
    return ok;
  };
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function rejectUnauthorized(reply: FastifyReply, realm = 'docdex'): FastifyReply {
  void reply.header('WWW-Authenticate', `Bearer realm="${realm}"`);
  return sendError(reply, 'unauthorized', 'Missing or invalid bearer token: send "Authorization: Bearer <token>".');
}
