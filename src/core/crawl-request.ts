import { createRequire } from 'node:module';
import picomatch from 'picomatch';
import type * as Tldts from 'tldts';
import { z } from 'zod';
import { ValidationError } from './errors.js';

/**
 * The crawl request of the spec (init_crawl, POST /crawl/init, POST /api/crawl-jobs, `crawl start`), in the
 * spec's snake_case. Validation happens before anything is written, so a bad request creates nothing.
 */

/** Pages in flight per job when the request does not say (the spec's crawler default; the MCP tool passes 20). */
export const DEFAULT_CONCURRENCY = 3;
export const MAX_CONCURRENCY = 20;
export const MAX_DEPTH = 3;
/**
 * Pages one job may admit to its frontier. The default covers a large documentation site (most are well under
 * it); the ceiling keeps one request from queueing an unbounded crawl, since every admitted page is a frontier
 * row, a queued job and a fetch. A site larger than that is crawled in parts with url_patterns.
 */
export const DEFAULT_MAX_PAGES = 10_000;
export const MAX_PAGES_CEILING = 100_000;
/** Serialized size of free-form JSON (metadata) a request may carry: descriptive data, never content. */
export const MAX_METADATA_BYTES = 16 * 1024;
/** When a page is rendered in headless Chromium (core/render/): see `needsRender` for what `auto` means. */
export const RENDER_MODES = ['auto', 'always', 'never'] as const;
export type RenderMode = (typeof RENDER_MODES)[number];

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0;
  } catch {
    return false;
  }
}

/** Throws on a glob picomatch cannot compile (unclosed bracket, brace or paren), which would match nothing. */
export function compileGlob(pattern: string): RegExp {
  const re = picomatch.makeRe(pattern, { strictBrackets: true, dot: true });
  // A pattern ending in a lone backslash compiles to a regex that can never match.
  if (re.source === '$^') throw new Error('the pattern can never match');
  return re;
}

const glob = z
  .string()
  .trim()
  .min(1, 'a URL pattern must not be empty')
  .max(500)
  .superRefine((pattern, ctx) => {
    try {
      compileGlob(pattern);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: `invalid glob ${JSON.stringify(pattern)}: ${(error as Error).message}` });
    }
  });

// tldts builds its public suffix list when it loads, and only a domain filter reads it: it is loaded on first
// use, so that the many commands that import this schema (every CLI error message names its flags) do not pay
// for it: after undici, it was the largest import of a cold `docdex search`.
let tldts: typeof Tldts | undefined;
const publicSuffixList = (): typeof Tldts => (tldts ??= createRequire(import.meta.url)('tldts') as typeof Tldts);

/** Why `host` cannot be a domain filter, or null when it is a registrable domain or a subdomain of one. */
export function domainFilterProblem(host: string): string | null {
  const parsed = publicSuffixList().parse(host, { allowPrivateDomains: true });
  if (parsed.isIp) return "an IP address is not a domain; leave domain_filter out to stay on the start URLs' hosts";
  const known = parsed.isIcann === true || parsed.isPrivate === true;
  if (!parsed.domain && known) return `${JSON.stringify(host)} is a public suffix shared by unrelated sites; give a registrable domain like docs.example.com`;
  if (!host.includes('.')) return "a single-label name (like localhost) is not a domain; leave domain_filter out to stay on the start URLs' hosts";
  if (!parsed.domain) return `${JSON.stringify(host)} is not a registrable domain; give one like docs.example.com`;
  return null;
}

const HOST_NAME = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/i;

const domain = z
  .string()
  .trim()
  .min(1)
  .max(253)
  .transform((value, ctx) => {
    // Accepts a bare host ("docs.python.org") or a URL whose host is taken.
    const host = (value.includes('://') ? (isHttpUrl(value) ? new URL(value).hostname : '') : value.replace(/\.$/, '')).toLowerCase();
    if (!HOST_NAME.test(host) && !/^\[[0-9a-f:.]+\]$/.test(host)) {
      ctx.addIssue({ code: 'custom', message: `expected a domain like docs.example.com, got ${JSON.stringify(value)}` });
      return z.NEVER;
    }
    const problem = domainFilterProblem(host);
    if (problem) {
      ctx.addIssue({ code: 'custom', message: problem });
      return z.NEVER;
    }
    return host;
  });

