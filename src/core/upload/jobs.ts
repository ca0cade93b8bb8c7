import path from 'node:path';
import type pg from 'pg';
import type { PgBoss } from 'pg-boss';
import type { Config } from '../config.js';
import { ValidationError } from '../errors.js';
import { decodeUpload, MAX_FILE_BYTES } from './decode.js';
import { checkSourceUrl, contentFileName, scanPaths } from './files.js';
import { emptyTally } from './includes.js';
import type { IncludeTally } from './includes.js';
import type { FileProblem, SkippedFile, UploadFileInput } from './files.js';
import { assertUploadTargetAllowed } from './guard.js';
import type { UploadTarget } from './guard.js';
import { queueFiles, withBoss } from './queue.js';
import type { QueueDb } from './queue.js';
import { assertLlmReady } from '../llm/preflight.js';
import { withTransaction } from '../db/transaction.js';
import { getUploadJob } from './job-rows.js';
import type { UploadJob } from './job-rows.js';

/**
 * Upload jobs: created with their files (bodies stored in upload_files) and queue entries in ONE transaction,
 * then processed file by file by any worker (worker.ts); read back through job-rows.ts. queued → processing → completed | failed; a job
 * fails only when every file failed. A cancelled job keeps its unprocessed files pending (control.ts).
 */

function checkName(name: string | undefined, fallback: string): string {
  const n = (name ?? '').trim() || fallback.trim() || 'upload';
  if (n.length > 200) throw new ValidationError('name must be at most 200 characters.');
  return n;
}

function checkVersion(version: string | undefined): string {
  const v = (version ?? '').trim();
  if (v.length > 100) throw new ValidationError('version must be at most 100 characters.');
  return v;
}

interface NewUpload extends UploadTarget {
  files: UploadFileInput[];
  errors: FileProblem[];
  skipped: SkippedFile[];
  /** LLM enhancement on: the job reads enhancing after its files until the LLM stage is through with its pages. */
  llmEnhance: boolean;
  includes?: IncludeTally;
}

async function createUpload(db: QueueDb, upload: NewUpload): Promise<UploadJob> {
  if (upload.files.length === 0) {
    const first = upload.errors[0];
    throw new ValidationError(upload.errors.length === 1 && first ? `${first.path}: ${first.error}.` : `None of the ${upload.errors.length} files can be uploaded.`, {
      details: upload.errors,
      hint: 'Upload UTF-8 text files (.md .markdown .mdx .txt .rst .adoc) of at most 10 MB each.',
    });
  }
  return withBoss(db, async (boss) => {
    const created = await withTransaction(db.pool, async (client) => {
      await assertUploadTargetAllowed(client, upload);
      // An upload into an existing (name, version) adds to that source: re-uploading a file replaces its page.
      const source = await client.query<{ id: string }>(
        `INSERT INTO sources (name, version, kind, base_url) VALUES ($1, $2, 'upload', $3)
         ON CONFLICT (name, version) DO UPDATE SET updated_at = now(), base_url = COALESCE(sources.base_url, EXCLUDED.base_url)
         RETURNING id`,
        [upload.name, upload.version, upload.sourceUrl ?? null],
      );
      const sourceId = source.rows[0]!.id;
      const jobId = await insertUploadJob(boss, client, sourceId, upload);
      return jobId;
    });
    return getUploadJob(db.pool, created);
  });
}

export interface UploadJobRows {
  name: string;
  files: UploadFileInput[];
  errors: FileProblem[];
  skipped: SkippedFile[];
  llmEnhance: boolean;
  /** 'upload' unless another producer (a git checkout) made the files. */
  sourceType?: 'upload' | 'git';
  /** The files' include directives, resolved and not. */
  includes?: IncludeTally;
}

/**
 * Inserts a job, its files (bodies in upload_files) and their queue entries in the caller's transaction, so
 * workers see all of it or nothing. A job with nothing left to process (a recrawl that found no change) is
 * finished at once.
 */
export async function insertUploadJob(boss: PgBoss, client: pg.ClientBase, sourceId: string, upload: UploadJobRows): Promise<string> {
  const fileCount = upload.files.length + upload.errors.length;
  const includes = upload.includes ?? emptyTally();
  const finished = upload.files.length === 0 ? (upload.errors.length > 0 ? 'failed' : 'completed') : null;
  const job = await client.query<{ id: string }>(
    `INSERT INTO upload_jobs (name, source_id, file_count, processed_files, failed_files, file_errors, skipped_files, llm_enhance, source_type, status, error, completed_at,
                              includes_resolved, includes_unresolved, unresolved_includes)
     VALUES ($1, $2, $3, $4, $4, $5, $6, $7, $8, COALESCE($9::text, 'queued'), CASE WHEN $9::text = 'failed' THEN 'every file failed' END, CASE WHEN $9::text IS NOT NULL THEN now() END,
             $10, $11, $12)
     RETURNING id`,
    [
      upload.name,
      sourceId,
      fileCount,
      upload.errors.length,
      JSON.stringify(upload.errors),
      JSON.stringify(upload.skipped.slice(0, 1000)),
      upload.llmEnhance,
      upload.sourceType ?? 'upload',
      finished,
      includes.resolved,
      includes.unresolved,
      JSON.stringify(includes.problems),
    ],
  );
  const jobId = job.rows[0]!.id;
  const files = await client.query<{ id: number }>(
    `INSERT INTO upload_files (job_id, path, url, content, size_bytes, content_type)
     SELECT $1, t.path, t.url, t.content, t.size, t.content_type
       FROM unnest($2::text[], $3::text[], $4::text[], $5::int[], $6::text[]) AS t(path, url, content, size, content_type)
     RETURNING id`,
    [jobId, upload.files.map((f) => f.path), upload.files.map((f) => f.url), upload.files.map((f) => f.content), upload.files.map((f) => f.sizeBytes), upload.files.map((f) => f.contentType ?? null)],
  );
  await queueFiles(
    boss,
    client,
    jobId,
    files.rows.map((r) => r.id),
  );
  return jobId;
}

