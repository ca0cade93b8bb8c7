import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { UserError } from '../../errors.js';
import { markdownBlocks, packBlocks } from '../markdown-chunks.js';
import type { BlockRange, MarkdownBlock } from '../markdown-chunks.js';
import { getPageByUrl, similarPageUrls } from '../queries.js';
import { countTokens } from '../tokens.js';
import { registerDocdexTool } from '../tool.js';
import type { DocdexTool, McpDeps, ToolOutput } from '../tool.js';

export const GET_PAGE_MARKDOWN = 'get_page_markdown';

const inputSchema = z.object({
  url: z.string().trim().min(1).max(4000).describe('URL of an indexed documentation page, normally the source URL of a get_content snippet. A #fragment and a trailing slash are ignored.'),
  max_tokens: z
    .number()
    .int()
    .min(50)
    .max(200_000)
    .optional()
    .describe(
      'Most tokens to return. Without chunk_index: the page is read in chunks of this many tokens and the first is returned (read on with the chunk_index and chunk_size the answer gives). With chunk_index: caps that chunk.',
    ),
  chunk_index: z.number().int().min(0).optional().describe('0-based chunk to return when the page is longer than chunk_size. Omit for the start of the page.'),
  chunk_size: z.number().int().min(200).max(100_000).default(4000).describe('Tokens per chunk (default 4000).'),
});

interface ChunkedPage {
  blocks: MarkdownBlock[];
  chunks: BlockRange[];
  totalTokens: number;
}

// Tokenising and chunking a very large page is slow, and a model reads
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

async function findPage(deps: McpDeps, url: string): Promise<NonNullable<Awaited<ReturnType<typeof getPageByUrl>>>> {
  const page = await getPageByUrl(deps.pool, url);
  if (page) return page;
  const similar = await similarPageUrls(deps.pool, url);
  throw new UserError(`No indexed page has the URL ${url}.`, {
    code: 'not_found',
    hint:
      similar.length > 0
        ? `Indexed pages with similar URLs: ${similar.join(', ')}. Use a URL exactly as get_content shows it.`
        : 'Use a source URL exactly as get_content shows it; the page may not have been crawled.',
    details: similar.map((u) => ({ url: u })),
  });
}

/**
 * The chunk a call returns. max_tokens with a chunk_index caps that chunk; max_tokens alone reads the page in
 * chunks of max_tokens (when smaller than chunk_size), so its start is chunk 0 and reading on is chunk_index 1
 * with that chunk_size: the follow-up call continues exactly where this text ends.
 */
function selectView(page: ChunkedPage, args: z.output<typeof inputSchema>): PageView {
  const { blocks, chunks } = page;
  const totalChunks = Math.max(1, chunks.length);
  if (chunks.length === 0) return { text: '', tokens: 0, chunkIndex: 0, nextChunk: undefined };
  const index = args.chunk_index ?? 0;
  const chunk = chunks[index]!;
  const nextChunk = index + 1 < totalChunks ? index + 1 : undefined;
  const cap = args.chunk_index !== undefined ? args.max_tokens : undefined;
  if (cap === undefined || chunk.tokens <= cap) return { text: chunk.text, tokens: chunk.tokens, chunkIndex: index, nextChunk };
  const capped = packBlocks(blocks.slice(chunk.start, chunk.end), cap, 1)[0]!;
  const text = `${capped.text}\n\n[… chunk ${index} cut at max_tokens=${cap}; ${chunk.tokens - capped.tokens} more tokens in this chunk]`;
  return { text, tokens: capped.tokens, chunkIndex: index, nextChunk };
}

export async function getPageMarkdown(deps: McpDeps, args: z.output<typeof inputSchema>): Promise<ToolOutput> {
  const page = await findPage(deps, args.url);
  const chunkSize = args.chunk_index === undefined && args.max_tokens !== undefined ? Math.min(args.chunk_size, args.max_tokens) : args.chunk_size;
  const blockBudget = Math.min(chunkSize, args.max_tokens ?? Number.POSITIVE_INFINITY);
  const key = [page.source_id, page.url, page.updated_at.getTime(), chunkSize, blockBudget].join('\n');
  const chunked = chunkPage(key, page.markdown, blockBudget, chunkSize);
  const totalChunks = Math.max(1, chunked.chunks.length);
  const totalTokens = chunked.totalTokens;

  if (args.chunk_index !== undefined && args.chunk_index >= totalChunks) {
    throw new UserError(
      `chunk_index ${args.chunk_index} is out of range: this page has ${totalChunks} chunk${totalChunks === 1 ? '' : 's'} of up to ${chunkSize} tokens (indexes 0 to ${totalChunks - 1}).`,
      {
        code: 'validation_error',
        hint: `Call get_page_markdown again with a chunk_index from 0 to ${totalChunks - 1} and the same chunk_size.`,
      },
    );
  }
  const view = selectView(chunked, args);

  const hasMore = view.nextChunk !== undefined;
  const source = page.version ? `${page.source_name} ${page.version}` : page.source_name;
  const header = [
    `# ${page.title || page.url}`,
    `URL: ${page.url}`,
    `Library: ${source}`,
    totalChunks > 1 || hasMore
      ? `Chunk ${view.chunkIndex + 1} of ${totalChunks} (chunk_index ${view.chunkIndex}, ${view.tokens} tokens; whole page ${totalTokens} tokens).`
      : `Whole page, ${totalTokens} tokens.`,
    hasMore ? `More follows: call get_page_markdown with url="${page.url}", chunk_index=${view.nextChunk}, chunk_size=${chunkSize}.` : totalChunks > 1 ? 'This is the last chunk.' : '',
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
      chunk_size: chunkSize,
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
  /** The chunk_size the chunk indexes refer to: pass it with next_chunk_index to read on. */
  chunk_size: z.number().int(),
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
      'max_tokens caps how much text one call returns; the answer says which chunk_index and chunk_size continue it.',
    inputSchema,
    outputSchema,
    annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    run: (args) => getPageMarkdown(deps, args),
  });
}
