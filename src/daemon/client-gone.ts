import type { FastifyReply } from 'fastify';

/**
 * Aborts when the client goes away before its answer is sent, so that work still waiting for its turn (a
 * queued search, core/search/shared.ts) is not done for nobody.
 */
export function clientGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}
