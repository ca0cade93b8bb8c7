import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UserError, ValidationError } from '../../core/errors.js';
import { importPack } from '../../core/pack/import.js';
import { exportPackToFile } from '../../core/pack/location.js';
import { resolveSource } from '../../core/sources/resolve.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody } from '../errors.js';

const Installed = z.object({
  name: z.string(),
  version: z.string(),
  status: z.enum(['installed', 'replaced', 'unchanged']),
  source_id: z.string(),
  documents: z.number(),
  snippets: z.number(),
});

function fileNameFor(name: string, version: string): string {
  const safe = `${name}${version ? `-${version}` : ''}`.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 120);
  return `${safe || 'library'}.docdex`;
}

/** POST /api/packs: a pack as the multipart part "file" (fields replace, as), capped at DOCDEX_PACK_MAX_MB. */
function registerImportRoute(app: FastifyInstance, deps: DaemonDeps): void {
  app.withTypeProvider<ZodTypeProvider>().post(
    '/api/packs',
    {
      schema: {
        summary: 'Install an index pack (multipart/form-data: file, and optional fields replace=true, as=name@version before it)',
        tags: ['packs'],
        consumes: ['multipart/form-data'],
        response: { 200: z.object({ libraries: z.array(Installed) }), 400: ErrorBody, 409: ErrorBody, 413: ErrorBody, 422: ErrorBody },
      },
    },
    async (request) => {
      if (!request.isMultipart()) throw new UserError('POST /api/packs takes multipart/form-data with a "file" part.', { code: 'bad_request' });
      const maxBytes = deps.config.packs.maxBytes;
      const part = await request.file({ limits: { fileSize: maxBytes, files: 1, fields: 4 } });
      if (!part || part.fieldname !== 'file') throw new ValidationError('Send the pack as a part named "file" (fields replace and as before it).');
      const field = (name: string) => {
        const f = part.fields[name] as { value?: unknown } | undefined;
        return typeof f?.value === 'string' ? f.value : undefined;
      };
      const as = field('as');
      try {
        const summary = await importPack(deps.db.pool, part.file, { home: deps.config.home, maxBytes, replace: field('replace') === 'true', ...(as === undefined ? {} : { as }) });
        return { libraries: summary.libraries.map(({ sourceId, ...library }) => ({ ...library, source_id: sourceId })) };
      } catch (error) {
        if (part.file.truncated) throw new UserError(`The pack is over ${maxBytes} bytes.`, { code: 'pack_too_large' });
        throw error;
      }
    },
  );
}

/** GET /api/sources/:source_id/pack: one library version as a pack, written to a temporary file first so a failure is an error answer, not a cut stream. */
function registerExportRoute(app: FastifyInstance, deps: DaemonDeps): void {
  app.withTypeProvider<ZodTypeProvider>().get(
    '/api/sources/:source_id/pack',
    {
      schema: {
        summary: 'Download one library version as an index pack (docs/pack-format.md)',
        tags: ['packs'],
        params: z.object({ source_id: z.string().describe('Source UUID or exact name') }),
        response: { 404: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      const source = await resolveSource(deps.db.pool, request.params.source_id);
      const tmp = path.join(deps.config.home, 'tmp');
      await mkdir(tmp, { recursive: true, mode: 0o700 });
      const dir = await mkdtemp(path.join(tmp, 'export-'));
      const file = path.join(dir, 'pack.docdex');
      try {
        await exportPackToFile(deps.db.pool, { libraries: [{ kind: 'id', id: source.id }], tmpDir: dir }, file);
      } catch (error) {
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
      const stream = createReadStream(file);
      stream.on('close', () => void rm(dir, { recursive: true, force: true }));
      return reply
        .header('content-type', 'application/vnd.docdex.pack')
        .header('content-disposition', `attachment; filename="${fileNameFor(source.name, source.version)}"`)
        .send(stream as never);
    },
  );
}

export function registerPackRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  registerImportRoute(app, deps);
  registerExportRoute(app, deps);
}