/** A whole number from 1 to `max`, with messages that say the range. */
function wholeNumberUpTo(max: number) {
  return z
    .number({ message: `expected a whole number from 1 to ${max}` })
    .int(`expected a whole number from 1 to ${max}`)
    .min(1, `must be from 1 to ${max}`)
    .max(max, `must be from 1 to ${max}`);
}

/**
 * Free-form JSON, capped by its serialized size so a request cannot store megabytes with a source. The cap is
 * also stated in the JSON Schema (`x-max-bytes`), so a route's body limit can be derived from it.
 */
export function cappedJsonRecord(maxBytes = MAX_METADATA_BYTES) {
  const record = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(value));
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be plain JSON' });
      return;
    }
    if (size > maxBytes) ctx.addIssue({ code: 'custom', message: `is ${size} bytes as JSON; at most ${maxBytes} bytes are accepted` });
  });
  return record.meta({ 'x-max-bytes': maxBytes });
}

/** The longest start URL a request may name (a bound the REST body limit is derived from, daemon/json-body.ts). */
const MAX_START_URL_CHARS = 2048;

const startUrls = z
  .array(
    z
      .string()
      .trim()
      .max(MAX_START_URL_CHARS)
      .superRefine((v, ctx) => {
        if (!isHttpUrl(v)) ctx.addIssue({ code: 'custom', message: `not an http(s) URL: ${JSON.stringify(v)}` });
      }),
  )
  .min(1, 'at least one start URL is required')
  .max(100);

const linkDepth = z
  .number({ message: `expected a whole number from 0 to ${MAX_DEPTH}` })
  .int(`expected a whole number from 0 to ${MAX_DEPTH}`)
  .min(0, `must be from 0 to ${MAX_DEPTH}`)
  .max(MAX_DEPTH, `must be from 0 to ${MAX_DEPTH}`);

/**
 * One field of the crawl request: its rule (type, bounds, default) and what every surface derives from it.
 * The CLI flags (`cli/request-flags.ts`), the REST body and its OpenAPI document (`daemon/routes/crawl.ts`),
 * the MCP tool's arguments (`mcp/tools/init-crawl.ts`) and the source's stored configuration all come from
 * this table, so a new crawl option is one entry here.
 */
export interface CrawlField {
  schema: z.ZodType;
  /** One line: the flag's help text, the OpenAPI description and the MCP argument's description. */
  description: string;
  /** The CLI flag's name; absent: the field name in kebab-case; false: the CLI takes it otherwise (arguments) or not at all. */
  flag?: string | false;
  /** False for what belongs to the source itself (name, version, metadata) rather than to how it is crawled. */
  stored?: boolean;
  /** The rule as the error hint states it, when bounds do not say it. */
  rule?: string;
  /** An example value, shown to models. */
  example?: unknown;
  /** The rule in a form every model provider's schema dialect accepts, when the rule itself is not portable. */
  portable?: z.ZodType;
}

const globList = z.array(glob).max(100);

