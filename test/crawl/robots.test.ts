import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_RULE_CHARS, MAX_RULES, MAX_SITEMAPS, parseRobots, ruleMatches } from '../../src/core/crawl/robots.js';

/**
 * robots.txt matching is the crawler's answer to a file a hostile site writes: it must be linear in the rule
 * and the path (a backtracking regex froze the daemon), agree with the plain definition of `*` and `$`, and
 * never throw.
 */

/** The definition, by dynamic programming: `*` any run, a final `$` anchors the end, otherwise a prefix match. */
function referenceMatches(pattern: string, path: string): boolean {
  const anchored = pattern.endsWith('$');
  const p = anchored ? pattern.slice(0, -1) : pattern;
  // can[j]: the first i characters of the pattern match the first j characters of the path.
  let can = Array.from({ length: path.length + 1 }, (_, j) => j === 0);
  for (const c of p) {
    const next = new Array<boolean>(path.length + 1).fill(false);
    for (let j = 0; j <= path.length; j++) {
      if (c === '*') next[j] = can[j]! || (j > 0 && next[j - 1]!);
      else next[j] = j > 0 && can[j - 1]! && path[j - 1] === c;
    }
    can = next;
  }
  return anchored ? can[path.length]! : can.some(Boolean);
}

function compiled(pattern: string): { pieces: string[]; anchored: boolean } {
  const anchored = pattern.endsWith('$');
  return { pieces: (anchored ? pattern.slice(0, -1) : pattern).split('*'), anchored };
}

const allows = (text: string, path: string): boolean => parseRobots(text).allows(new URL(`https://x.org${path}`));

describe('robots.txt matching', () => {
  it('answers a rule made to backtrack in well under a second', () => {
    const rule = `/*${'a*'.repeat(12)}b`;
    const path = `/${'a'.repeat(4000)}`;
    const robots = parseRobots(`User-agent: *\nDisallow: ${rule}\n`);
    const started = performance.now();
    for (let i = 0; i < 10; i++) expect(robots.allows(new URL(`https://x.org${path}?n=${i}`))).toBe(true);
    expect(robots.allows(new URL(`https://x.org${path}b`))).toBe(false);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('ignores rules longer than MAX_RULE_CHARS and Allow/Disallow lines beyond MAX_RULES', () => {
    const long = `/${'x'.repeat(MAX_RULE_CHARS)}`;
    expect(allows(`User-agent: *\nDisallow: ${long}\n`, long)).toBe(true);
    expect(allows(`User-agent: *\nDisallow: ${long.slice(0, MAX_RULE_CHARS)}\n`, long)).toBe(false);
    const many = Array.from({ length: MAX_RULES }, (_, i) => `Disallow: /r${i}/`).join('\n');
    expect(allows(`User-agent: *\n${many}\nDisallow: /last/\n`, '/r0/x')).toBe(false);
    expect(allows(`User-agent: *\n${many}\nDisallow: /last/\n`, '/last/x')).toBe(true);
  });

  it('treats `$` as literal except at the end, and an empty last piece as any tail', () => {
    expect(ruleMatches(compiled('/a$b'), '/a$bc')).toBe(true);
    expect(ruleMatches(compiled('/a*'), '/a')).toBe(true);
    expect(ruleMatches(compiled('/a*$'), '/abc')).toBe(true);
    expect(ruleMatches(compiled('/*.php$'), '/x.php')).toBe(true);
    expect(ruleMatches(compiled('/*.php$'), '/x.php5')).toBe(false);
    expect(ruleMatches(compiled('/a*b*b$'), '/ab')).toBe(false);
    expect(ruleMatches(compiled('/a*b*b$'), '/abb')).toBe(true);
  });

  it('agrees with the definition of `*` and `$` on small random patterns and paths', () => {
    const char = fc.constantFrom('/', 'a', 'b', '*', '$', '.');
    const pattern = fc.array(char, { maxLength: 10 }).map((cs) => `/${cs.join('')}`);
    const path = fc.array(fc.constantFrom('/', 'a', 'b', '$', '.', '*'), { maxLength: 14 }).map((cs) => `/${cs.join('')}`);
    fc.assert(
      fc.property(pattern, path, (p, s) => ruleMatches(compiled(p), s) === referenceMatches(p, s)),
      { numRuns: 5000 },
    );
  });

  it('parses any text and matches any path without throwing, within a time bound', () => {
    const line = fc.oneof(
      fc.constantFrom('User-agent: *', 'User-agent: docdex', 'Disallow: /', 'Allow: /', 'Crawl-delay: 5', 'Sitemap: https://x.org/s.xml'),
      fc.tuple(fc.constantFrom('Disallow', 'Allow', 'disallow', 'User-agent', 'Crawl-delay', 'Sitemap'), fc.string({ unit: 'binary', maxLength: 200 })).map(([k, v]) => `${k}: ${v}`),
      fc.string({ unit: 'binary', maxLength: 80 }),
      // What froze the regex matcher: many stars between letters the path repeats.
      fc.nat({ max: 40 }).map((n) => `Disallow: /${'*a'.repeat(n)}*b`),
    );
    const text = fc.tuple(fc.array(line, { maxLength: 40 }), fc.constantFrom('\n', '\r\n', '\r')).map(([lines, eol]) => lines.join(eol));
    const path = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 300 }),
      fc.nat({ max: 300 }).map((n) => 'a'.repeat(n)),
    );
    fc.assert(
      fc.property(text, path, (t, p) => {
        const started = performance.now();
        const robots = parseRobots(t);
        let url: URL;
        try {
          url = new URL(`https://x.org/${p}`);
        } catch {
          return true;
        }
        expect(typeof robots.allows(url)).toBe('boolean');
        expect(performance.now() - started).toBeLessThan(1000);
        return true;
      }),
      { numRuns: 500 },
    );
  });

  it('picks the group by its whole product token: an empty, partial or longer name is not docdex', () => {
    for (const agent of ['', 'd', 'doc', 'docdexbot', 'xdocdex']) {
      const r = parseRobots(`User-agent: ${agent}\nDisallow: /\n\nUser-agent: *\nDisallow: /star\n`);
      expect(r.allows(new URL('https://x.org/page')), `User-agent: ${agent}`).toBe(true);
      expect(r.allows(new URL('https://x.org/star')), `User-agent: ${agent}`).toBe(false);
    }
    for (const agent of ['docdex', 'DocDex', 'docdex/1.0', 'docdex (+https://x.org)']) {
      const r = parseRobots(`User-agent: ${agent}\nDisallow: /\n\nUser-agent: *\nAllow: /\n`);
      expect(r.allows(new URL('https://x.org/page')), `User-agent: ${agent}`).toBe(false);
    }
  });

  it('keeps at most MAX_SITEMAPS Sitemap lines, each no longer than MAX_RULE_CHARS', () => {
    const many = Array.from({ length: MAX_SITEMAPS + 20 }, (_, i) => `Sitemap: https://x.org/s${i}.xml`);
    const long = `Sitemap: https://x.org/${'a'.repeat(MAX_RULE_CHARS)}.xml`;
    const r = parseRobots([long, ...many].join('\n'));
    expect(r.sitemaps).toHaveLength(MAX_SITEMAPS);
    expect(r.sitemaps[0]).toBe('https://x.org/s0.xml');
  });
});
