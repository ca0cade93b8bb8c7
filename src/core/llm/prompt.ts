import { countTokens, decode, encode } from 'gpt-tokenizer';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { DESCRIPTION_MAX_WORDS, DESCRIPTION_MIN_WORDS } from './schema.js';

/**
 * The prompt, and how a page's snippets are cut into batches. PROMPT_VERSION is part of the cache key: bump it
 * whenever the wording, the schema or the field checks change what a good answer is, so cached answers from the
 * old prompt are not reused.
 */
export const PROMPT_VERSION = 1;

// Token figures are o200k counts; other tokenizers differ by a few percent, which these margins absorb.
/** Code beyond this is cut on a line boundary: the start of a block says what it is. */
export const MAX_CODE_TOKENS = 900;
/** Prompt size per call. Small enough for a local model's default 4096-token context with room to answer. */
export const MAX_BATCH_PROMPT_TOKENS = 2800;
export const MAX_BATCH_BLOCKS = 6;
const CONTEXT_CHARS = 700;
const INTRO_CHARS = 500;

export interface PromptBlock {
  code: string;
  /** The extractor's title (often the nearest heading). */
  title: string;
  /** The extractor's description: text around the block on the page. */
  context: string;
  language: string;
  languageSure: boolean;
}

export interface PromptPage {
  title: string;
  url: string;
  markdown: string;
}

const SYSTEM_PROMPT = `You describe code blocks taken from one documentation page, for a code search index.
For every numbered block return an entry in "blocks":
- "block": the block's number.
- "language": the programming language or format of the code in lowercase (python, javascript, typescript, shell, console, sql, json, yaml, toml, html, xml, css, go, rust, java, c, cpp, csharp, ruby, php, dockerfile, diff, ini, markdown, ...), or null if it is plain text or you cannot tell.
- "title": 3 to 10 words naming what this code does. Never a generic title such as "Example", "Code" or "Usage", and never just the page title.
- "description": ${DESCRIPTION_MIN_WORDS + 5} to ${DESCRIPTION_MAX_WORDS - 10} words saying what the code does and when to use it. Use only facts from the code and the page text given. Do not name any function, class, option or API that does not appear there.
In "relationships" list links between blocks of this request that the code clearly supports, with "from" and "to" block numbers:
- "imports": block "from" uses a function, class or variable that block "to" defines.
- "setup-for": block "from" must run before block "to" (installation, configuration, fixtures).
- "alternative-to": block "from" does the same as block "to" another way (another language, tool or style).
- "continues": block "from" continues the code of the earlier block "to".
Each relationship has a "reason" of at most 15 words. Use an empty list when none apply.
Answer with one JSON object and nothing else, shaped like:
{"blocks":[{"block":1,"language":"python","title":"...","description":"..."}],"relationships":[{"from":2,"to":1,"type":"imports","reason":"..."}]}`;

export function systemPrompt(): string {
  return SYSTEM_PROMPT;
}

/** Cuts code to a token budget on a line boundary, marking the cut so the model does not describe a fragment as whole. */
export function truncateCode(code: string, maxTokens = MAX_CODE_TOKENS): string {
  const tokens = encode(code);
  if (tokens.length <= maxTokens) return code;
  const head = decode(tokens.slice(0, maxTokens));
  const cut = head.lastIndexOf('\n');
  const kept = cut > 0 ? head.slice(0, cut) : head;
  const omitted = code.slice(kept.length).split('\n').length - 1;
  return `${kept}\n... (${omitted} more lines)`;
}

