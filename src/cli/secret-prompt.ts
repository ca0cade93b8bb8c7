import { UserError } from '../core/errors.js';

/** Reads all of standard input (a piped secret), without its trailing newline. */
export async function readStdinSecret(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/**
 * Asks for a secret on the terminal without echoing it. Without a TTY there is nobody to ask: it refuses
 * and names the flag that reads the secret from standard input instead.
 */
export async function promptSecret(question: string, stdinFlag: string): Promise<string> {
  const input = process.stdin;
  if (!input.isTTY || !process.stderr.isTTY) {
    throw new UserError(`No terminal to ask for the secret ("${question}").`, { hint: `Pipe it in with ${stdinFlag}.`, code: 'secret_required' });
  }
  process.stderr.write(`${question} `);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  try {
    return await new Promise<string>((resolve, reject) => {
      let value = '';
      const onData = (chunk: string) => {
        for (const ch of chunk) {
          if (ch === '\r' || ch === '\n') {
            input.off('data', onData);
            resolve(value);
            return;
          }
          if (ch === '\u0003') {
            input.off('data', onData);
            reject(new UserError('Cancelled.', { code: 'cancelled' }));
            return;
          }
          if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
          else value += ch;
        }
      };
      input.on('data', onData);
    });
  } finally {
    input.setRawMode(false);
    input.pause();
    process.stderr.write('\n');
  }
}
