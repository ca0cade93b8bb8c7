import type pg from 'pg';
import type { Config } from '../config.js';
import { withTransaction } from '../db/transaction.js';
import { ConflictError, ValidationError } from '../errors.js';
import { assertLlmReady } from '../llm/preflight.js';
import { askedAgain, typedByUser } from '../net/provenance.js';
import type { Provenance } from '../net/provenance.js';
import { removePageIn } from '../store/pages.js';
import { insertUploadJob } from '../upload/jobs.js';
import { getUploadJob } from '../upload/job-rows.js';
import type { UploadJob } from '../upload/job-rows.js';
import { withBoss } from '../upload/queue.js';
import type { QueueDb } from '../upload/queue.js';
import { prepareAccess } from './access.js';
import { checkoutRef } from './checkout.js';
import type { RefKind } from './checkout.js';
import { addToTally, emptyTally } from '../upload/includes.js';
import { isExampleSource, readSelected, uploadRows } from './files.js';
import type { ReadFiles } from './files.js';
import { resolveGitIncludes } from './includes.js';
import type { PageIncludes } from './includes.js';
import { fileUrl } from './links.js';
import { hasControlCharacter, parseRemote } from './remote.js';
import { withTempDir } from './run.js';
import { normaliseRepoPaths, selectFiles } from './select.js';
import type { SelectedFile } from './select.js';
import { versionFromRef } from './tags.js';

/**
 * A git repository as a source: checked out synchronously by the caller (every bad input is an error before
 * anything is written), its selected files read, then ONE transaction creates or updates the source (kind
 * 'git', its origin in crawl_config.git), drops the pages of files that changed or went away, and creates an
 * upload job with the new and changed files and their queue entries. The upload workers do the rest.
 */

export interface GitSourceRequest {
  remote: string;
  ref?: string;
  paths?: string[];
  examples?: string[];
  name?: string;
  version?: string;
  maxRepoMb?: number;
  /**
   * Who named the remote (net/provenance.ts): only one the local user typed may be a local path, file://, ssh
   * or on loopback. Stored with the source, for re-checkouts.
   */
  provenance: Provenance;
}

/** One indexed file: its blob (unchanged blob, nothing to do) and the URL its page is stored under. */
interface IndexedFile {
  blob: string;
  url: string;
  /** The blobs of the files its includes read: the page is indexed again when one changes. */
  includes?: Record<string, string>;
}

/** Where a git source came from, kept in sources.crawl_config.git for recrawls. */
interface GitOrigin {
  /** As given, with no credentials (they are refused in a remote). */
  remote: string;
  /** As asked (null: the default branch), and what it was. */
  ref: string | null;
  refKind: RefKind;
  commit: string;
  paths: string[] | null;
  examples: string[] | null;
  maxRepoMb: number;
  files: Record<string, IndexedFile>;
}

const DEFAULT_MAX_REPO_MB = 500;

function checkMaxRepoMb(value: number | undefined): number {
  const mb = value ?? DEFAULT_MAX_REPO_MB;
  if (!Number.isFinite(mb) || mb <= 0 || mb > 100_000) throw new ValidationError(`maxRepoMb must be a number of megabytes between 0 and 100000, got ${String(value)}.`);
  return mb;
}

function checkText(value: string | undefined, field: string, max: number): string | undefined {
  const text = value?.trim();
  if (text === undefined || text === '') return undefined;
  if (text.length > max) throw new ValidationError(`${field} must be at most ${max} characters.`);
  return text;
}

