import { z } from 'zod';
import { normalizeLanguage } from '../extract/language-names.js';

/**
 * The model's answer for one batch: a JSON schema for `response_format` (strict mode: every property required,
 * no extra properties, no numeric bounds that some servers reject), a zod schema that checks the same shape,
 * and field checks that drop single bad values (a 90-word description, a title that names nothing) without
 * discarding the rest of the answer.
 */

export const RELATIONSHIP_TYPES = ['imports', 'setup-for', 'alternative-to', 'continues'] as const;
export type RelationshipType = (typeof RELATIONSHIP_TYPES)[number];

export const DESCRIPTION_MIN_WORDS = 20;
export const DESCRIPTION_MAX_WORDS = 60;

export const ANSWER_JSON_SCHEMA: Record<string, unknown> = {
  type: 'object',
  additionalProperties: false,
  required: ['blocks', 'relationships'],
  properties: {
    blocks: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['block', 'language', 'title', 'description'],
        properties: {
          block: { type: 'integer' },
          language: { type: ['string', 'null'] },
          title: { type: 'string' },
          description: { type: 'string' },
        },
      },
    },
    relationships: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['from', 'to', 'type', 'reason'],
        properties: {
          from: { type: 'integer' },
          to: { type: 'integer' },
          type: { type: 'string', enum: [...RELATIONSHIP_TYPES] },
          reason: { type: 'string' },
        },
      },
    },
  },
};

export const answerSchema = z.object({
  blocks: z.array(
    z.object({
      block: z.number().int(),
      language: z.string().nullable(),
      title: z.string(),
      description: z.string(),
    }),
  ),
  relationships: z.array(
    z.object({
      from: z.number().int(),
      to: z.number().int(),
      type: z.enum(RELATIONSHIP_TYPES),
      reason: z.string(),
    }),
  ),
});
export type ModelAnswer = z.output<typeof answerSchema>;

/** One block's values after the field checks; null means "keep the heuristic value". */
export interface BlockResult {
  language: string | null;
  title: string | null;
  description: string | null;
}

export interface BatchRelationship {
  /** 1-based block numbers within the batch. */
  from: number;
  to: number;
  type: RelationshipType;
  description: string;
}

export interface CheckedAnswer {
  /** Block number (1-based) to its checked values; blocks the model left out are absent. */
  blocks: Map<number, BlockResult>;
  relationships: BatchRelationship[];
  /** Fields dropped by the checks, for diagnostics and tests. */
  rejected: Array<{ block: number; field: keyof BlockResult; reason: string }>;
}

export type ParseOutcome = { ok: true; answer: ModelAnswer } | { ok: false; reason: string };

/** Parses and shape-checks a raw answer. Local models like to wrap JSON in a ``` fence; that is tolerated. */
export function parseAnswer(content: string): ParseOutcome {
  let text = content.trim();
  const fence = /^```(?:json)?\s*\n?([\s\S]*?)\n?```$/i.exec(text);
  if (fence) text = fence[1]!.trim();
  if (text === '') return { ok: false, reason: 'the answer was empty' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `the answer is not valid JSON (${(error as Error).message})` };
  }
  const parsed = answerSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { ok: false, reason: `the answer does not match the schema at ${issue.path.join('.') || 'the top level'}: ${issue.message}` };
  }
  return { ok: true, answer: parsed.data };
}

export function wordCount(text: string): number {
  const words = text.trim().split(/\s+/);
  return words.length === 1 && words[0] === '' ? 0 : words.length;
}

