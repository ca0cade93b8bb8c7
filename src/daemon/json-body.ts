import type { FastifyInstance } from 'fastify';
import { UserError } from '../core/errors.js';

/**
 * JSON bodies nested deeper than this are refused with 400 before they are parsed. No docdex request nests
 * beyond a handful of levels; a body of ten thousand `[` parses, but every recursive walk over it later
 * (JSON.stringify of crawl metadata, validation, logging) overflowed the stack and answered 500.
 */
export const MAX_JSON_DEPTH = 64;

/** True when the JSON text opens more than `max` arrays or objects inside each other. Linear; never parses. */
export function jsonNestingExceeds(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

export function tooDeepError(): UserError {
  return new UserError(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, { code: 'bad_request', hint: 'Send a flatter document.' });
}

/**
 * Fastify's own JSON parser (with its __proto__ and constructor checks), behind the nesting check. Registered
 * on the root instance, so every route's body goes through it; the MCP plugin has its own (mcp/http.ts).
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (jsonNestingExceeds(text)) {
      done(tooDeepError(), undefined);
      return;
    }
    void parse(request, text, done);
  });
}
