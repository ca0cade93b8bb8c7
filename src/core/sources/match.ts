/**
 * How a library name typed by a person or a model ("pg", "mk", "fast api", "Next.js") is scored against the
 * indexed sources' names, and when one of them is the clear match. Shared by `--source` (CLI, REST search),
 * MCP get_content and search_libraries, so every surface picks the same library.
 */

/**
 * Common short names of libraries whose indexed name is longer. Kept small on purpose: an alias is only
 * another spelling, scored like the query itself (a library really named "pg" still matches exactly).
 */
const ALIASES: Readonly<Record<string, string>> = {
  pg: 'postgresql',
  postgres: 'postgresql',
  psql: 'postgresql',
  py: 'python',
  python3: 'python',
  js: 'nodejs',
  node: 'nodejs',
  ts: 'typescript',
  k8s: 'kubernetes',
};

/** Lower case, letters and digits only: "Next.js" and "nextjs" are one name. */
export function normalizeName(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** The canonical name `query` is an alias of, or '' when it is none. */
export function aliasOf(query: string): string {
  return ALIASES[normalizeName(query)] ?? '';
}

/** Minimum score for a source to count as matching a non-empty query. */
export const NAME_MATCH_THRESHOLD = 0.25;

const norm = (x: string) => `regexp_replace(lower(${x}), '[^[:alnum:]]+', '', 'g')`;

/** How close the name in SQL expression `name` is to the text in parameter `p`, below 1 (see scoreOf). */
function fuzzyScoreOf(p: string, name: string): string {
  return `greatest(
      0.5 * public.similarity(lower(${name}), lower(${p})) + 0.5 * public.strict_word_similarity(lower(${p}), lower(${name})),
      CASE WHEN length(${norm(p)}) >= 2 AND starts_with(${norm(name)}, ${norm(p)}) THEN 0.6 ELSE 0 END)`;
}

/**
 * SQL scoring `s.name` (and `s.description`) against the text in parameter `p`. An exact name (ignoring case
 * and punctuation, so "nextjs" finds "Next.js") is 1. Otherwise the best of: the mean of trigram similarity
 * (the whole name) and strict word similarity (the query as a word of a longer name: "router" in
 * "react-router"), so "quillstak" ranks "quillstack" above "quillstack-extras"; a prefix of the name ("mk" for
 * "mkdocs") at 0.6; word similarity against the description at half weight. Capped below 1 so an exact name
 * always ranks first. An empty `p` scores 0.
 */
function scoreOf(p: string): string {
  return `CASE
    WHEN ${p} = '' THEN 0
    WHEN lower(s.name) = lower(${p}) OR ${norm('s.name')} = ${norm(p)} THEN 1
    ELSE least(0.95, greatest(${fuzzyScoreOf(p, 's.name')}, 0.5 * public.word_similarity(lower(${p}), lower(s.description))))
  END`;
}

/** An exact alias ranks just below an exact name (another library really named so wins) and above any fuzzy match. */
const EXACT_ALIAS_SCORE = 0.99;

/** SQL scoring the source's own aliases (`s.aliases`, set by setSourceAliases) against parameter `p`, as names are. */
function aliasesScoreOf(p: string): string {
  return `coalesce((SELECT max(CASE
      WHEN ${p} = '' THEN 0
      WHEN lower(a) = lower(${p}) OR ${norm('a')} = ${norm(p)} THEN ${EXACT_ALIAS_SCORE}
      ELSE least(0.95, ${fuzzyScoreOf(p, 'a')})
    END) FROM unnest(s.aliases) AS a), 0)`;
}

/** The score of a source for query `q` or its alias `alias` (both SQL parameters), whichever is higher; its own aliases count too. */
export function nameScoreSql(q: string, alias: string): string {
  return `greatest(${scoreOf(q)}, ${scoreOf(alias)}, ${aliasesScoreOf(q)})`;
}

export interface ScoredName {
  name: string;
  score: number;
  snippet_count: number;
}

/**
 * A fuzzy top match is only taken on its own when it is this good and the next one scores at most this
 * fraction of it (tuned on names like quillstack / quillstack-extras, mkdocs / mkdocs-material, react / react-dom).
 */
const CLEAR_SCORE = 0.5;
const CLEAR_RATIO = 0.85;
/** With a single candidate, a weaker match is still taken. */
const SOLE_SCORE = 0.3;

/**
 * Index of the clearly best match among `items` (ranked best first), or undefined when the choice is a
 * judgement call. Only sources with content compete: an empty source (a crawl that stored nothing yet) is
 * never the clear match, nor a rival to one. Several versions of one exactly-matching name count as one match.
 */
export function clearBestMatch<T extends ScoredName>(items: readonly T[], query: string): number | undefined {
  if (query.trim() === '') return undefined;
  const full = items.filter((i) => i.snippet_count > 0);
  const top = full[0];
  if (!top) return undefined;
  const index = items.indexOf(top);
  if (top.score >= 1) {
    const rivals = full.filter((i) => i.score >= 1 && i.name.toLowerCase() !== top.name.toLowerCase());
    return rivals.length === 0 ? index : undefined;
  }
  const second = full.find((i) => i.name.toLowerCase() !== top.name.toLowerCase());
  if (!second) return top.score >= SOLE_SCORE ? index : undefined;
  return top.score >= CLEAR_SCORE && second.score <= top.score * CLEAR_RATIO ? index : undefined;
}
