import type pg from 'pg';
import type { Config } from '../config.js';
import type { ConnectionInfo } from '../db/connect.js';
import { ValidationError } from '../errors.js';
import type { CrawlSettings } from '../sources/manage.js';
import { resolveSource } from '../sources/resolve.js';
import { startCrawl } from './jobs.js';
import type { CrawlJob } from './jobs.js';
import { requestFromStored } from '../crawl-request.js';
import type { CrawlRequestInput } from '../crawl-request.js';
import { recrawlGitSource } from '../git/index.js';
import { askedAgain } from '../net/provenance.js';
import type { Provenance } from '../net/provenance.js';
import type { UploadJob } from '../upload/job-rows.js';

/** The crawl request of the spec, rebuilt from a source's stored configuration. */
export type RecrawlRequest = CrawlRequestInput & { name: string; start_urls: string[] };

export interface RecrawlOptions {
  version?: string;
  /** Who asks (net/provenance.ts): the stored URLs get the user's permission only when the user typed them too. */
  askedBy?: Provenance;
}

export async function recrawlRequest(pool: pg.Pool, ref: string, options: { version?: string } = {}): Promise<{ sourceId: string; request: RecrawlRequest; typedByUser: boolean }> {
  const { id } = await resolveSource(pool, ref, options.version);
  const { rows } = await pool.query<{
    name: string;
    version: string;
    kind: string;
    base_url: string | null;
    crawl_config: CrawlSettings;
    metadata: Record<string, unknown>;
    typed_by_user: boolean;
  }>('SELECT name, version, kind, base_url, crawl_config, metadata, typed_by_user FROM sources WHERE id = $1', [id]);
  const s = rows[0]!;
  if (s.kind === 'git') {
    throw new ValidationError(`${s.name} is a git repository; it is recrawled by checking it out again, not by crawling.`, { hint: 'Run `docdex sources recrawl` for it.' });
  }
  if (s.kind === 'upload') {
    throw new ValidationError(`${s.name} is an upload collection; there is nothing to re-fetch.`, { hint: 'Upload the files again with `docdex upload`.' });
  }
  const c = s.crawl_config;
  const startUrls = c.start_urls && c.start_urls.length > 0 ? c.start_urls : s.base_url ? [s.base_url] : [];
  if (startUrls.length === 0) {
    throw new ValidationError(`${s.name} has no stored start URLs to recrawl.`, { hint: 'Set one with `docdex sources update --base-url URL`.' });
  }
  // The stored fields as they were, the source's own name, version and metadata; defaults fill the rest.
  return {
    sourceId: id,
    request: { ...requestFromStored(c), name: s.name, start_urls: startUrls, version: s.version, metadata: s.metadata },
    typedByUser: s.typed_by_user,
  };
}

const NOT_TYPED_HINT =
  'Its start URLs were not typed at this CLI (a registry, a project file, a pack or an API caller named them), so they get no loopback access. Crawl it with `docdex crawl start URL` to vouch for the URL, or list the host in CRAWL_ALLOW_HOSTS.';

/**
 * Re-fetches a source with its stored configuration through the crawler, which skips pages whose content hash
 * is unchanged. The stored start URLs keep the provenance they were stored with. Returns the crawler's job.
 */
export async function recrawlSource(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, ref: string, options: RecrawlOptions = {}): Promise<CrawlJob> {
  const { request, typedByUser } = await recrawlRequest(db.pool, ref, options);
  const provenance = askedAgain(typedByUser, options.askedBy ?? 'third_party');
  try {
    return await startCrawl(db, config, request, { provenance });
  } catch (error) {
    // The local user may wonder why their own command cannot reach what a registry or a pack put there.
    if (error instanceof ValidationError && options.askedBy === 'user' && !typedByUser) {
      throw new ValidationError(error.message, { hint: NOT_TYPED_HINT, ...(error.details === undefined ? {} : { details: error.details }) });
    }
    throw error;
  }
}

/** What a recrawl started: a crawl, or for a git source the upload job of its new checkout. */
export type StartedRecrawl = { kind: 'crawl'; job: CrawlJob } | { kind: 'git'; job: UploadJob };

/** `sources recrawl`: decides by the source's kind (a git source is checked out again, see core/git). */
export async function recrawlAnySource(db: { pool: pg.Pool; info: ConnectionInfo }, config: Config, ref: string, options: RecrawlOptions = {}): Promise<StartedRecrawl> {
  const { id } = await resolveSource(db.pool, ref, options.version);
  const { rows } = await db.pool.query<{ kind: string }>('SELECT kind FROM sources WHERE id = $1', [id]);
  if (rows[0]?.kind === 'git') return { kind: 'git', job: await recrawlGitSource(db, config, id, { askedBy: options.askedBy ?? 'third_party' }) };
  return { kind: 'crawl', job: await recrawlSource(db, config, id, options) };
}
