import { routesText } from '../core/crawl/jobs.js';
import { jobStatusText } from '../core/jobs/status-text.js';
import type { JobReport, JobSummary } from '../core/jobs/jobs.js';
import { llmProgressText } from '../core/llm/progress-text.js';
import type { CrawlJobReport } from '../core/stats/job-errors.js';
import { plural } from './plural.js';

/** `jobs status` and `crawl status`: a job of either kind as lines, with its latest failures. */

function crawlLines(job: CrawlJobReport): string[] {
  const lines = [
    `${job.name}${job.version ? ` ${job.version}` : ''}: ${jobStatusText(job.status, job.pages_failed)} (crawl job ${job.job_id})`,
    `  pages:    ${job.pages_crawled} crawled, ${job.pages_skipped} skipped, ${job.pages_failed} failed, ${job.pages_found} found`,
    `  snippets: ${job.snippets_stored}`,
  ];
  const routes = routesText(job.routes);
  if (routes) lines.push(`  read:     ${routes}`);
  if (job.pages_rendered > 0) lines.push(`  rendered: ${plural(job.pages_rendered, 'page')} in headless Chromium (--render ${job.render})`);
  if (job.render_hint) lines.push(`  render:   ${job.render_hint}`);
  if (job.llm_enhance && job.llm_pages_total > 0) lines.push(`  llm:      ${llmProgressText(job)}`);
  if (job.status === 'running') {
    lines.push(`  rate:     ${job.pages_per_second} pages/s, ETA ${job.eta_seconds === null ? '-' : `${job.eta_seconds} s`}`);
    if (job.current_url) lines.push(`  fetching: ${job.current_url}`);
  }
  lines.push(`  start:    ${job.start_urls.join(' ')} (depth ${job.max_depth}, concurrency ${job.max_concurrent_crawls})`);
  lines.push(`  created:  ${job.created_at}${job.completed_at ? `, finished ${job.completed_at}` : ''}`);
  if (job.error) lines.push(`  error:    ${job.error}`);
  if (job.recent_errors.length > 0) {
    const more = job.pages_failed - job.recent_errors.length;
    lines.push(`  last errors${more > 0 ? ` (${job.recent_errors.length} of ${job.pages_failed})` : ''}:`);
    for (const e of job.recent_errors) lines.push(`    ${e.url}  ${e.error}`);
  }
  return lines;
}

function uploadLines(job: Extract<JobReport, { kind: 'upload' }>): string[] {
  const library = `${job.source_name ?? job.name}${job.version ? ` ${job.version}` : ''}`;
  const what = job.source_type === 'git' ? 'git checkout' : 'upload';
  const lines = [
    `${library}: ${jobStatusText(job.status, job.failed_files)} (${what} job ${job.id})`,
    `  files:    ${job.processed_files - job.failed_files} indexed, ${job.failed_files} failed, ${job.file_count} in all`,
    `  snippets: ${job.snippets_extracted}`,
  ];
  if (job.llm_enhance && job.llm_pages_total > 0) lines.push(`  llm:      ${llmProgressText(job)}`);
  lines.push(`  created:  ${job.created_at}${job.completed_at ? `, finished ${job.completed_at}` : ''}`);
  if (job.error) lines.push(`  error:    ${job.error}`);
  if (job.recent_errors.length > 0) {
    lines.push(`  last errors${job.failed_files > job.recent_errors.length ? ` (${job.recent_errors.length} of ${job.failed_files})` : ''}:`);
    for (const e of job.recent_errors) lines.push(`    ${e.path}  ${e.error}`);
  }
  if (job.status === 'cancelled') lines.push(`  Resume it with \`docdex jobs resume ${job.id}\`.`);
  return lines;
}

export function jobReportLines(report: JobReport): string[] {
  return report.kind === 'crawl' ? crawlLines(report) : uploadLines(report);
}

/** `jobs list` as a table: id prefix, kind, status, progress, snippets, creation time, library. */
export function jobTableLines(items: readonly JobSummary[]): string[] {
  const rows = items.map((j) => [
    j.id.slice(0, 8),
    j.kind,
    jobStatusText(j.status, j.failed),
    `${j.done}/${j.total} ${j.unit}`,
    String(j.snippets),
    j.created_at.slice(0, 19).replace('T', ' '),
    `${j.name}${j.version ? ` ${j.version}` : ''}`,
  ]);
  const head = ['JOB', 'KIND', 'STATUS', 'PROGRESS', 'SNIPPETS', 'CREATED', 'NAME'];
  const numeric = new Set([3, 4]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) =>
    r
      .map((cell, i) => (numeric.has(i) ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

export function morePagesLine(page: { total: number; offset: number; items: readonly unknown[] }): string | null {
  const next = page.offset + page.items.length;
  return page.total > next ? `(${plural(page.total, 'job')}; next page: --offset ${next})` : null;
}
