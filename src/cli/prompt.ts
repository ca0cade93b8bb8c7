import { createInterface } from 'node:readline/promises';
import { UserError } from '../core/errors.js';

/**
 * Asks a yes/no question on the terminal. Without a TTY there is nobody to answer, so it refuses with the
 * flag that skips the question instead of hanging a script.
 */
export async function confirm(question: string, forceFlag = '--force'): Promise<boolean> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UserError(`Refusing to continue without confirmation: no terminal to ask "${question}"`, {
      hint: `Re-run with ${forceFlag} to confirm non-interactively.`,
      code: 'confirmation_required',
    });
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
