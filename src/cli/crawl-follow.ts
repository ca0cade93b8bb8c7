import type { Config } from '../core/config.js';
import { cancelCrawl, liveWorkers, startCrawlWorkers, waitForJob } from '../core/crawl/index.js';
import type { CrawlJob, CrawlWorkers } from '../core/crawl/index.js';
import type { Database } from '../core/db/connect.js';
import { llmProgressText } from '../core/llm/progress-text.js';
import { fromCrawlJob } from '../ui/job-view.js';
import type { LiveJobDisplay } from '../ui/live-job.js';
import { documentStages, stageUpkeep } from '../core/pipeline/stages.js';
import { plural } from './plural.js';

/**
 * `--wait` for crawl start/resume. When no worker process is connected, the crawl runs here, so crawling
 * works with nothing else started. A TTY gets a live progress block (Ink), anything else one plain line every
 * few seconds, and `--json` nothing until the final document. The first Ctrl-C cancels an in-process crawl
 * (resumable later) or, when a worker elsewhere runs it, just stops following.
 */

export interface FollowOptions {
  tty: boolean;
  json: boolean;
  log(line: string): void;
  warn(line: string): void;
  /** Seconds between plain progress lines without a TTY. */
  lineIntervalSeconds?: number;
}

export function progressLine(job: CrawlJob): string {
  if (job.status === 'enhancing') return `crawl ${job.job_id.slice(0, 8)} enhancing: ${llmProgressText(job)}`;
  const eta = job.eta_seconds === null ? '-' : `${job.eta_seconds}s`;
  return `crawl ${job.job_id.slice(0, 8)} ${job.status}: ${job.pages_crawled}/${plural(job.pages_found, 'page')}, ${job.pages_skipped} skipped, ${job.pages_failed} failed, ${plural(job.snippets_stored, 'snippet')}, ${job.pages_per_second} pages/s, ETA ${eta}`;
}

export function summaryLine(job: CrawlJob): string {
  const what = `${plural(job.pages_crawled, 'page')} crawled, ${job.pages_skipped} skipped, ${job.pages_failed} failed, ${plural(job.snippets_stored, 'snippet')}`;
  const llm = job.llm_enhance && job.llm_pages_total > 0 ? `; ${llmProgressText(job)}` : '';
  if (job.status === 'completed') return `Crawl of ${job.name} completed: ${what}${llm} (job ${job.job_id}).`;
  if (job.status === 'cancelled') return `Crawl of ${job.name} cancelled: ${what}. Resume with \`docdex crawl resume ${job.job_id}\`.`;
  return `Crawl of ${job.name} ${job.status}: ${job.error ?? 'unknown error'} (${what}; job ${job.job_id}).`;
}

/** The job as last seen; `stoppedFollowing` when Ctrl-C left it running on a worker elsewhere. */
export interface FollowResult {
  job: CrawlJob;
  stoppedFollowing: boolean;
  /** Ctrl-C came: the crawl was cancelled here (in-process workers) or goes on (a worker's). */
  interrupted: boolean;
}

/**
 * The workers a followed job needs when no worker process is connected: its pages, and with LLM enhancement on
 * the LLM stage, so the job gets through enhancing too. Null when a worker elsewhere runs it.
 */
async function startLocalWorkers(db: Database, config: Config, job: CrawlJob, options: FollowOptions): Promise<CrawlWorkers | null> {
  if ((await liveWorkers(db.pool)).length > 0) return null;
  // Sized for this job: more slots than its concurrency cap would only hold idle connections.
  const stages = documentStages(config);
  const crawl = await startCrawlWorkers(db, config, {
    concurrency: job.max_concurrent_crawls,
    supervise: false,
    stages,
    onError: (error) => options.warn(`worker: ${error.message}`),
  });
  if (!config.llm.enabled) return crawl;
  // Loaded only with enhancement on: the model client and tokenizer are large.
  const { startLlmWorkers } = await import('../core/llm/worker.js');
  const llmOptions = { upkeep: stageUpkeep(stages), pollingIntervalSeconds: 0.5, sweepIntervalMs: 1000 };
  const llm = await startLlmWorkers(db, config, { ...llmOptions, onError: (error) => options.warn(`llm: ${errorMessage(error)}`) }).catch(async (error: unknown) => {
    await crawl.stop();
    throw error;
  });
  return {
    id: crawl.id,
    async stop() {
      await Promise.all([crawl.stop(), llm.stop()]);
    },
  };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export async function followCrawl(db: Database, config: Config, job: CrawlJob, options: FollowOptions): Promise<FollowResult> {
  const workers = await startLocalWorkers(db, config, job, options);
  // Listening before the first line: a Ctrl-C as soon as the progress shows is an interrupt, not a kill.
  const stopFollowing = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    interrupted = true;
    if (workers) {
      // The crawl runs in this process: stop it properly so the job is resumable, not orphaned.
      cancelCrawl(db.pool, job.job_id).catch(() => stopFollowing.abort());
    } else {
      stopFollowing.abort(new Error('stopped following'));
    }
  };
  process.once('SIGINT', onSigint);
  let display: LiveJobDisplay | null = null;
  if (options.tty && !options.json) {
    const { renderLiveJob } = await import('../ui/live-job.js');
    display = renderLiveJob(fromCrawlJob(job));
  }
  let latest = job;
  let timer: NodeJS.Timeout | null = null;
  if (!options.tty && !options.json) {
    options.log(progressLine(job));
    timer = setInterval(() => options.log(progressLine(latest)), (options.lineIntervalSeconds ?? 5) * 1000);
  }
  let stoppedFollowing = false;
  try {
    const final = await waitForJob(
      db,
      job.job_id,
      (j) => {
        latest = j;
        display?.update(fromCrawlJob(j));
      },
      { signal: stopFollowing.signal },
    ).catch(async (error: unknown) => {
      if (!stopFollowing.signal.aborted) throw error;
      options.warn(`Stopped following; the crawl continues on its worker. Follow it with \`docdex crawl status ${job.job_id}\`.`);
      stoppedFollowing = true;
      return latest;
    });
    display?.stop(fromCrawlJob(final));
    display = null;
    return { job: final, stoppedFollowing, interrupted };
  } finally {
    process.removeListener('SIGINT', onSigint);
    if (timer) clearInterval(timer);
    display?.stop();
    await workers?.stop();
  }
}

/**
 * `--wait` as `crawl start` and `crawl resume` share it: follow to the end, print the summary, and make the
 * exit code say whether the crawl completed (scripted CI indexing depends on it).
 */
export async function followToEnd(db: Database, config: Config, job: CrawlJob, options: FollowOptions): Promise<CrawlJob> {
  const { job: final, stoppedFollowing, interrupted } = await followCrawl(db, config, job, options);
  // Interrupted, not failed: 130 is how shells report Ctrl-C. A worker's crawl goes on, as followCrawl has said.
  if (interrupted) process.exitCode = 130;
  if (stoppedFollowing) return final;
  if (!options.json) options.log(summaryLine(final));
  // Cancelled by that Ctrl-C is still an interrupt (130), resumable as the summary says, not a failure.
  if (final.status !== 'completed' && !interrupted) process.exitCode = 1;
  return final;
}
