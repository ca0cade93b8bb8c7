import type { ExtractInput, ExtractResult } from '../extract/index.js';

/**
 * Extraction in the calling thread, for callers that have no extraction pool (tests, one-off commands). The
 * extractors are imported when the first document comes, not with the caller: a worker extracts in its pool's
 * threads, and its own thread would otherwise load and keep every extractor (htmlparser2, micromark, yaml and
 * their like, about 250 modules) without ever running them.
 */
export async function extractInProcess(input: ExtractInput): Promise<ExtractResult> {
  const { extractDocument } = await import('../extract/index.js');
  return extractDocument(input);
}