/** Names a description presents as API: `backticked` spans and call-like `name(`. */
function namedIdentifiers(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/`([^`\n]{1,80})`/g)) names.add(m[1]!.trim().replace(/\(\)$/, ''));
  // `(?!s\))` spares prose plurals such as "value(s)".
  for (const m of text.matchAll(/\b([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\((?!s\))/g)) names.add(m[1]!);
  return [...names].filter((n) => n.length > 0);
}

/**
 * A description may only name identifiers that occur in the code or the page text it was given: the cheap,
 * mechanical half of "no invented APIs". A dotted name passes when its last part occurs (`np.dot` for `dot`).
 */
export function ungroundedNames(description: string, groundText: string): string[] {
  return namedIdentifiers(description).filter((name) => {
    if (groundText.includes(name)) return false;
    const last = name.split('.').at(-1)!;
    return !(last.length > 1 && groundText.includes(last));
  });
}

const GENERIC_TITLE =
  /^(?:an?\s+|the\s+)?(?:(?:code\s+)?examples?|code(?:\s+(?:block|snippet|sample|listing))?|snippet|sample(?:\s+code)?|usage(?:\s+example)?|example\s+usage|output|result|demo|listing|source(?:\s+code)?|untitled|note|tip|info|info\s+box)(?:\s*#?\d+)?\s*[:.]?$/i;

/** True for titles that say nothing about the code ("Example", "Code", "Usage", "Example 3"). */
export function isGenericTitle(title: string): boolean {
  const t = title.trim();
  return t === '' || GENERIC_TITLE.test(t);
}

function checkTitle(title: string, pageTitle: string): string | null | { reason: string } {
  const t = title.replace(/\s+/g, ' ').trim().replace(/[.:]$/, '');
  if (t === '') return null;
  if (t.length < 3 || t.length > 100) return { reason: `title length ${t.length} outside 3-100` };
  if (isGenericTitle(t)) return { reason: 'title is generic' };
  if (t.toLowerCase() === pageTitle.trim().toLowerCase()) return { reason: 'title equals the page title' };
  return t;
}

function checkLanguage(language: string | null): string | null | { reason: string } {
  if (language === null) return null;
  const n = normalizeLanguage(language);
  if (n === '' || n === 'text' || n === 'unknown' || n === 'plain') return null;
  if (!/^[a-z0-9][a-z0-9+#.-]{0,23}$/.test(n)) return { reason: `language ${JSON.stringify(language)} is not a language name` };
  return n;
}

function checkDescription(description: string, groundText: string): string | null | { reason: string } {
  const d = description.replace(/\s+/g, ' ').trim();
  if (d === '') return null;
  const words = wordCount(d);
  if (words < DESCRIPTION_MIN_WORDS || words > DESCRIPTION_MAX_WORDS) {
    return { reason: `description has ${words} words, not ${DESCRIPTION_MIN_WORDS}-${DESCRIPTION_MAX_WORDS}` };
  }
  const invented = ungroundedNames(d, groundText);
  if (invented.length > 0) return { reason: `description names ${invented.join(', ')}, which the code and page do not` };
  return d;
}

export interface BatchContext {
  blockCount: number;
  pageTitle: string;
  /** Per block (index = block - 1): the code and page text its description may draw on. */
  groundTexts: string[];
}

/** Applies the field checks to a shape-valid answer. */
export function checkAnswer(answer: ModelAnswer, context: BatchContext): CheckedAnswer {
  const blocks = new Map<number, BlockResult>();
  const rejected: CheckedAnswer['rejected'] = [];
  const take = <T>(block: number, field: keyof BlockResult, value: T | null | { reason: string }): T | null => {
    if (value !== null && typeof value === 'object' && 'reason' in value) {
      rejected.push({ block, field, reason: value.reason });
      return null;
    }
    return value as T | null;
  };
  for (const b of answer.blocks) {
    if (b.block < 1 || b.block > context.blockCount || blocks.has(b.block)) continue;
    blocks.set(b.block, {
      language: take<string>(b.block, 'language', checkLanguage(b.language)),
      title: take<string>(b.block, 'title', checkTitle(b.title, context.pageTitle)),
      description: take<string>(b.block, 'description', checkDescription(b.description, context.groundTexts[b.block - 1] ?? '')),
    });
  }
  const seen = new Set<string>();
  const relationships: BatchRelationship[] = [];
  for (const r of answer.relationships) {
    if (r.from === r.to || r.from < 1 || r.to < 1 || r.from > context.blockCount || r.to > context.blockCount) continue;
    const key = `${r.from}:${r.to}:${r.type}`;
    if (seen.has(key)) continue;
    seen.add(key);
    relationships.push({ from: r.from, to: r.to, type: r.type, description: r.reason.replace(/\s+/g, ' ').trim().slice(0, 300) });
  }
  return { blocks, relationships, rejected };
}
