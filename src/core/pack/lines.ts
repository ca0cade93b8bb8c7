import { UserError } from '../errors.js';

/** A part's bytes cut into lines, each at most `maxBytes`; a line longer than that is refused as it grows. */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly where: string,
  ) {}

  push(chunk: Buffer): string[] {
    const lines: string[] = [];
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      this.take(chunk.subarray(start, nl));
      lines.push(Buffer.concat(this.pending, this.pendingBytes).toString('utf8'));
      this.pending = [];
      this.pendingBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
    return lines;
  }

  /** At the end of the part: every line ends with a newline. */
  end(): void {
    if (this.pendingBytes > 0) throw new UserError(`${this.where} ends in the middle of a line.`, { code: 'pack_invalid' });
  }

  private take(piece: Buffer): void {
    this.pendingBytes += piece.length;
    if (this.pendingBytes > this.maxBytes) throw new UserError(`${this.where} has a line over ${this.maxBytes} bytes.`, { code: 'pack_invalid' });
    this.pending.push(piece);
  }
}
