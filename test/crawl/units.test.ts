import { describe, expect, it } from 'vitest';
import { classifyContentType, parseRetryAfter } from '../../src/core/crawl/fetch.js';
import { slotSpacingSeconds } from '../../src/core/crawl/politeness.js';
import { fairShare, pageFetchSkips } from '../../src/core/crawl/workers/caps.js';
import { parseCrawlRequest, splitList } from '../../src/core/crawl-request.js';
import { parseRobots, robotsFromResponse } from '../../src/core/crawl/robots.js';
import { createScope } from '../../src/core/crawl/scope.js';
import { parseSitemap } from '../../src/core/crawl/sitemap.js';
import { cleanUrl, normalizeUrl } from '../../src/core/crawl/url.js';
import { ValidationError } from '../../src/core/errors.js';

describe('normalizeUrl', () => {
  it('merges fragment, default-port, index.html and trailing-slash variants', () => {
    const key = normalizeUrl('https://docs.example.com/guide');
    for (const v of [
      'https://docs.example.com/guide/',
      'https://docs.example.com/guide/index.html',
      'https://DOCS.example.com:443/guide#intro',
      'https://docs.example.com/guide/?utm_source=x',
      'https://docs.example.com//guide',
    ]) {
      expect(normalizeUrl(v)).toBe(key);
    }
    expect(normalizeUrl('http://x.org:80/')).toBe('http://x.org/');
    expect(normalizeUrl('http://x.org/index.html')).toBe('http://x.org/');
    expect(normalizeUrl('http://x.org:8080/a')).toBe('http://x.org:8080/a');
    expect(normalizeUrl('http://x.org/a?b=1&utm_medium=y')).toBe('http://x.org/a?b=1');
    expect(normalizeUrl('mailto:a@b.c')).toBeNull();
    expect(normalizeUrl('javascript:void(0)')).toBeNull();
    expect(normalizeUrl('../up', 'http://x.org/a/b/c')).toBe('http://x.org/a/up');
  });

  it('keeps the fetch form except for the fragment and default port', () => {
    expect(cleanUrl('https://x.org:443/guide/index.html#top')).toBe('https://x.org/guide/index.html');
    expect(cleanUrl('https://x.org/guide/')).toBe('https://x.org/guide/');
  });
});

describe('robots.txt', () => {
  const robots = parseRobots(
    [
      'User-agent: Googlebot',
      'Disallow: /',
      '',
      'User-agent: *',
      'Disallow: /private/',
      'Allow: /private/public',
      'Disallow: /*.pdf$',
      'Disallow: /search?q=*',
      'Crawl-delay: 2',
      'Sitemap: https://x.org/sitemap.xml',
    ].join('\n'),
  );
  const allows = (p: string) => robots.allows(new URL(`https://x.org${p}`));

  it('applies the longest matching rule, with wildcards and end anchors', () => {
    expect(allows('/')).toBe(true);
    expect(allows('/private/x')).toBe(false);
    expect(allows('/private/public/page')).toBe(true);
    expect(allows('/docs/a.pdf')).toBe(false);
    expect(allows('/docs/a.pdf.html')).toBe(true);
    expect(allows('/search?q=term')).toBe(false);
    expect(allows('/robots.txt')).toBe(true);
    expect(robots.crawlDelaySeconds).toBe(2);
    expect(robots.sitemaps).toEqual(['https://x.org/sitemap.xml']);
  });

  it('prefers the group naming docdex over *, and treats 4xx as allow-all and 5xx as unreachable', () => {
    const r = parseRobots('User-agent: *\nDisallow: /\n\nUser-agent: docdex\nDisallow: /nope\n');
    expect(r.allows(new URL('https://x.org/page'))).toBe(true);
    expect(r.allows(new URL('https://x.org/nope/x'))).toBe(false);
    expect(robotsFromResponse(404, '')).not.toBe('unreachable');
    expect((robotsFromResponse(404, '') as { allows(u: URL): boolean }).allows(new URL('https://x.org/a'))).toBe(true);
    expect(robotsFromResponse(503, '')).toBe('unreachable');
  });
});

describe('crawl request', () => {
  it('applies defaults and caps concurrency at MAX_CONCURRENT_CRAWLS', () => {
    const r = parseCrawlRequest({ start_urls: ['https://x.org/'] });
    expect(r).toMatchObject({ name: null, max_depth: 1, max_concurrent_crawls: 3, version: null, url_patterns: [], metadata: {} });
    expect(parseCrawlRequest({ start_urls: ['https://x.org/'] }, { defaultConcurrency: 20, ceiling: 5 }).max_concurrent_crawls).toBe(5);
    expect(parseCrawlRequest({ start_urls: ['https://x.org/'], max_concurrent_crawls: 20 }).max_concurrent_crawls).toBe(20);
    expect(parseCrawlRequest({ start_urls: ['https://x.org/'], domain_filter: 'https://Docs.X.org/path' }).domain_filter).toBe('docs.x.org');
  });

  it.each([
    [{ start_urls: ['nope'] }, /start_urls\.0/],
    [{ start_urls: ['https://x.org/'], max_depth: 4 }, /max_depth/],
    [{ start_urls: ['https://x.org/'], max_depth: 1.5 }, /max_depth/],
    [{ start_urls: ['https://x.org/'], max_concurrent_crawls: 0 }, /max_concurrent_crawls/],
    [{ start_urls: ['https://x.org/'], max_concurrent_crawls: 21 }, /max_concurrent_crawls/],
    [{ start_urls: ['https://x.org/'], url_patterns: ['{a,b'] }, /invalid glob/],
    [{ start_urls: ['https://x.org/'], url_patterns: ['a\\'] }, /invalid glob/],
  ])('refuses %j', (input, message) => {
    expect(() => parseCrawlRequest(input)).toThrow(ValidationError);
    expect(() => parseCrawlRequest(input)).toThrow(message);
  });

  it('splits comma-separated flag values but not brace groups', () => {
    expect(splitList(['/a/**,/b/**', '/{guide,api}/**'])).toEqual(['/a/**', '/b/**', '/{guide,api}/**']);
  });
});

