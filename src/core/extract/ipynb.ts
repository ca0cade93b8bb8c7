/**
 * Jupyter notebooks (nbformat 4, and the cell list of 3) as markdown: markdown cells as they are, code cells as
 * fenced blocks in the kernel's language, raw cells as plain text. Outputs are dropped: they are results, not
 * the code a reader copies, and they hold images and large data. Pure: any text in, markdown or a
 * NotebookError out.
 */

export class NotebookError extends Error {
  override readonly name = 'NotebookError';
}

interface Cell {
  cell_type?: unknown;
  source?: unknown;
}

/** A cell's source: nbformat stores it as a string or as a list of lines (each keeping its newline). */
function cellText(source: unknown): string {
  if (typeof source === 'string') return source;
  if (Array.isArray(source)) return source.filter((line): line is string => typeof line === 'string').join('');
  return '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The kernel's language: language_info.name, else kernelspec.language, else the notebook (v3) language. */
function notebookLanguage(notebook: Record<string, unknown>): string {
  const metadata = isRecord(notebook.metadata) ? notebook.metadata : {};
  const info = isRecord(metadata.language_info) ? metadata.language_info : {};
  const spec = isRecord(metadata.kernelspec) ? metadata.kernelspec : {};
  for (const candidate of [info.name, spec.language, metadata.language]) {
    if (typeof candidate === 'string' && /^[\w+#.-]{1,40}$/.test(candidate.trim())) return candidate.trim().toLowerCase();
  }
  return '';
}

/** A fence longer than any backtick run in the code, so the code cannot close it. */
function fenceFor(code: string): string {
  let longest = 0;
  for (const run of code.match(/`+/g) ?? []) longest = Math.max(longest, run.length);
  return '`'.repeat(Math.max(3, longest + 1));
}

function cellsOf(notebook: Record<string, unknown>): Cell[] {
  if (Array.isArray(notebook.cells)) return notebook.cells.filter(isRecord);
  // nbformat 3 keeps its cells in worksheets.
  if (Array.isArray(notebook.worksheets)) {
    return notebook.worksheets.filter(isRecord).flatMap((sheet) => (Array.isArray(sheet.cells) ? sheet.cells.filter(isRecord) : []));
  }
  throw new NotebookError('not a Jupyter notebook: no cells');
}

function renderCell(cell: Cell, language: string): string {
  const text = cellText(cell.source ?? (cell as { input?: unknown }).input).replace(/\r\n?/g, '\n');
  if (text.trim() === '') return '';
  if (cell.cell_type === 'code') {
    const fence = fenceFor(text);
    return `${fence}${language}\n${text.replace(/\n+$/, '')}\n${fence}`;
  }
  return text.trim();
}

/** The notebook's markdown. Throws NotebookError for anything that is not notebook JSON. */
export function notebookToMarkdown(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new NotebookError('not a Jupyter notebook: invalid JSON');
  }
  if (!isRecord(parsed)) throw new NotebookError('not a Jupyter notebook: not a JSON object');
  const language = notebookLanguage(parsed);
  const parts = cellsOf(parsed)
    .map((cell) => renderCell(cell, language))
    .filter((part) => part !== '');
  return parts.length === 0 ? '' : `${parts.join('\n\n')}\n`;
}

/** A notebook, by its content type or the `.ipynb` extension of its URL's path. */
export function isNotebook(path: string, contentType: string | null | undefined): boolean {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return type === 'application/x-ipynb+json' || path.endsWith('.ipynb');
}
