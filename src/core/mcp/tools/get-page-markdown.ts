import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { markdownBlocks, packBlocks, rangeContaining } from '../markdown-chunks.js';
import type { BlockRange, MarkdownBlock } from '../markdown-chunks.js';
import { getPageByUrl, similarPageUrls } from '../queries.js';
import { countTokens } from '../tokens.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';

export const GET_PAGE_MARKDOWN = 'get_page_markdown';

const inputSchema = z.object({
  url: z
    .string()
    .trim()
    .min(1)
    .max(4000)
    .describe('URL of an indexed documentation page, normally the source URL of a get_content snippet. A #fragment and a trailing slash are ignored.'),
  max_tokens: z
    .number()
    .int()
    .min(50)
    .max(200_000)
    .optional()
    .describe('Most tokens to return. Without chunk_index: the page from its start up to this many tokens. With chunk_index: caps that chunk.'),
  chunk_index: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('0-based chunk to return when the page is longer than chunk_size. Omit for the start of the page.'),
  chunk_size: z.number().int().min(200).max(100_000).default(4000).describe('Tokens per chunk (default 4000).'),
});

interface ChunkedPage {
  blocks: MarkdownBlock[];
  chunks: BlockRange[];
  totalTokens: number;
}

// Tokenising and chunking a very large page takes seconds (a 1.4 MB reference page: ~3 s), and a model reads
// such a page one chunk per call. The last few chunked pages are kept, keyed by the stored version of the
// page, so reading on costs a lookup; bounded by total markdown size so a burst of huge pages cannot hoard memory.
const CACHE_ENTRIES = 8;
const CACHE_MAX_CHARS = 20_000_000;
const chunkCache = new Map<string, { page: ChunkedPage; chars: number }>();

function chunkPage(key: string, markdown: string, blockBudget: number, chunkSize: number): ChunkedPage {
  const hit = chunkCache.get(key);
  if (hit) {
    chunkCache.delete(key);
    chunkCache.set(key, hit);
    return hit.page;
  }
  const blocks = markdownBlocks(markdown, blockBudget);
  const page = { blocks, chunks: packBlocks(blocks, chunkSize), totalTokens: countTokens(markdown) };
  chunkCache.set(key, { page, chars: markdown.length });
  let chars = 0;
  for (const entry of chunkCache.values()) chars += entry.chars;
  for (const [k, entry] of chunkCache) {
    if (chunkCache.size <= CACHE_ENTRIES && chars <= CACHE_MAX_CHARS) break;
    if (k === key) continue;
    chunkCache.delete(k);
    chars -= entry.chars;
  }
  return page;
}

interface PageView {
  text: string;
  tokens: number;
  chunkIndex: number;
  /** Where to continue reading, when something follows. */
  nextChunk: number | undefined;
}

