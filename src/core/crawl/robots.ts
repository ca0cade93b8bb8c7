/**
 * robots.txt after RFC 9309: the group for our product token (else `*`), Allow/Disallow with `*` and `$`,
 * longest match wins and Allow wins a tie. Crawl-delay is not in the RFC but widely used; the crawler honours
 * it when it is larger than CRAWL_DELAY. Sitemap lines seed the frontier when the job asks for it.
 */

export const ROBOTS_TOKEN = 'docdex';
/** RFC 9309 asks crawlers to parse at least 500 KiB. */
export const ROBOTS_MAX_BYTES = 512 * 1024;

/**
 * Rules longer than this are ignored. A path pattern this long is not a real rule, and each rule is matched
 * against every URL of the host, so its length is work the site chooses for us.
 */
export const MAX_RULE_CHARS = 2000;
/**
 * Allow/Disallow lines beyond this many in one file are ignored (for the whole file, not per group, so
 * many tiny groups cannot get round it). Real files have tens to hundreds; every rule costs time on every URL.
 */
export const MAX_RULES = 5000;
/**
 * Sitemap lines beyond this many are ignored, and so is a Sitemap value longer than MAX_RULE_CHARS: each one
 * becomes a request when the job follows sitemaps, so the count is work the site chooses for us.
 */
export const MAX_SITEMAPS = 50;

interface Rule {
  allow: boolean;
  pattern: string;
  /** The pattern split at `*`: literal pieces that must appear in order. */
  pieces: string[];
  /** The pattern ended in `$`: the last piece must end the path. */
  anchored: boolean;
}

export interface RobotsRules {
  allows(url: URL): boolean;
  crawlDelaySeconds: number | null;
  sitemaps: string[];
}

export const ALLOW_ALL: RobotsRules = { allows: () => true, crawlDelaySeconds: null, sitemaps: [] };

function compileRule(allow: boolean, pattern: string): Rule {
  const anchored = pattern.endsWith('$');
  const body = anchored ? pattern.slice(0, -1) : pattern;
  return { allow, pattern, pieces: body.split('*'), anchored };
}

/**
 * Does `path` match the rule? `*` matches any run of characters, a final `$` anchors the end, and the rule
 * otherwise matches a prefix. Each piece between stars is found at its leftmost place after the previous one:
 * for star-only patterns the leftmost choice never loses a match, so nothing is ever retried and the time is
 * linear in the path and the pattern. (A regex with `.*` per star backtracks, and a few dozen stars froze the
 * daemon.)
 */
export function ruleMatches(rule: Pick<Rule, 'pieces' | 'anchored'>, path: string): boolean {
  const { pieces, anchored } = rule;
  const first = pieces[0]!;
  if (pieces.length === 1) return anchored ? path === first : path.startsWith(first);
  if (!path.startsWith(first)) return false;
  let at = first.length;
  const last = pieces.length - 1;
  for (let i = 1; i < last; i++) {
    const found = path.indexOf(pieces[i]!, at);
    if (found < 0) return false;
    at = found + pieces[i]!.length;
  }
  const tail = pieces[last]!;
  if (!anchored) return path.indexOf(tail, at) >= 0;
  return path.length - tail.length >= at && path.endsWith(tail);
}

// Compare percent-encoded forms so `/a%20b` in robots.txt matches the path a URL object yields.
function encodePath(path: string): string {
  try {
    return encodeURI(decodeURI(path));
  } catch {
    return path;
  }
}

/**
 * The product token a User-agent line names (RFC 9309 section 2.2.1): its leading letters, `_` and `-`,
 * compared case-insensitively and whole. `docdex/1.0` names docdex; an empty value, `d` or `doc` does not.
 * `*` stays `*`.
 */
function productToken(value: string): string {
  if (value.startsWith('*')) return '*';
  return (/^[A-Za-z_-]*/.exec(value)?.[0] ?? '').toLowerCase();
}

export function parseRobots(text: string, token = ROBOTS_TOKEN): RobotsRules {
  type Group = { agents: string[]; rules: Rule[]; delay: number | null };
  const groups: Group[] = [];
  const sitemaps: string[] = [];
  let current: Group | null = null;
  let lastWasAgent = false;
  let ruleCount = 0;
  for (const rawLine of text.slice(0, ROBOTS_MAX_BYTES).split(/\r\n|\r|\n/)) {
    const line = rawLine.replace(/#.*$/, '').trim();
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const key = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (key === 'user-agent') {
      if (!current || !lastWasAgent) {
        current = { agents: [], rules: [], delay: null };
        groups.push(current);
      }
      current.agents.push(productToken(value));
      lastWasAgent = true;
      continue;
    }
    lastWasAgent = false;
    if (key === 'sitemap') {
      if (value && value.length <= MAX_RULE_CHARS && sitemaps.length < MAX_SITEMAPS) sitemaps.push(value);
      continue;
    }
    if (!current) continue;
    if (key === 'allow' || key === 'disallow') {
      // An empty Disallow allows everything; it adds no rule.
      if (value === '' || value.length > MAX_RULE_CHARS || ruleCount >= MAX_RULES) continue;
      ruleCount += 1;
      current.rules.push(compileRule(key === 'allow', encodePath(value)));
    } else if (key === 'crawl-delay') {
      const n = Number(value);
      if (Number.isFinite(n) && n >= 0) current.delay = n;
    }
  }
  const ours = token.toLowerCase();
  let chosen = groups.filter((g) => g.agents.includes(ours));
  if (chosen.length === 0) chosen = groups.filter((g) => g.agents.includes('*'));
  const rules = chosen.flatMap((g) => g.rules);
  const delays = chosen.map((g) => g.delay).filter((d): d is number => d !== null);
  return {
    allows(url: URL): boolean {
      const path = encodePath(url.pathname) + url.search;
      if (path === '/robots.txt') return true;
      let best: Rule | null = null;
      for (const rule of rules) {
        if (!ruleMatches(rule, path)) continue;
        if (!best || rule.pattern.length > best.pattern.length || (rule.pattern.length === best.pattern.length && rule.allow)) best = rule;
      }
      return best ? best.allow : true;
    },
    // reduce, not Math.max(...delays): a file of many tiny groups would overflow the argument list.
    crawlDelaySeconds: delays.length > 0 ? delays.reduce((a, b) => Math.max(a, b)) : null,
    sitemaps,
  };
}

/**
 * What a robots.txt response means (RFC 9309 section 2.3.1): 2xx is parsed, 4xx means no restrictions, and
 * 5xx or no answer means "unreachable", which the caller turns into a retryable page failure rather than
 * caching a full disallow for the whole job.
 */
export function robotsFromResponse(status: number, body: string): RobotsRules | 'unreachable' {
  if (status >= 200 && status < 300) return parseRobots(body);
  if (status >= 400 && status < 500) return ALLOW_ALL;
  return 'unreachable';
}
