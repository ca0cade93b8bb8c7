import type { UploadJob } from '../core/upload/job-rows.js';
import { llmProgressText } from '../core/llm/progress-text.js';
import { plural } from './plural.js';

/** The line `upload --wait` and `add --wait` end an upload job with: files, snippets, the library, the LLM stage. */
export function uploadSummaryLine(job: UploadJob): string {
  const library = `${job.source_name ?? job.name}${job.version ? `@${job.version}` : ''}`;
  const llm = job.llm_enhance && job.llm_pages_total > 0 ? `; ${llmProgressText(job)}` : '';
  const outcome = job.status === 'completed' ? 'Indexed' : job.status === 'cancelled' ? 'Cancelled' : 'Failed';
  const included = job.includes_resolved + job.includes_unresolved;
  const includes = included === 0 ? '' : `, ${job.includes_resolved} of ${plural(included, 'include')} resolved`;
  return `${outcome}: ${job.processed_files - job.failed_files} of ${plural(job.file_count, 'file')}, ${plural(job.snippets_extracted, 'snippet')}${includes}, into ${library}${llm} (job ${job.id}).`;
}

/** Warnings for the include directives a job kept as written, the first few by name. */
export function unresolvedIncludeLines(job: UploadJob): string[] {
  const shown = job.unresolved_includes.slice(0, 10).map((u) => `include not resolved in ${u.path}: ${u.include} (${u.reason})`);
  const more = job.includes_unresolved - shown.length;
  return more > 0 ? [...shown, `${plural(more, 'more include')} not resolved`] : shown;
}