export interface UploadPathsRequest {
  paths: string[];
  /** Source name; defaults to the (first) file's or directory's name. */
  name?: string;
  /** Where the files are published: document URLs are built under it (a file's own URL when one file). */
  sourceUrl?: string;
  version?: string;
}

/** `docdex upload <file|dir>...`: reads and checks every file, then creates the job. */
export async function createUploadFromPaths(db: QueueDb, config: Config, request: UploadPathsRequest): Promise<UploadJob> {
  await assertLlmReady(config);
  const sourceUrl = checkSourceUrl(request.sourceUrl);
  const first = request.paths[0];
  const fallbackName = first === undefined ? 'upload' : path.basename(path.resolve(first)).replace(/\.(md|markdown|mdx|txt|rst|adoc)$/i, '');
  const name = checkName(request.name, fallbackName);
  const version = checkVersion(request.version);
  const scan = await scanPaths(request.paths, sourceUrl);
  return createUpload(db, { name, version, sourceUrl, files: scan.files, errors: scan.errors, skipped: scan.skipped, llmEnhance: config.llm.enabled, includes: scan.includes });
}

export interface UploadContentRequest {
  /** The document text (markdown unless the filename says otherwise), or its raw bytes from a multipart upload. */
  content: string | Uint8Array;
  title?: string;
  sourceUrl?: string;
  /** Source name; defaults to the title, the filename, or "uploads". */
  name?: string;
  /** The uploaded file's name (POST /upload/file); its extension picks the format. */
  filename?: string;
  version?: string;
  /** A producer's own: docdex read `content` from `sourceUrl` itself (a registry's tarball), see UploadTarget. */
  sourceUrlFetched?: boolean;
}

const CONTENT_EXTENSIONS = /\.(md|markdown|mdx|txt|rst|adoc)$/i;

/** POST /upload/markdown and POST /upload/file: one document from the request body. */
export async function createUploadFromContent(db: QueueDb, config: Config, request: UploadContentRequest): Promise<UploadJob> {
  await assertLlmReady(config);
  const sourceUrl = checkSourceUrl(request.sourceUrl);
  const label = request.filename?.trim() ? path.basename(request.filename.trim()) : 'content';
  if (request.filename !== undefined && !CONTENT_EXTENSIONS.test(label)) {
    throw new ValidationError(`${label}: unsupported format.`, { hint: 'Supported formats: .md .markdown .mdx .txt .rst .adoc.' });
  }
  let text: string;
  if (typeof request.content === 'string') {
    if (Buffer.byteLength(request.content, 'utf8') > MAX_FILE_BYTES) {
      throw new ValidationError(`${label}: content is larger than the ${MAX_FILE_BYTES / 1024 / 1024} MB limit.`);
    }
    if (request.content.includes('\u0000')) throw new ValidationError(`${label}: binary content (contains NUL bytes); upload text only.`);
    text = request.content;
  } else {
    const decoded = decodeUpload(request.content);
    if ('error' in decoded) throw new ValidationError(`${label}: ${decoded.error}.`);
    text = decoded.text;
  }
  if (text.trim().length === 0) throw new ValidationError(`${label}: the content is empty.`);
  // Named by the file name, the title or the content: re-sending the same document replaces its page.
  const fileName = contentFileName(text, request.title, request.filename);
  const name = checkName(request.name, request.title ?? (request.filename ? fileName.replace(CONTENT_EXTENSIONS, '') : 'uploads'));
  const url = sourceUrl ?? `upload://${encodeURIComponent(name)}/${encodeURIComponent(fileName)}`;
  let body = text;
  // A title without a heading in the text would otherwise be lost: the page title comes from the first heading.
  if (request.title?.trim() && !/^\s*#\s/m.test(text.slice(0, 2000)) && /\.(md|markdown|mdx)$/i.test(fileName)) body = `# ${request.title.trim()}\n\n${text}`;
  return createUpload(db, {
    name,
    version: checkVersion(request.version),
    sourceUrl,
    sourceUrlFetched: request.sourceUrlFetched === true,
    files: [{ path: fileName, url, content: body, sizeBytes: Buffer.byteLength(body, 'utf8') }],
    errors: [],
    skipped: [],
    llmEnhance: config.llm.enabled,
  });
}
