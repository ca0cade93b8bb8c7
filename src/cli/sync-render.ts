import type { PlannedLibrary, SyncResult } from '../core/project/sync.js';
import type { ProjectLibraryRow } from '../core/project/store.js';
import { plural } from './plural.js';

/** `docdex sync`'s plan and outcome as plain lines (the same in a terminal and in CI). */

function label(library: Pick<PlannedLibrary, 'name' | 'version' | 'range'>): string {
  if (library.version) return `${library.name}@${library.version}`;
  return library.range ? `${library.name} (${library.range})` : library.name;
}

function stateText(library: PlannedLibrary): string {
  switch (library.state) {
    case 'indexed':
      // Documents but no code blocks (a README without examples): searches find nothing in it.
      return library.snippet_count === 0
        ? `indexed, nothing to search (${plural(library.document_count, 'document')}, no code snippets)`
        : `indexed (${plural(library.document_count, 'document')}, ${plural(library.snippet_count, 'snippet')})`;
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
  if (result.jobs.length === 0) {
    const unresolved = result.libraries.filter((l) => l.state === 'unresolved').length;
    lines.push(unresolved === 0 ? 'Nothing to add: every library is indexed.' : `Nothing to add: every library is indexed or unresolved (${unresolved} unresolved).`);
  }
  return lines;
}

/**
 * The next steps of the libraries that could not be resolved, each said once however many libraries share it
 * (PyPI unreachable is one hint, not one per dependency).
 */
export function hintLines(result: SyncResult): string[] {
  const hints = new Set(result.libraries.filter((l) => l.state === 'unresolved' && l.hint).map((l) => l.hint!));
  return [...hints].map((hint) => `Hint: ${hint}`);
}

type NotIndexedRow = Pick<ProjectLibraryRow, 'name' | 'version' | 'document_count' | 'unresolved'>;

const libraryOf = (r: NotIndexedRow) => (r.version ? `${r.name}@${r.version}` : r.name);

/** Libraries that are not indexed now, with the reason when sync could not resolve one (`--json`'s `not_indexed`). */
export function notIndexed(rows: readonly NotIndexedRow[]): string[] {
  return rows.filter((r) => r.document_count === 0).map((r) => `${libraryOf(r)}${r.unresolved ? ` (${r.unresolved})` : ''}`);
}

/** The closing line's list: each library named once, its reason being on its own line above already. */
export function notIndexedNames(rows: readonly NotIndexedRow[]): string[] {
  return rows.filter((r) => r.document_count === 0).map(libraryOf);
}
