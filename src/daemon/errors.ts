import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import type { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { databaseInputError, databaseUnavailableError } from '../core/db/errors.js';
import { ERROR_CODE_NAMES, UserError, codesWithStatus, httpStatusOf } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';

/** The one error body of every HTTP route: a human message, a machine code, and details (zod issues). */
export const ErrorBody = z
  .object({
    error: z.string().describe('Human-readable message'),
    code: z.enum(ERROR_CODE_NAMES).describe('Machine-readable code; its HTTP status is always the same (each response lists its codes)'),
    details: z.array(z.unknown()).describe('Validation issues or other structured details; [] when none'),
  })
  .meta({ id: 'Error' });
export type ErrorBody = z.infer<typeof ErrorBody>;

function writeError(reply: FastifyReply, status: number, code: ErrorCode, error: string, details: unknown[]): FastifyReply {
  return reply
    .status(status)
    .type('application/json')
    .send({ error, code, details } satisfies ErrorBody);
}

/** Sends the error body of `code` with its status from the one table (`ERROR_CODES` in core/errors.ts). */
export function sendError(reply: FastifyReply, code: ErrorCode, error: string, details: unknown[] = []): FastifyReply {
  return writeError(reply, httpStatusOf(code), code, error, details);
}

/** What an error response of `status` documents: the codes that answer with it, from the one table. */
export function errorResponseDescription(status: number): string {
  const codes = codesWithStatus(status);
  return codes.length === 0 ? 'Error' : `Error; code is one of: ${codes.join(', ')}`;
}

type SchemaTransform = typeof jsonSchemaTransform;

/** Wraps the OpenAPI transform so every documented ErrorBody response names its codes (`errorResponseDescription`). */
export function withErrorDescriptions(transform: SchemaTransform): SchemaTransform {
  return (input) => {
    const output = transform(input);
    const declared = (input.schema as { response?: Record<string, unknown> } | undefined)?.response ?? {};
    const documented = (output.schema as { response?: Record<string, Record<string, unknown>> }).response;
    for (const [status, schema] of Object.entries(declared)) {
      const json = documented?.[status];
      if (schema === ErrorBody && json) documented[status] = { ...json, description: errorResponseDescription(Number(status)) };
    }
    return output;
  };
}

/** Maximum size of an uploaded file (multipart) or JSON body, documented in the OpenAPI description. */
export const MAX_UPLOAD_BYTES = 10 * 1024 * 1024;
export const MAX_JSON_BYTES = 12 * 1024 * 1024;

export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => sendError(reply, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`));

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const details = error.validation.map((v) => ({ path: v.instancePath, message: v.message, ...v.params }));
      return sendError(reply, 'validation_error', `Invalid request ${error.validationContext ?? ''}: ${error.validation[0]?.message ?? 'validation failed'}`.replace('  ', ' '), details);
    }
    if (error instanceof UserError) {
      return sendError(reply, error.code, error.hint ? `${error.message} ${error.hint}` : error.message, error.details ?? []);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error instanceof SyntaxError || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
      return sendError(reply, 'bad_request', 'Malformed JSON body.');
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      // Each route's limit follows from its schema (json-body.ts): a body this much larger holds more than it takes.
      return sendError(reply, 'payload_too_large', `The request body is larger than this route takes (at most ${request.routeOptions.bodyLimit} bytes).`);
    }
    if (error.code === 'FST_REQ_FILE_TOO_LARGE' || error.statusCode === 413) {
      return sendError(reply, 'payload_too_large', `The request is too large: uploads are limited to ${MAX_UPLOAD_BYTES / 1024 / 1024} MB per file.`);
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || error.statusCode === 415) {
      return sendError(reply, 'unsupported_media_type', error.message);
    }
    if (error.statusCode === 429) {
      return sendError(reply, 'rate_limited', error.message);
    }
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // Fastify's own client errors keep the status Fastify chose for them (400 nearly always).
      return writeError(reply, error.statusCode, 'bad_request', error.message, []);
    }
    const invalid = databaseInputError(error);
    if (invalid) {
      request.log.warn({ err: error }, 'input refused by the database');
      return sendError(reply, invalid.code, `${invalid.message} ${invalid.hint ?? ''}`.trim());
    }
    const unavailable = databaseUnavailableError(error);
    if (unavailable) {
      request.log.warn({ err: error }, 'database unavailable');
      void reply.header('retry-after', '5');
      return sendError(reply, unavailable.code, `${unavailable.message} ${unavailable.hint ?? ''}`.trim());
    }
    // Unexpected: log everything, send nothing that could leak a stack, SQL or a path.
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'internal_error', 'Internal server error.');
  });
}
