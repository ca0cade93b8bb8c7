import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '../core/errors.js';
import { findIllFormedText, illFormedTextMessage } from '../core/well-formed.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route answers ill-formed text in its own dialect (the MCP JSON-RPC transports: each tool names the
     * argument itself, core/mcp/tool.ts), so the daemon-wide check leaves its body alone.
     */
    ownTextCheck?: boolean;
  }
}

/** A field's name as a reader writes it: `title`, `metadata.key`, `start_urls[2]`. */
function fieldName(path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? p : `.${p}`)).join('');
}

/** A JSON pointer to the field, as the validation errors' details give paths (`/title`). */
function pointer(path: ReadonlyArray<string | number>): string {
  return path.map((p) => `/${String(p).replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

const PARTS = [
  ['body', (r: FastifyRequest) => r.body],
  ['querystring', (r: FastifyRequest) => r.query],
  ['params', (r: FastifyRequest) => r.params],
] as const;

/**
 * Every route's body, query string and path parameters are checked for lone surrogates before any validator or
 * handler sees them (a daemon-wide preValidation hook, so no route's schema can leave a field out): 422
 * validation_error naming the field. Routes with their own check opt out with `config.ownTextCheck`.
 */
export function installWellFormedInput(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    const own = request.routeOptions.config.ownTextCheck === true;
    for (const [part, read] of PARTS) {
      if (own && part === 'body') continue;
      const found = findIllFormedText(read(request));
      if (found === null) continue;
      const field = found.path.length === 0 ? `the ${part}` : fieldName(found.path);
      throw new ValidationError(`Invalid request ${part}: ${illFormedTextMessage(field)}`, {
        details: [{ path: pointer(found.path), message: 'lone UTF-16 surrogate', keyword: 'wellFormed' }],
      });
    }
  });
}
