import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { UserError, ValidationError } from '../../core/errors.js';
import { createUploadFromContent } from '../../core/upload/jobs.js';
import { getUploadJob } from '../../core/upload/job-rows.js';
import type { DaemonDeps } from '../deps.js';
import { ErrorBody, MAX_UPLOAD_BYTES } from '../errors.js';

export const UploadJobSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    source_type: z.string(),
    source_id: z.string().nullable(),
    status: z
      .enum(['queued', 'processing', 'enhancing', 'completed', 'failed', 'cancelled'])
      .describe('enhancing: the files are stored and the LLM is enhancing their snippets (LLM enhancement on); cancelled: `docdex jobs cancel`, resumable'),
    file_count: z.number(),
    processed_files: z.number(),
    failed_files: z.number(),
    snippets_extracted: z.number(),
    file_errors: z.array(z.unknown()),
    skipped_files: z.array(z.unknown()).describe('Unsupported files found in uploaded directories'),
    includes_resolved: z
      .number()
      .describe(
        "Include directives (fastapi's {* *}, pymdown --8<--, VitePress <<<, Sphinx literalinclude, AsciiDoc include::, MDX raw imports) replaced by the file they name, from the same commit or folder",
      ),
    includes_unresolved: z.number().describe('Include directives kept as written: outside the repository, not found, too large, or a part the file lacks'),
    unresolved_includes: z.array(z.object({ path: z.string(), include: z.string(), reason: z.string() })).describe('The first unresolved include directives: the file, the directive, why'),
    source_name: z.string().nullable(),
    version: z.string().nullable(),
    error: z.string().nullable(),
    llm_enhance: z.boolean().describe('Started with LLM enhancement on'),
    llm_pages_total: z.number().describe('Pages of this job with snippets for the LLM stage'),
    llm_pages_done: z.number().describe('Of those, pages the LLM stage is through with'),
    llm_pages_failed: z.number().describe('Of those, pages the LLM stage gave up on (kept their extracted titles and descriptions)'),
    llm_snippets_enhanced: z.number().describe("Snippets the model's answers changed"),
    created_at: z.string(),
    started_at: z.string().nullable(),
    completed_at: z.string().nullable(),
    updated_at: z.string(),
  })
  .meta({ id: 'UploadJob' });

const MarkdownUpload = z
  .object({
    content: z.string().min(1).describe('Markdown text'),
    source_url: z.url().optional().describe('Where this document lives (used as its URL)'),
    title: z.string().max(500).optional(),
    name: z.string().max(200).optional().describe('Source name; defaults to the title'),
    version: z.string().max(100).optional(),
  })
  .strict()
  .meta({ id: 'MarkdownUpload' });

export function registerUploadRoutes(app: FastifyInstance, deps: DaemonDeps): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/upload/markdown',
    {
      schema: {
        summary: 'Upload one markdown document (processed in the background)',
        tags: ['uploads'],
        body: MarkdownUpload,
        response: { 202: UploadJobSchema, 413: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const job = await createUploadFromContent(deps.db, deps.config, {
        content: b.content,
        ...(b.title === undefined ? {} : { title: b.title }),
        ...(b.source_url === undefined ? {} : { sourceUrl: b.source_url }),
        ...(b.name === undefined ? {} : { name: b.name }),
        ...(b.version === undefined ? {} : { version: b.version }),
      });
      return reply.status(202).send(job);
    },
  );
  r.post(
    '/upload/file',
    {
      schema: {
        summary: `Upload one file as multipart/form-data (fields: file, source_url, name, version; at most ${MAX_UPLOAD_BYTES / 1024 / 1024} MB)`,
        tags: ['uploads'],
        consumes: ['multipart/form-data'],
        response: { 202: UploadJobSchema, 400: ErrorBody, 413: ErrorBody, 422: ErrorBody },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) throw new UserError('POST /upload/file takes multipart/form-data with a "file" part.', { code: 'bad_request' });
      const fields: Record<string, string> = {};
      let file: { filename: string; content: Buffer } | undefined;
      // Streams each part; @fastify/multipart enforces the file size limit while reading (413 beyond it).
      for await (const part of request.parts()) {
        if (part.type === 'file') {
          if (part.fieldname !== 'file' || file) {
            part.file.resume();
            throw new ValidationError(`Unexpected file part "${part.fieldname}": send exactly one part named "file".`);
          }
          const content = await part.toBuffer();
          file = { filename: part.filename, content };
        } else if (typeof part.value === 'string') {
          fields[part.fieldname] = part.value;
        }
      }
      if (!file) throw new ValidationError('Missing the "file" part.');
      const job = await createUploadFromContent(deps.db, deps.config, {
        content: new Uint8Array(file.content),
        filename: file.filename,
        ...(fields.source_url ? { sourceUrl: fields.source_url } : {}),
        ...(fields.name ? { name: fields.name } : {}),
        ...(fields.version ? { version: fields.version } : {}),
        ...(fields.title ? { title: fields.title } : {}),
      });
      return reply.status(202).send(job);
    },
  );
  r.get(
    '/upload/status/:job_id',
    {
      schema: { summary: 'Upload job status', tags: ['uploads'], params: z.object({ job_id: z.string() }), response: { 200: UploadJobSchema, 404: ErrorBody, 422: ErrorBody } },
    },
    async (request) => getUploadJob(deps.db.pool, request.params.job_id),
  );
}
