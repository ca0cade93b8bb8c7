import picomatch from 'picomatch';
import { parse as parseHost } from 'tldts';
import { z } from 'zod';
import { ValidationError } from '../errors.js';

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

/** Why `host` cannot be a domain filter, or null when it is a registrable domain or a subdomain of one. */
export function domainFilterProblem(host: string): string | null {
  const parsed = parseHost(host, { allowPrivateDomains: true });
  if (parsed.isIp) return 'an IP address is not a domain; leave domain_filter out to stay on the start URLs\' hosts';
  const known = parsed.isIcann === true || parsed.isPrivate === true;
  if (!parsed.domain && known) return `${JSON.stringify(host)} is a public suffix shared by unrelated sites; give a registrable domain like docs.example.com`;
  if (!host.includes('.')) return 'a single-label name (like localhost) is not a domain; leave domain_filter out to stay on the start URLs\' hosts';
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

/** Free-form JSON, capped by its serialized size so a request cannot store megabytes with a source. */
export function cappedJsonRecord(maxBytes = MAX_METADATA_BYTES) {
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    let size: number;
    try {
      size = Buffer.byteLength(JSON.stringify(value));
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be plain JSON' });
      return;
    }
    if (size > maxBytes) ctx.addIssue({ code: 'custom', message: `is ${size} bytes as JSON; at most ${maxBytes} bytes are accepted` });
  });
}

export const crawlRequestSchema = z.object({
  name: z.string().trim().min(1).max(200).optional(),
  start_urls: z
    .array(
      z
        .string()
        .trim()
        .superRefine((v, ctx) => {
          if (!isHttpUrl(v)) ctx.addIssue({ code: 'custom', message: `not an http(s) URL: ${JSON.stringify(v)}` });
        }),
    )
    .min(1, 'at least one start URL is required')
    .max(100),
  max_depth: z
    .number({ message: 'expected a whole number from 0 to 3' })
    .int('expected a whole number from 0 to 3')
    .min(0, 'must be from 0 to 3')
    .max(MAX_DEPTH, 'must be from 0 to 3')
    .optional(),
  version: z.string().trim().max(100).nullish(),
  domain_filter: domain.nullish(),
  url_patterns: z.array(glob).max(100).optional(),
  exclude_patterns: z.array(glob).max(100).optional(),
  max_concurrent_crawls: wholeNumberUpTo(MAX_CONCURRENCY).optional(),
  metadata: cappedJsonRecord().optional(),
  max_pages: wholeNumberUpTo(MAX_PAGES_CEILING).optional(),
  /** Beyond the spec: seed the frontier from sitemap.xml (robots.txt's Sitemap lines, else /sitemap.xml). */
  use_sitemap: z.boolean().optional(),
});

export type CrawlRequestInput = z.input<typeof crawlRequestSchema>;

/** A validated request with every default applied. */
export interface CrawlRequest {
  name: string | null;
  start_urls: string[];
  max_depth: number;
  version: string;
  domain_filter: string | null;
  url_patterns: string[];
  exclude_patterns: string[];
  max_concurrent_crawls: number;
  metadata: Record<string, unknown>;
  use_sitemap: boolean;
  max_pages: number;
}

export interface ParseOptions {
  /** Concurrency when the request gives none: 3 for the CLI and REST, 20 for the MCP tool. */
  defaultConcurrency?: number;
  /** MAX_CONCURRENT_CRAWLS: requests above it are capped, not refused (the spec calls it a ceiling). */
  ceiling?: number;
}

export function parseCrawlRequest(input: unknown, options: ParseOptions = {}): CrawlRequest {
  const result = crawlRequestSchema.safeParse(input);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const field = issue.path.map(String).join('.') || 'request';
    throw new ValidationError(`Invalid crawl request: ${field}: ${issue.message}.`, {
      hint: `start_urls must be http(s) URLs, max_depth 0-3, max_concurrent_crawls 1-20, max_pages 1-${MAX_PAGES_CEILING}, url_patterns valid globs, domain_filter a registrable domain, metadata at most ${MAX_METADATA_BYTES / 1024} KB.`,
      details: result.error.issues.map((i) => ({ path: i.path.map(String).join('.'), message: i.message })),
    });
  }
  const r = result.data;
  const ceiling = Math.max(1, Math.min(MAX_CONCURRENCY, options.ceiling ?? MAX_CONCURRENCY));
  const requested = r.max_concurrent_crawls ?? options.defaultConcurrency ?? DEFAULT_CONCURRENCY;
  return {
    name: r.name ?? null,
    start_urls: [...new Set(r.start_urls)],
    max_depth: r.max_depth ?? 1,
    version: r.version ?? '',
    domain_filter: r.domain_filter ?? null,
    url_patterns: r.url_patterns ?? [],
    exclude_patterns: r.exclude_patterns ?? [],
    max_concurrent_crawls: Math.min(requested, ceiling),
    metadata: r.metadata ?? {},
    use_sitemap: r.use_sitemap ?? false,
    max_pages: r.max_pages ?? DEFAULT_MAX_PAGES,
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