function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 1)}…` : t;
}

/** The page's opening prose, without code, so the model knows what the page is about. */
export function pageIntro(markdown: string): string {
  const prose = markdown
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/^(?: {4}|\t).*$/gm, ' ')
    .replace(/^#+\s*/gm, '');
  return oneLine(prose, INTRO_CHARS);
}

/**
 * Text just before the block on the page: where documentation says what the next code is for. Found by the
 * block's first non-blank line; '' when the markdown rendition does not contain it verbatim.
 */
export function contextBefore(markdown: string, code: string): string {
  const firstLine = code
    .split('\n')
    .find((l) => l.trim().length >= 4)
    ?.trim();
  if (!firstLine) return '';
  const at = markdown.indexOf(firstLine);
  if (at < 0) return '';
  let before = markdown.slice(Math.max(0, at - CONTEXT_CHARS * 2), at);
  // Drop the fence line and anything from an earlier code block.
  const lastFence = before.lastIndexOf('```');
  const previousFence = lastFence > 0 ? before.lastIndexOf('```', lastFence - 1) : -1;
  if (previousFence >= 0) before = before.slice(previousFence + 3);
  before = before.replace(/```\w*\s*$/, '');
  return oneLine(before.slice(-CONTEXT_CHARS), CONTEXT_CHARS);
}

/** What a block's description may draw on: the grounding text for the "no invented APIs" check. */
export function groundText(page: PromptPage, block: PromptBlock): string {
  return [block.code, block.title, block.context, page.title, contextBefore(page.markdown, block.code), pageIntro(page.markdown)].join('\n');
}

function renderBlock(n: number, page: PromptPage, block: PromptBlock): string {
  const lines = [`### Block ${n}`];
  if (block.title.trim()) lines.push(`Current title: ${oneLine(block.title, 150)}`);
  lines.push(`Detected language: ${block.language}${block.languageSure ? '' : ' (unsure)'}`);
  const before = contextBefore(page.markdown, block.code);
  const context = oneLine(block.context, CONTEXT_CHARS);
  if (before) lines.push(`Page text before the block: ${before}`);
  if (context && !before.includes(context.slice(0, 80))) lines.push(`Nearby text: ${context}`);
  lines.push('Code:', '````', truncateCode(block.code), '````');
  return lines.join('\n');
}

export function userPrompt(page: PromptPage, blocks: PromptBlock[]): string {
  const intro = pageIntro(page.markdown);
  const head = [`Page title: ${oneLine(page.title, 200) || '(none)'}`, `Page URL: ${page.url}`];
  if (intro) head.push(`Page introduction: ${intro}`);
  return [...head, '', ...blocks.map((b, i) => renderBlock(i + 1, page, b)), '', `Describe all ${blocks.length} blocks.`].join('\n');
}

export function buildMessages(page: PromptPage, blocks: PromptBlock[]): ChatCompletionMessageParam[] {
  return [
    { role: 'system', content: systemPrompt() },
    { role: 'user', content: userPrompt(page, blocks) },
  ];
}

/** The follow-up for the one retry after an invalid answer: the model sees its answer and what was wrong. */
export function retryMessages(first: ChatCompletionMessageParam[], badAnswer: string, reason: string): ChatCompletionMessageParam[] {
  return [
    ...first,
    { role: 'assistant', content: badAnswer.slice(0, 4000) },
    { role: 'user', content: `That answer was not usable: ${reason}. Answer again with only the JSON object, one entry per block.` },
  ];
}

export function countMessageTokens(messages: ChatCompletionMessageParam[]): number {
  // 4 tokens of chat framing per message, as OpenAI documents for its chat format.
  return messages.reduce((sum, m) => sum + 4 + (typeof m.content === 'string' ? countTokens(m.content) : 0), 3);
}

/** Output budget for a batch: a description of up to 60 words is ~90 tokens, plus title, language and JSON. */
export function maxOutputTokens(blocks: number): number {
  return 150 + 170 * blocks;
}

/**
 * Splits a page's blocks, in page order, into batches that fit the prompt budget. Neighbouring blocks stay
 * together because relationships ("continues", "setup-for") are mostly between neighbours.
 */
export function planBatches<T extends PromptBlock>(page: PromptPage, blocks: T[]): T[][] {
  const overhead = countTokens(systemPrompt()) + countTokens(userPrompt(page, []));
  const batches: T[][] = [];
  let current: T[] = [];
  let used = overhead;
  for (const block of blocks) {
    const cost = countTokens(renderBlock(1, page, block)) + 4;
    if (current.length > 0 && (current.length >= MAX_BATCH_BLOCKS || used + cost > MAX_BATCH_PROMPT_TOKENS)) {
      batches.push(current);
      current = [];
      used = overhead;
    }
    current.push(block);
    used += cost;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}