export const CRAWL_FIELDS = {
  name: {
    schema: z.string().trim().min(1).max(200).optional(),
    description: "Library name; detected from the start page when absent (the site's common name: python, node, postgresql).",
    stored: false,
    example: 'fastapi',
  },
  start_urls: {
    schema: startUrls,
    description: 'Documentation pages to start from (http or https).',
    flag: false,
    rule: 'must be http(s) URLs',
    example: ['https://docs.example.com/'],
  },
  max_depth: {
    schema: linkDepth.default(1),
    description: 'How far to follow links: 0 only the start URLs, 1 also the pages they link to, up to 3.',
    flag: 'depth',
  },
  version: {
    schema: z.string().trim().max(100).optional(),
    description: 'Version of the documented library; crawls of different versions are kept apart. Detected from the start page with the name when both are absent.',
    stored: false,
    example: '0.110',
  },
  domain_filter: {
    schema: domain.optional(),
    description: "Only crawl this registrable domain and its subdomains (not a public suffix, IP address or single-label name); default: the start URLs' hosts.",
    flag: 'domain',
    rule: 'a registrable domain',
    example: 'example.com',
  },
  url_patterns: {
    schema: globList.default([]),
    description: 'Only crawl URLs matching one of these globs.',
    rule: 'valid globs',
    example: ['https://docs.example.com/guide/**'],
  },
  exclude_patterns: {
    schema: globList.default([]),
    description: 'Never crawl URLs matching these globs.',
    example: ['**/changelog/**'],
  },
  max_concurrent_crawls: {
    schema: wholeNumberUpTo(MAX_CONCURRENCY).default(DEFAULT_CONCURRENCY),
    description: 'Pages fetched at once, capped by MAX_CONCURRENT_CRAWLS; the delay between requests to one host still applies.',
    flag: 'concurrency',
  },
  metadata: {
    schema: cappedJsonRecord().default({}),
    description: `Free-form data stored with the library, e.g. repository and description; at most ${MAX_METADATA_BYTES} bytes as JSON.`,
    flag: false,
    stored: false,
    rule: `at most ${MAX_METADATA_BYTES / 1024} KB`,
    example: { repository: 'https://github.com/example/project' },
    // String values only: a schema that accepts any value is not portable across model providers' dialects.
    portable: z.record(z.string(), z.string().max(2000)).default({}),
  },
  use_sitemap: {
    schema: z.boolean().default(false),
    description: "Also seed the crawl from the site's sitemap.xml (robots.txt's Sitemap lines, else /sitemap.xml).",
    flag: 'sitemap',
  },
  max_pages: {
    schema: wholeNumberUpTo(MAX_PAGES_CEILING).default(DEFAULT_MAX_PAGES),
    description: 'Pages the crawl may admit; links found after that are not followed.',
  },
  prefer_markdown: {
    schema: z.enum(['auto', 'never']).default('auto'),
    description: "auto: index a site's llms-full.txt, seed from its llms.txt, and read a page's markdown twin instead of its HTML; never: HTML only.",
    rule: 'auto or never',
  },
  render: {
    schema: z.enum(RENDER_MODES, { message: 'expected auto, always or never' }).default('auto'),
    description: 'Render pages in headless Chromium: auto (only pages whose HTML is an empty shell, and hash-routed sites), always, or never.',
    rule: 'auto, always or never',
    example: 'auto',
  },
} satisfies Record<string, CrawlField>;

export type CrawlFieldName = keyof typeof CRAWL_FIELDS;
type CrawlShape = { [K in CrawlFieldName]: (typeof CRAWL_FIELDS)[K]['schema'] };

/** Every field with its name, in the table's order. */
export function crawlFieldEntries(): Array<[CrawlFieldName, CrawlField]> {
  return Object.entries(CRAWL_FIELDS) as Array<[CrawlFieldName, CrawlField]>;
}

function shapeOf(): CrawlShape {
  return Object.fromEntries(crawlFieldEntries().map(([name, field]) => [name, field.schema.describe(field.description)])) as CrawlShape;
}

/** The crawl request's one schema, in the spec's snake_case. */
export const crawlRequestSchema = z.object(shapeOf());

export type CrawlRequestInput = z.input<typeof crawlRequestSchema>;

/** What a request's bounds say, read from the schema itself: the input side of its JSON Schema. */
export interface FieldFacts {
  type: string | undefined;
  itemType: string | undefined;
  minimum: number | undefined;
  maximum: number | undefined;
  default: unknown;
}

export function fieldFacts(schema: z.ZodType): FieldFacts {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  const items = json.items as Record<string, unknown> | undefined;
  return {
    type: json.type as string | undefined,
    itemType: items?.type as string | undefined,
    minimum: json.minimum as number | undefined,
    maximum: json.maximum as number | undefined,
    default: json.default,
  };
}

/**
 * The hint of an invalid request on every surface: the rules of the fields that were wrong, or of every field
 * when the request as a whole was (not an object), so that `--depth 9` is not answered with ten rules.
 */
