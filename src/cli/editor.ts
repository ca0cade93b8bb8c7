import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { UserError } from '../core/errors.js';

/**
 * Opens $VISUAL or $EDITOR on `initial` and returns the saved text. Without a terminal there is nobody to
 * type, so it refuses with the flag that takes the text from a file instead of hanging a script.
 */
export async function editInEditor(initial: string, options: { fileName?: string; alternative?: string } = {}): Promise<string> {
  const editor = process.env.VISUAL || process.env.EDITOR;
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UserError('No terminal to open an editor in.', { hint: `Pass ${options.alternative ?? '--body-file'} instead.`, code: 'editor_unavailable' });
  }
  if (!editor) throw new UserError('Set $EDITOR (or $VISUAL) to edit on the terminal.', { hint: `Or pass ${options.alternative ?? '--body-file'}.`, code: 'editor_unavailable' });
  const dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-edit-'));
  const file = path.join(dir, options.fileName ?? 'TEXT.md');
  try {
    await writeFile(file, initial, { mode: 0o600 });
    // The editor command may carry arguments ("code --wait"), so it goes through the shell.
    const result = await execa(`${editor} "$DOCDEX_EDIT_FILE"`, { shell: true, stdio: 'inherit', reject: false, env: { DOCDEX_EDIT_FILE: file } });
    if (result.exitCode !== 0) throw new UserError(`The editor exited with code ${result.exitCode}; nothing was saved.`, { code: 'aborted' });
    return await readFile(file, 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Reads `--body-file`: a path, or `-` for standard input. */
export async function readBodyFile(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    throw new UserError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`, { exitCode: 2, code: 'bad_request' });
  }
}
