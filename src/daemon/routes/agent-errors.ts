import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { ValidationError } from '../../core/errors.js';
import { sendError } from '../errors.js';

/**
 * The agent manager's statuses for bad input (spec: Errors, "Invalid request body: 400"): an invalid body,
 * query or parameter answers 400 `bad_request` on every agent route (/api/settings and /api/internal), not
 * the 422 the docs-index API uses. Install on the plugin scope that holds the routes; every other error
 * goes on to the daemon's handler.
 */
export function answerBadInputWith400(scope: FastifyInstance, more?: (error: FastifyError, reply: FastifyReply) => FastifyReply | undefined): void {
  scope.setErrorHandler((error: FastifyError, _request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const details = error.validation.map((v) => ({ path: v.instancePath, message: v.message }));
      const first = error.validation[0];
      return sendError(reply, 'bad_request', `Invalid request ${error.validationContext ?? ''} ${first?.instancePath ?? ''}: ${first?.message ?? 'validation failed'}`.replace(/\s+/g, ' '), details);
    }
    if (error instanceof ValidationError) return sendError(reply, 'bad_request', error.hint ? `${error.message} ${error.hint}` : error.message, error.details ?? []);
    const answered = more?.(error, reply);
    if (answered) return answered;
    // Everything else keeps the daemon's mapping (404, 409, 503, 500 ...).
    throw error;
  });
}
