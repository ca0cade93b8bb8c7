import type { AddOutcome } from '../core/library/outcome.js';
import type { LibraryResult } from '../core/library/results.js';
import { plural } from './plural.js';

/** `docdex add` and `docdex sync` as plain lines: what was queued, what each library holds once its jobs are done. */

function label(library: { name: string; version: string }): string {
  return library.version ? `${library.name}@${library.version}` : library.name;
}

function holds(library: { document_count: number; snippet_count: number }): string {
  return `${plural(library.document_count, 'document')}, ${library.snippet_count === 0 ? 'no code snippets' : plural(library.snippet_count, 'snippet')}`;
}

/** A queued or already indexed spec (stdout); a failed one is an error the caller prints on stderr. */
export function outcomeLines(outcome: Exclude<AddOutcome, { status: 'failed' }>): string[] {
  if (outcome.status === 'indexed') return [`${label(outcome)}: already indexed (${holds(outcome)}); nothing fetched. --refresh fetches it again.`];
  return [...outcome.jobs.map((job) => `${label(outcome)}: ${job.what} queued (${job.type} job ${job.id}).`), ...outcome.notes.map((note) => `${label(outcome)}: note: ${note}.`)];
}

/** What a library holds once its jobs are done, said plainly: indexed, nothing to search, or not indexed. */
export function resultLine(result: LibraryResult): string {
  if (result.state === 'indexed') return `${result.library}: indexed, ${holds(result)}.`;
  if (result.state === 'nothing_to_search') return `${result.library}: nothing to search: ${holds(result)} (its docs have no code blocks; the pages stay readable with MCP get_page_markdown).`;
  return `${result.library}: not indexed: none of its sources stored a document.`;
}

/** One warning per job of the library that did not complete, with its reason. */
export function warningLines(result: LibraryResult): string[] {
  return result.warnings.map((w) => `Warning: ${result.library}: ${w.what} was not indexed (${w.type} job ${w.job_id}): ${w.reason.replace(/\.$/, '')}.`);
}