function checkRef(ref: string | undefined): string | undefined {
  const text = checkText(ref, 'ref', 250);
  // git check-ref-format's rules, the ones that matter here: nothing git could read as an option or a range.
  if (text !== undefined && (text.startsWith('-') || hasControlCharacter(text) || /[\s~^:?*[\\]|\.\.|@\{|\.lock$|\/$/.test(text))) {
    throw new ValidationError(`${JSON.stringify(text)} is not a tag, branch or commit name.`);
  }
  return text;
}

interface CheckedOut {
  origin: GitOrigin;
  typedByUser: boolean;
  selected: SelectedFile[];
  read: ReadFiles;
  /** The includes of each page that has any. */
  includes: Map<string, PageIncludes>;
  name: string;
  version: string;
}

function indexedFile(file: SelectedFile, url: string, includes: PageIncludes | undefined): IndexedFile {
  return includes === undefined ? { blob: file.blob, url } : { blob: file.blob, url, includes: includes.reads };
}

/** Whether a file and what its includes read are as they were. */
function unchanged(before: IndexedFile | undefined, now: IndexedFile | undefined): boolean {
  if (before === undefined || now === undefined || before.blob !== now.blob) return false;
  const a = Object.entries(before.includes ?? {}).sort(([x], [y]) => (x < y ? -1 : 1));
  const b = Object.entries(now.includes ?? {}).sort(([x], [y]) => (x < y ? -1 : 1));
  return a.length === b.length && a.every(([k, v], i) => b[i]?.[0] === k && b[i]?.[1] === v);
}

/** Checks out and reads everything the job needs; the temp directory is gone when this returns. */
async function checkoutAndRead(config: Config, pool: pg.Pool, request: GitSourceRequest): Promise<CheckedOut> {
  const remote = parseRemote(request.remote);
  const ref = checkRef(request.ref);
  const paths = normaliseRepoPaths(request.paths, 'paths');
  const examples = normaliseRepoPaths(request.examples, 'examples paths');
  const maxRepoMb = checkMaxRepoMb(request.maxRepoMb);
  const name = checkText(request.name, 'name', 200) ?? remote.name;
  return withTempDir(async (tmp) => {
    const access = await prepareAccess(config, remote, tmp, { local: typedByUser(request.provenance), pool });
    const selection = { ...(paths ? { paths } : {}), ...(examples ? { examples } : {}) };
    const checkout = await checkoutRef(tmp, { remote, ...(ref === undefined ? {} : { ref }), selection, maxBytes: maxRepoMb * 1024 * 1024, access });
    const selected = selectFiles(checkout.tracked, selection, isExampleSource);
    const urlOf = (filePath: string) => fileUrl(remote, checkout.commit, filePath);
    const raw = await readSelected(checkout.dir, selected);
    const maxBytes = maxRepoMb * 1024 * 1024;
    const { texts, pages: includes } = await resolveGitIncludes(tmp, { remote, access, maxBytes }, checkout.dir, checkout.tracked, raw.texts);
    const read = uploadRows(texts, raw.errors, urlOf);
    const files = Object.fromEntries(selected.map((f) => [f.path, indexedFile(f, urlOf(f.path), includes.get(f.path))]));
    const origin: GitOrigin = { remote: remote.url, ref: ref ?? null, refKind: checkout.ref.kind, commit: checkout.commit, paths: paths ?? null, examples: examples ?? null, maxRepoMb, files };
    const version = checkText(request.version, 'version', 100) ?? versionFromRef(checkout.ref);
    return { origin, typedByUser: typedByUser(request.provenance), selected, read, includes, name, version };
  });
}

interface TargetSource {
  id: string;
  kind: string;
  previous: Record<string, IndexedFile>;
}

/**
 * The source this checkout indexes into, locked, with the files of its last checkout whose pages are in the index.
 * The files are recorded when a job is queued, before its pages are stored: a file whose page is missing (its
 * job failed or was cancelled, or the page was removed) is not indexed, whatever its blob, and is read again.
 */
async function lockTarget(client: pg.ClientBase, name: string, version: string): Promise<TargetSource | undefined> {
  const { rows } = await client.query<{ id: string; kind: string; files: Record<string, IndexedFile> | null }>(
    `SELECT s.id, s.kind,
            (SELECT jsonb_object_agg(f.key, f.value) FROM jsonb_each(s.crawl_config->'git'->'files') AS f
              WHERE EXISTS (SELECT 1 FROM documents d WHERE d.source_id = s.id AND d.url = f.value->>'url')) AS files
       FROM sources s WHERE s.name = $1 AND s.version = $2 FOR UPDATE`,
    [name, version],
  );
  const row = rows[0];
  return row ? { id: row.id, kind: row.kind, previous: row.files ?? {} } : undefined;
}

async function saveSource(client: pg.ClientBase, target: TargetSource | undefined, checked: CheckedOut): Promise<string> {
  const config = JSON.stringify({ git: checked.origin });
  if (target) {
    await client.query(`UPDATE sources SET crawl_config = $2, typed_by_user = $3, last_crawled_at = now(), updated_at = now() WHERE id = $1`, [target.id, config, checked.typedByUser]);
    return target.id;
  }
  const { rows } = await client.query<{ id: string }>(`INSERT INTO sources (name, version, kind, crawl_config, typed_by_user, last_crawled_at) VALUES ($1, $2, 'git', $3, $4, now()) RETURNING id`, [
    checked.name,
    checked.version,
    config,
    checked.typedByUser,
  ]);
  return rows[0]!.id;
}

/** What changed since the last checkout: files to (re)index, and the pages of changed or removed files to drop. */
function planChanges(previous: Record<string, IndexedFile>, checked: CheckedOut): { paths: string[]; dropUrls: string[] } {
  const current = checked.origin.files;
  // A file kept at the same blob, its includes unchanged, keeps its page and the URL it was stored under.
  const kept = new Set(Object.keys(previous).filter((filePath) => unchanged(previous[filePath], current[filePath])));
  for (const filePath of kept) current[filePath] = previous[filePath]!;
  const paths = checked.selected.map((f) => f.path).filter((p) => !kept.has(p));
  const dropUrls = Object.entries(previous)
    .filter(([filePath]) => !kept.has(filePath))
    .map(([, before]) => before.url);
  return { paths, dropUrls };
}

/** The one transaction: source, dropped pages, job, files and queue entries. */
async function commitJob(db: QueueDb, config: Config, checked: CheckedOut, expectedSourceId?: string): Promise<UploadJob> {
  const jobId = await withBoss(db, async (boss) =>
    withTransaction(db.pool, async (client) => {
      const target = await lockTarget(client, checked.name, checked.version);
      if (target && target.kind !== 'git') {
        throw new ConflictError(`Source "${checked.name}" (${checked.version || 'unversioned'}) is not a git source: a repository cannot add pages to it.`, {
          hint: 'Give the repository another name (name) or version.',
        });
      }
      if (expectedSourceId !== undefined && target?.id !== expectedSourceId) throw new ConflictError(`Source "${checked.name}" changed while it was being recrawled.`);
      const plan = planChanges(target?.previous ?? {}, checked);
      const sourceId = await saveSource(client, target, checked);
      for (const url of plan.dropUrls) await removePageIn(client, sourceId, url);
      const files = plan.paths.flatMap((p) => (checked.read.files.has(p) ? [checked.read.files.get(p)!] : []));
      const errors = plan.paths.flatMap((p) => (checked.read.errors.has(p) ? [checked.read.errors.get(p)!] : []));
      const includes = emptyTally();
      for (const p of plan.paths) {
        const page = checked.includes.get(p);
        if (page) addToTally(includes, page.tally);
      }
      return insertUploadJob(boss, client, sourceId, { name: checked.name, files, errors, skipped: [], llmEnhance: config.llm.enabled, sourceType: 'git', includes });
    }),
  );
  return getUploadJob(db.pool, jobId);
}

/**
 * Indexes a git repository at a ref: checkout → upload job (kind 'git') processed by the upload workers.
 * Throws a UserError with a code of ERROR_CODES for every bad input, before anything is written.
 */
export async function startGitSource(db: QueueDb, config: Config, request: GitSourceRequest): Promise<UploadJob> {
  await assertLlmReady(config);
  const checked = await checkoutAndRead(config, db.pool, request);
  return commitJob(db, config, checked);
}

/**
 * Re-runs a git source's checkout at its stored ref (a branch moves to its new head): files with an unchanged
 * blob are skipped, changed ones re-extracted, removed ones' pages and snippets deleted in the job's
 * transaction. A local, file:// or ssh remote, or one on loopback, is checked out again only when the local
 * user typed it and asks again (`askedBy`).
 */
export async function recrawlGitSource(db: QueueDb, config: Config, sourceId: string, options: { askedBy?: Provenance } = {}): Promise<UploadJob> {
  const { rows } = await db.pool.query<{ name: string; version: string; kind: string; origin: GitOrigin | null; typed_by_user: boolean }>(
    `SELECT name, version, kind, crawl_config->'git' AS origin, typed_by_user FROM sources WHERE id = $1`,
    [sourceId],
  );
  const source = rows[0];
  if (!source?.origin || source.kind !== 'git') throw new ValidationError('Not a git source: there is no repository to check out again.');
  await assertLlmReady(config);
  const { origin } = source;
  const request: GitSourceRequest = {
    remote: origin.remote,
    ...(origin.ref === null ? {} : { ref: origin.ref }),
    ...(origin.paths ? { paths: origin.paths } : {}),
    ...(origin.examples ? { examples: origin.examples } : {}),
    name: source.name,
    version: source.version,
    maxRepoMb: origin.maxRepoMb,
    provenance: askedAgain(source.typed_by_user, options.askedBy ?? 'third_party'),
  };
  const checked = await checkoutAndRead(config, db.pool, request);
  return commitJob(db, config, checked, sourceId);
}