function requestHint(wrong: ReadonlySet<string>): string {
  const rulesOf = (entries: ReturnType<typeof crawlFieldEntries>) =>
    entries.flatMap(([name, field]) => {
      if (field.rule) return [`${name} ${field.rule}`];
      const facts = fieldFacts(field.schema);
      return facts.minimum !== undefined && facts.maximum !== undefined && facts.type !== 'string' ? [`${name} ${facts.minimum}-${facts.maximum}`] : [];
    });
  const named = rulesOf(crawlFieldEntries().filter(([name]) => wrong.has(name)));
  return `${(named.length > 0 ? named : rulesOf(crawlFieldEntries())).join(', ')}.`;
}

/** The configuration a source stores so that a recrawl repeats it: every field about how it is crawled. */
export type SourceCrawlConfig = { [K in StoredFieldName]: CrawlRequest[K] };
type StoredFieldName = { [K in CrawlFieldName]: (typeof CRAWL_FIELDS)[K] extends { stored: false } ? never : K }[CrawlFieldName];

export const STORED_FIELDS: readonly StoredFieldName[] = crawlFieldEntries()
  .filter(([, field]) => field.stored !== false)
  .map(([name]) => name as StoredFieldName);

export function storedCrawlConfig(request: CrawlRequest): SourceCrawlConfig {
  return Object.fromEntries(STORED_FIELDS.map((name) => [name, request[name]])) as SourceCrawlConfig;
}

/**
 * A stored configuration as request fields: what the source kept of each field it knows (older sources lack
 * newer fields; those take the request's defaults), without null values, which the request does not take.
 */
export function requestFromStored(stored: Record<string, unknown>): Pick<CrawlRequestInput, StoredFieldName> {
  // Typed as request input; what the row holds is validated with the request when the recrawl starts.
  return Object.fromEntries(STORED_FIELDS.filter((name) => stored[name] !== undefined && stored[name] !== null).map((name) => [name, stored[name]])) as Pick<CrawlRequestInput, StoredFieldName>;
}

/** A validated request with every default applied. */
export type CrawlRequest = Omit<z.output<typeof crawlRequestSchema>, 'name' | 'version' | 'domain_filter'> & {
  /** Null when not given: then detected from the start page. */
  name: string | null;
  /** Null when not given: then the site's own when the name is detected too, else ''. */
  version: string | null;
  domain_filter: string | null;
};

export interface ParseOptions {
  /** Concurrency when the request gives none: 3 for the CLI and REST, 20 for the MCP tool. */
  defaultConcurrency?: number;
  /** MAX_CONCURRENT_CRAWLS: requests above it are capped, not refused (the spec calls it a ceiling). */
  ceiling?: number;
}

function concurrencyGiven(input: unknown): boolean {
  return typeof input === 'object' && input !== null && (input as Record<string, unknown>).max_concurrent_crawls !== undefined;
}

/** Validates a request; throws the one ValidationError every surface reports (REST 422, CLI exit 2, MCP isError). */
export function parseCrawlRequest(input: unknown, options: ParseOptions = {}): CrawlRequest {
  const result = crawlRequestSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'request';
    throw new ValidationError(`Invalid crawl request: ${field}: ${issue.message}.`, {
      hint: requestHint(new Set(result.error.issues.map((i) => String(i.path[0] ?? '')))),
      details: result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  }
  const r = result.data;
  const ceiling = Math.max(1, Math.min(MAX_CONCURRENCY, options.ceiling ?? MAX_CONCURRENCY));
  const requested = concurrencyGiven(input) ? r.max_concurrent_crawls : (options.defaultConcurrency ?? r.max_concurrent_crawls);
  return {
    ...r,
    name: r.name ?? null,
    start_urls: [...new Set(r.start_urls)],
    version: r.version ?? null,
    domain_filter: r.domain_filter ?? null,
    max_concurrent_crawls: Math.min(requested, ceiling),
  };
}

/**
 * Splits repeatable, comma-separated flag values (`--url-patterns a,b --url-patterns c`). Commas inside a
 * brace group belong to the glob (`/{guide,api}/**`), so they do not split.
 */
export function splitList(values: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const value of values ?? []) {
    let depth = 0;
    let current = '';
    for (const ch of value) {
      if (ch === '{') depth++;
      else if (ch === '}' && depth > 0) depth--;
      if (ch === ',' && depth === 0) {
        out.push(current);
        current = '';
      } else current += ch;
    }
    out.push(current);
  }
  return out.map((v) => v.trim()).filter((v) => v.length > 0);
}
