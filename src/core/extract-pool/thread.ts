// The worker thread's side of the extraction pool: one document in, its extraction out. From the TypeScript
// sources (vitest) it loads them through module hooks first (core/threads.ts).
import type * as Threads from '../threads.js';

if (import.meta.url.endsWith('.ts')) {
  const threads: string = '../threads.ts';
  ((await import(threads)) as typeof Threads).loadSourcesInThread();
}

const { extractDocument } = await import('../extract/index.js');

/** A task is an ExtractInput; `null` only loads the extractor (the pool warms a new thread with it). */
export default function extract(input: Parameters<typeof extractDocument>[0] | null): ReturnType<typeof extractDocument> | null {
  return input === null ? null : extractDocument(input);
}