export async function getPageMarkdown(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const page = await getPageByUrl(deps.pool, args.url);
  if (!page) {
    const similar = await similarPageUrls(deps.pool, args.url);
    throw new UserError(`No indexed page has the URL ${args.url}.`, {
      code: 'not_found',
      hint:
        similar.length > 0
          ? `Indexed pages with similar URLs: ${similar.join(', ')}. Use a URL exactly as get_content shows it.`
          : 'Use a source URL exactly as get_content shows it; the page may not have been crawled.',
      details: similar.map((url) => ({ url })),
    });
  }

  const blockBudget = Math.min(args.chunk_size, args.max_tokens ?? Number.POSITIVE_INFINITY);
  const key = [page.source_id, page.url, page.updated_at.getTime(), args.chunk_size, blockBudget].join('\n');
  const { blocks, chunks, totalTokens } = chunkPage(key, page.markdown, blockBudget, args.chunk_size);
  const totalChunks = Math.max(1, chunks.length);

  if (args.chunk_index !== undefined && args.chunk_index >= totalChunks) {
    throw new UserError(`chunk_index ${args.chunk_index} is out of range: this page has ${totalChunks} chunk${totalChunks === 1 ? '' : 's'} of up to ${args.chunk_size} tokens (indexes 0 to ${totalChunks - 1}).`, {
      code: 'validation_error',
      hint: `Call get_page_markdown again with a chunk_index from 0 to ${totalChunks - 1} and the same chunk_size.`,
    });
  }

  let view: PageView;
  if (chunks.length === 0) {
    view = { text: '', tokens: 0, chunkIndex: 0, nextChunk: undefined };
  } else if (args.chunk_index !== undefined) {
    const chunk = chunks[args.chunk_index]!;
    const capped = args.max_tokens !== undefined && chunk.tokens > args.max_tokens ? packBlocks(blocks.slice(chunk.start, chunk.end), args.max_tokens, 1)[0]! : undefined;
    view = capped
      ? { text: capped.text, tokens: capped.tokens, chunkIndex: args.chunk_index, nextChunk: args.chunk_index + 1 < totalChunks ? args.chunk_index + 1 : undefined }
      : { text: chunk.text, tokens: chunk.tokens, chunkIndex: args.chunk_index, nextChunk: args.chunk_index + 1 < totalChunks ? args.chunk_index + 1 : undefined };
    if (capped) view.text += `\n\n[… chunk ${args.chunk_index} cut at max_tokens=${args.max_tokens}; ${chunk.tokens - capped.tokens} more tokens in this chunk]`;
  } else if (args.max_tokens !== undefined) {
    const head = packBlocks(blocks, args.max_tokens, 1)[0]!;
    const complete = head.end >= blocks.length;
    view = { text: head.text, tokens: head.tokens, chunkIndex: 0, nextChunk: complete ? undefined : rangeContaining(chunks, head.end) };
  } else {
    const first = chunks[0]!;
    view = { text: first.text, tokens: first.tokens, chunkIndex: 0, nextChunk: totalChunks > 1 ? 1 : undefined };
  }

  const hasMore = view.nextChunk !== undefined;
  const source = page.version ? `${page.source_name} ${page.version}` : page.source_name;
  const header = [
    `# ${page.title || page.url}`,
    `URL: ${page.url}`,
    `Library: ${source}`,
    totalChunks > 1 || hasMore
      ? `Chunk ${view.chunkIndex + 1} of ${totalChunks} (chunk_index ${view.chunkIndex}, ${view.tokens} tokens; whole page ${totalTokens} tokens).`
      : `Whole page, ${totalTokens} tokens.`,
    hasMore
      ? `More follows: call get_page_markdown with url="${page.url}", chunk_index=${view.nextChunk}, chunk_size=${args.chunk_size}.`
      : totalChunks > 1
        ? 'This is the last chunk.'
        : '',
  ].filter((line) => line !== '');
  const body = view.text === '' ? '(This page has no text content.)' : view.text;
  return {
    text: `${header.join('\n')}\n\n---\n\n${body}`,
    structured: {
      url: page.url,
      title: page.title,
      library: page.source_name,
      version: page.version,
      chunk_index: view.chunkIndex,
      total_chunks: totalChunks,
      has_more: hasMore,
      ...(view.nextChunk === undefined ? {} : { next_chunk_index: view.nextChunk }),
      tokens: view.tokens,
      total_tokens: totalTokens,
    },
  };
}

const outputSchema = z.object({
  url: z.string(),
  title: z.string(),
  library: z.string(),
  version: z.string(),
  chunk_index: z.number().int(),
  total_chunks: z.number().int(),
  has_more: z.boolean(),
  next_chunk_index: z.number().int().optional(),
  tokens: z.number().int(),
  total_tokens: z.number().int(),
});

export function registerGetPageMarkdownTool(server: McpServer, deps: McpDeps): DocdexTool {
  return registerDocdexTool(server, deps, {
    name: GET_PAGE_MARKDOWN,
    title: 'Get a documentation page as markdown',
    description:
      'Returns the full markdown of an indexed documentation page, for the context around a snippet (prose, related examples, parameters). ' +
      'Pass the source URL of a get_content snippet. Long pages come in chunks of chunk_size tokens (default 4000) that break between paragraphs and headings, never inside a code block: ' +
      'the first call returns chunk 0 and says how many chunks there are; call again with chunk_index=1, 2, ... to read on. ' +
      'max_tokens caps how much text one call returns.',
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => getPageMarkdown(deps, args),
  });
}