describe('scope', () => {
  it('matches globs against the full URL, host+path, or path', () => {
    const scope = createScope({ startUrls: ['https://docs.x.org/'], domainFilter: null, urlPatterns: ['/api/**', 'https://docs.x.org/guide/*'], excludePatterns: ['**/*.zip'] });
    expect(scope.allows(new URL('https://docs.x.org/api/a/b'))).toBe(true);
    expect(scope.allows(new URL('https://docs.x.org/guide/intro'))).toBe(true);
    expect(scope.allows(new URL('https://docs.x.org/guide/deep/intro'))).toBe(false);
    expect(scope.allows(new URL('https://docs.x.org/api/file.zip'))).toBe(false);
    expect(scope.allows(new URL('https://other.org/api/a'))).toBe(false);
    const domain = createScope({ startUrls: ['https://docs.x.org/'], domainFilter: 'x.org', urlPatterns: [], excludePatterns: [] });
    expect(domain.allows(new URL('https://blog.x.org/a'))).toBe(true);
    expect(domain.allows(new URL('https://notx.org/a'))).toBe(false);
  });
});

describe('fetch helpers', () => {
  it('accepts only html, markdown and plain text', () => {
    expect(classifyContentType('text/html; charset=utf-8', 'https://x/a')).toBe('html');
    expect(classifyContentType('text/markdown', 'https://x/a')).toBe('markdown');
    expect(classifyContentType('text/plain', 'https://x/a.md')).toBe('markdown');
    expect(classifyContentType('text/plain', 'https://x/a.txt')).toBe('text');
    expect(classifyContentType('application/pdf', 'https://x/a.pdf')).toBeNull();
    expect(classifyContentType('image/png', 'https://x/a.html')).toBeNull();
    expect(classifyContentType(null, 'https://x/a.html')).toBe('html');
    expect(classifyContentType(null, 'https://x/a.zip')).toBeNull();
  });

  it('parses Retry-After as seconds or a date', () => {
    expect(parseRetryAfter('3')).toBe(3000);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString(), Date.now())).toBeGreaterThan(3000);
    expect(parseRetryAfter('soon')).toBeNull();
  });

  it('spaces host slots 30 ms above the delay, whatever the delay (the jitter it absorbs is not a share of it)', () => {
    expect(slotSpacingSeconds(0)).toBe(0);
    expect(slotSpacingSeconds(1)).toBeCloseTo(1.03, 6);
    expect(slotSpacingSeconds(0.3)).toBeCloseTo(0.33, 6);
    expect(slotSpacingSeconds(0.05)).toBeCloseTo(0.08, 6);
    expect(slotSpacingSeconds(5)).toBeCloseTo(5.03, 6);
  });
});

describe('page queue fetch', () => {
  const caps = new Map([
    ['a', { cap: 3, others: 0, waiting: true }],
    ['b', { cap: 2, others: 1, waiting: true }],
  ]);
  it('skips the crawls whose cap is used by other workers and this process together', () => {
    expect(pageFetchSkips(caps, new Map())).toEqual([]);
    expect(pageFetchSkips(caps, new Map([['b', 1]]))).toEqual(['b']);
    expect(pageFetchSkips(caps, new Map([['a', 3]]))).toEqual(['a']);
  });
  it('does not fetch at all when every running crawl is full, and fetches when none runs', () => {
    expect(
      pageFetchSkips(
        caps,
        new Map([
          ['a', 3],
          ['b', 1],
        ]),
      ),
    ).toBeNull();
    expect(pageFetchSkips(new Map([['a', { cap: 3, others: 3, waiting: true }]]), new Map())).toBeNull();
    // Pages of crawls not (or no longer) running are still taken, to be dropped.
    expect(pageFetchSkips(new Map(), new Map([['gone', 2]]))).toEqual([]);
  });
  it('gives each crawl with pages waiting an equal share of the slots, and a crawl alone all of them', () => {
    const big = new Map([
      ['a', { cap: 20, others: 0, waiting: true }],
      ['b', { cap: 20, others: 0, waiting: true }],
    ]);
    expect(fairShare(big, new Map(), 4)).toBe(2);
    expect(pageFetchSkips(big, new Map([['a', 2]]), fairShare(big, new Map([['a', 2]]), 4))).toEqual(['a']);
    const alone = new Map([...big, ['b', { cap: 20, others: 0, waiting: false }]]);
    expect(fairShare(alone, new Map([['a', 3]]), 4)).toBe(4);
    expect(fairShare(new Map(), new Map(), 5)).toBe(5);
  });
});

describe('sitemaps', () => {
  it('reads urlsets and sitemap indexes', () => {
    expect(parseSitemap('<urlset><url><loc>https://x.org/a?b=1&amp;c=2</loc></url><url><loc> https://x.org/b </loc></url></urlset>').pages).toEqual(['https://x.org/a?b=1&c=2', 'https://x.org/b']);
    expect(parseSitemap('<sitemapindex><sitemap><loc>https://x.org/s1.xml</loc></sitemap></sitemapindex>')).toEqual({ pages: [], sitemaps: ['https://x.org/s1.xml'] });
  });
});
