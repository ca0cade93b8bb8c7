import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { databaseInputError, databaseUnavailableError } from '../core/db/errors.js';
import { ConflictError, NotFoundError, UserError, ValidationError } from '../core/errors.js';

/** The one error body of every HTTP route: a human message, a machine code, and details (zod issues). */
export const ErrorBody = z
  .object({
    error: z.string().describe('Human-readable message'),
    code: z.string().describe('Machine-readable code, e.g. validation_error, not_found, unauthorized'),
    details: z.array(z.unknown()).describe('Validation issues or other structured details; [] when none'),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

export function sendError(reply: FastifyReply, status: number, code: string, error: string, details: unknown[] = []): FastifyReply {
  return reply.status(status).type('application/json').send({ error, code, details } satisfies ErrorBody);
}

/** Maximum size of an uploaded file (multipart) or JSON body, documented in the OpenAPI description. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_JSON_BYTES = 12 * 1024 * 1024;

function userErrorStatus(error: UserError): number {
  if (error instanceof ValidationError) return 422;
  if (error instanceof NotFoundError) return 404;
  if (error instanceof ConflictError) return 409;
  if (error.code === 'payload_too_large') return 413;
  if (error.code === 'unauthorized') return 401;
  if (error.code === 'forbidden') return 403;
  if (error.code === 'bad_gateway') return 502;
  if (error.code === 'unavailable') return 503;
  if (error.code === 'database_unavailable' || error.code === 'llm_unavailable') return 503;
  return 400;
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => sendError(reply, 404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const details = error.validation.map((v) => ({ path: v.instancePath, message: v.message, ...v.params }));
      return sendError(reply, 422, 'validation_error', `Invalid request ${error.validationContext ?? ''}: ${error.validation[0]?.message ?? 'validation failed'}`.replace('  ', ' '), details);
    }
    if (error instanceof UserError) {
      return sendError(reply, userErrorStatus(error), error.code, error.hint ? `${error.message} ${error.hint}` : error.message, error.details ?? []);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return sendError(reply, 400, 'bad_request', 'Malformed JSON body.');
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || error.code === 'FST_REQ_FILE_TOO_LARGE' || error.statusCode === 413) {
      return sendError(reply, 413, 'payload_too_large', `The request is too large: uploads are limited to ${MAX_UPLOAD_BYTES / 1024 / 1024} MB per file.`);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.statusCode === 415) {
      return sendError(reply, 415, 'unsupported_media_type', error.message);
    }
    if (error.statusCode === 429) {
      return sendError(reply, 429, 'rate_limited', error.message);
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, error.statusCode, 'bad_request', error.message);
    }
    const invalid = databaseInputError(error);
    if (invalid) {
      request.log.warn({ err: error }, 'input refused by the database');
      return sendError(reply, 422, invalid.code, `${invalid.message} ${invalid.hint ?? ''}`.trim());
    }
    const unavailable = databaseUnavailableError(error);
    if (unavailable) {
      request.log.warn({ err: error }, 'database unavailable');
      void reply.header('retry-after', '5');
      return sendError(reply, 503, unavailable.code, `${unavailable.message} ${unavailable.hint ?? ''}`.trim());
    }
    // Unexpected: log everything, send nothing that could leak a stack, SQL or a path.
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 500, 'internal_error', 'Internal server error.');
  });
}
