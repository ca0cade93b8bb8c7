import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import cors from '@fastify/cors';
import multipart from '@fastify/multipart';
import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import websocket from '@fastify/websocket';
import Fastify, { LogController } from 'fastify';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler } from 'fastify-type-provider-zod';
import { installAccessControl } from './access.js';
import type { DaemonDeps, RouteModule } from './deps.js';
import { MAX_JSON_BYTES, MAX_UPLOAD_BYTES, installErrorHandling, withErrorDescriptions } from './errors.js';
import { installJsonBodyParser } from './json-body.js';
import { installWellFormedInput } from './well-formed-input.js';
import { registerWebSocket } from './ws.js';

function redocPage(): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>docdex API</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><redoc spec-url="/openapi.json"></redoc><script src="/redoc/redoc.standalone.js"></script></body></html>`;
}

export async function buildApp(deps: DaemonDeps, routes: RouteModule[], options: { logger?: FastifyBaseLogger | boolean } = {}): Promise<FastifyInstance> {
  const app = Fastify({
    ...(typeof options.logger === 'object' ? { loggerInstance: options.logger } : { logger: options.logger ?? false }),
    bodyLimit: MAX_JSON_BYTES,
    requestIdHeader: 'x-request-id',
    genReqId: () => crypto.randomUUID(),
    // Fastify's own two lines per request at info (with a 15-digit responseTime) drowned the daemon's log:
    // one line per request at debug instead, below. Through a LogController: Fastify 5.12 deprecates the
    // top-level `disableRequestLogging` and warns at every start (FSTDEP023).
    logController: new LogController({ disableRequestLogging: true }),
    // Upload bodies and crawl requests are small; slow clients must not hold sockets forever.
    requestTimeout: 120_000,
  });
  app.setValidatorCompiler(validatorCompiler);
  // Responses are documented with zod schemas but serialised as plain JSON: a response that grows a field
  // must never turn into a 500.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app);
  installJsonBodyParser(app);
  installWellFormedInput(app);

  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  app.addHook('onResponse', async (request, reply) => {
    request.log.debug({ method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  });

  // Before every plugin: the Host, Origin and token checks answer before CORS, multipart or any route runs.
  installAccessControl(app, deps);
  await app.register(cors, {
    origin: deps.config.api.corsOrigins.length === 0 ? false : deps.config.api.corsOrigins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Authorization', 'Content-Type', 'Mcp-Session-Id', 'Mcp-Protocol-Version', 'Last-Event-ID'],
    exposedHeaders: ['Mcp-Session-Id', 'x-request-id'],
  });
  await app.register(rateLimit, { global: false });
  await app.register(multipart, { limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 10 } });
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'docdex API',
        version: deps.version,
        description:
          'Documentation code index: crawl documentation sites, upload markdown, search code snippets. ' +
          'Errors always have the body {"error","code","details"}. Lists are {items,total,limit,offset}. ' +
          `Uploads are limited to ${MAX_UPLOAD_BYTES / 1024 / 1024} MB per file (413 beyond). ` +
          'When authentication is on, send `Authorization: Bearer <token>`. Live job events stream over the WebSocket at /ws (docs/websocket.md).',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: deps.config.api.auth ? [{ bearer: [] }] : [],
    },
    transform: withErrorDescriptions(jsonSchemaTransform),
    transformObject: jsonSchemaTransformObject,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });

  const require = createRequire(import.meta.url);
  const redocScript = readFileSync(path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js'));
  app.get('/redoc', { schema: { hide: true } }, async (_request, reply) => reply.type('text/html; charset=utf-8').send(redocPage()));
  app.get('/redoc/redoc.standalone.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(redocScript),
  );
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());

  registerWebSocket(app, deps.hub);
  for (const register of routes) await register(app, deps);
  return app;
}
