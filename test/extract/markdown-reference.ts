// The markdown extractor as it read documents before its fast path: every chunk parsed by plain
// mdast-util-from-markdown (GFM and front matter), fenced code told from indented code by its
// source. test/extract/markdown-fast.test.ts holds the fast path to the same snippets.
import type { Code, Nodes, Root } from 'mdast';
import { fromMarkdown } from 'mdast-util-from-markdown';
import { frontmatterFromMarkdown } from 'mdast-util-frontmatter';
import { gfmFromMarkdown } from 'mdast-util-gfm';
import { frontmatter } from 'micromark-extension-frontmatter';
import { gfm } from 'micromark-extension-gfm';
import { type ChunkParser, extractMarkdown } from '../../src/core/extract/markdown.js';
import type { ExtractResult } from '../../src/core/extract/types.js';

const OPTIONS = {
  extensions: [gfm(), frontmatter(['yaml', 'toml'])],
  mdastExtensions: [gfmFromMarkdown(), frontmatterFromMarkdown(['yaml', 'toml'])],
};

/** fromMarkdown's tree; a code node whose source starts with a fence (after up to three spaces) is fenced. */
export const referenceChunkParser: ChunkParser = (text: string, onFenced: (code: Code) => void): Root => {
  const tree = fromMarkdown(text, OPTIONS);
  const stack: Nodes[] = [tree];
  while (stack.length > 0) {
    const n = stack.pop() as Nodes;
    if (n.type === 'code' && n.position?.start.offset !== undefined) {
      const fence = /^ {0,3}(?:```|~~~)/.test(text.slice(n.position.start.offset, n.position.start.offset + 6));
      if (fence) onFenced(n);
    }
    if ('children' in n) for (const c of n.children as Nodes[]) stack.push(c);
  }
  return tree;
};

/** The reference extraction of a markdown (or plain-text) document. */
export function referenceMarkdown(text: string, url: string, format: 'markdown' | 'text' = 'markdown', mdx = false): ExtractResult {
  return extractMarkdown(text, url, 'hash', format, mdx, referenceChunkParser);
}
