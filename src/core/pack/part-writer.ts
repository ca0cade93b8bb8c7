import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { once } from 'node:events';

export interface WrittenPart {
  path: string;
  bytes: number;
  sha256: string;
  lines: number;
}

/**
 * A part spooled to a temporary file while its size and SHA-256 are counted: a tar header needs the size
 * before the bytes, so the exporter writes every part here first (docs/pack-format.md). Writes wait for the
 * file stream to drain, so memory holds one batch of rows at most.
 */
export class PartWriter {
  private readonly stream: WriteStream;
  private readonly hash = createHash('sha256');
  private bytes = 0;
  private lines = 0;

  constructor(readonly path: string) {
    this.stream = createWriteStream(path, { flags: 'wx' });
  }

  async writeLine(value: unknown): Promise<void> {
    await this.write(`${JSON.stringify(value)}\n`);
    this.lines += 1;
  }

  async write(text: string): Promise<void> {
    const chunk = Buffer.from(text, 'utf8');
    this.hash.update(chunk);
    this.bytes += chunk.length;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async close(): Promise<WrittenPart> {
    this.stream.end();
    await once(this.stream, 'close');
    return { path: this.path, bytes: this.bytes, sha256: this.hash.digest('hex'), lines: this.lines };
  }
}
