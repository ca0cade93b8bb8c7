// Extraction of untrusted documents (crawled pages, uploaded files) off the thread that answers
// requests, with a time budget per document. Whoever starts workers creates one ExtractionPool, passes
// it down, and closes it with the workers. Its threads start on the first document, not before.
import { Piscina } from 'piscina';
import type { ExtractInput, ExtractResult } from '../extract/index.js';
import { threadEntry } from '../threads.js';

export interface ExtractionPoolOptions {
  /** Worker threads (and documents extracted at once). */
  threads: number;
  /** Budget per document, from the moment a thread takes it. */
  timeoutMs: number;
}

/** A document the pool could not extract: over its time budget, or its thread died. Its message is the reason. */
export class ExtractionError extends Error {
  override readonly name = 'ExtractionError';
}

export interface ExtractionPool {
  /** Extracts one document in a worker thread; rejects with ExtractionError when over budget or failed. */
  extract(input: ExtractInput): Promise<ExtractResult>;
  /** Ends the threads; documents still waiting reject. */
  close(): Promise<void>;
}

function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}

class PiscinaExtractionPool implements ExtractionPool {
  private piscina: Piscina | null = null;
  private warm: Promise<unknown> | null = null;
  private closed = false;
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly options: ExtractionPoolOptions) {
    this.free = options.threads;
  }

  async extract(input: ExtractInput): Promise<ExtractResult> {
    await this.acquire();
    try {
      const piscina = await this.started();
      // The budget starts here: this document has a thread of its own (at most `threads` run at once).
      const controller = new AbortController();
      const timer = setTimeout(() => controller.abort(), this.options.timeoutMs);
      try {
        return (await piscina.run(input, { signal: controller.signal })) as ExtractResult;
      } catch (error) {
        if (!controller.signal.aborted) throw new ExtractionError(`extraction failed: ${(error as Error).message}`);
        // Piscina terminated the thread; its replacement loads the extractor before the next budget starts.
        this.warm = piscina.run(null).catch(() => undefined);
        await this.warm;
        throw new ExtractionError(`extraction took longer than ${seconds(this.options.timeoutMs)}`);
      } finally {
        clearTimeout(timer);
      }
    } finally {
      this.release();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.waiting.splice(0)) wake();
    const piscina = this.piscina;
    this.piscina = null;
    if (piscina) await piscina.destroy();
  }

  private async started(): Promise<Piscina> {
    if (this.closed) throw new ExtractionError('extraction failed: the worker is stopping');
    if (this.piscina === null) {
      this.piscina = new Piscina({ filename: threadEntry(import.meta.url, 'thread'), minThreads: 0, maxThreads: this.options.threads, idleTimeout: 60_000 });
      this.warm = this.piscina.run(null);
    }
    const piscina = this.piscina;
    await this.warm;
    return piscina;
  }

  private async acquire(): Promise<void> {
    while (this.free === 0 && !this.closed) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.free--;
  }

  private release(): void {
    this.free++;
    this.waiting.shift()?.();
  }
}

export function createExtractionPool(options: ExtractionPoolOptions): ExtractionPool {
  return new PiscinaExtractionPool({ threads: Math.max(1, Math.floor(options.threads)), timeoutMs: options.timeoutMs });
}
