import type { UploadJob } from '../core/upload/index.js';
import { llmProgressText } from '../core/llm/progress-text.js';
import { plural } from './plural.js';

/** The line `upload --wait` and `add --wait` end an upload job with: files, snippets, the library, the LLM stage. */
export function uploadSummaryLine(job: UploadJob): string {
  const library = `${job.source_name ?? job.name}${job.version ? `@${job.version}` : ''}`;
  const llm = job.llm_enhance && job.llm_pages_total > 0 ? `; ${llmProgressText(job)}` : '';
  const outcome = job.status === 'completed' ? 'Indexed' : job.status === 'cancelled' ? 'Cancelled' : 'Failed';
  return `${outcome}: ${job.processed_files - job.failed_files} of ${plural(job.file_count, 'file')}, ${plural(job.snippets_extracted, 'snippet')}, into ${library}${llm} (job ${job.id}).`;
}
