import type { PlannedLibrary, SyncResult } from '../core/project/sync.js';
import type { ProjectLibraryRow } from '../core/project/store.js';

/** `docdex sync`'s plan and outcome as plain lines (the same in a terminal and in CI). */

function label(library: Pick<PlannedLibrary, 'name' | 'version' | 'range'>): string {
  if (library.version) return `${library.name}@${library.version}`;
  return library.range ? `${library.name} (${library.range})` : library.name;
}

function stateText(library: PlannedLibrary): string {
  switch (library.state) {
    case 'other_versions':
      return `other versions: ${library.other_versions.join(', ')}`;
    case 'unresolved':
      return `unresolved: ${library.reason ?? 'unknown reason'}`;
    case 'failed':
      return `failed: ${library.reason ?? 'its indexing job did not finish'}`;
    default:
      return library.state;
  }
}

export function planLines(result: SyncResult): string[] {
  const lines = [`Project ${result.name}${result.root ? ` (${result.root})` : ''}: ${result.files.join(', ') || 'no manifests'}`];
  for (const library of result.libraries) lines.push(`  ${label(library)}${library.direct ? '' : ' (transitive)'}: ${stateText(library)}`);
  for (const skipped of result.skipped) lines.push(`  ${skipped.name}: skipped, ${skipped.reason}`);
  for (const note of result.notes) lines.push(`  note: ${note}`);
  if (result.dry_run) {
    lines.push(result.to_add.length === 0 ? 'Nothing to add.' : `Would add: ${result.to_add.join(' ')}`);
    return lines;
  }
  for (const job of result.jobs) lines.push(`${job.library}: ${job.what} queued (${job.type} job ${job.id}).`);
  if (result.jobs.length === 0) lines.push('Nothing to add: every library is indexed or unresolved.');
  return lines;
}

/** Libraries that are not indexed now, as the exit code's explanation (empty when all are). */
export function notIndexed(rows: readonly Pick<ProjectLibraryRow, 'name' | 'version' | 'document_count' | 'unresolved'>[]): string[] {
  return rows.filter((r) => r.document_count === 0).map((r) => `${r.version ? `${r.name}@${r.version}` : r.name}${r.unresolved ? ` (${r.unresolved})` : ''}`);
}
