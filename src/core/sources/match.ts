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

/**
 * Each kind of match scores within a band of its own, so a better kind always ranks first and two matches of
 * one kind stay close enough for clearBestMatch to call them a tie (issue #49: "node" took semver, whose
 * repository is node-semver, over "Node.js v18.20.4 Documentation"):
 *   1     the library's own name, exactly (case and punctuation ignored: "nextjs" is "Next.js");
 *   0.9   a well-known short name of it (ALIASES: "pg" is "postgresql");
 *   0.8   the start of its name up to a word's end ("node" of "Node.js v18…", "react" of "react-router");
 *   0.7   one of its own aliases, exactly (a package's repository name: "node-semver" is semver);
 *   <0.7  fuzzy: the start of its name inside a word ("mk" of "mkdocs"), trigram and word similarity of its
 *         name ("router" in "react-router", "quillstak"), half the word similarity of its description, on a
 *         0 to 0.95 similarity scale shrunk by FUZZY_SCALE into the band (so the thresholds tuned on that
 *         scale keep their meaning: they are scaled alike);
 *   ≤0.4  part of one of its own aliases (half its score as a name): an alias is only another spelling, so
 *         "node" in "node-semver" never beats a library whose own name starts with it.
 */
export const MATCH_SCORES = { exact: 1, knownAlias: 0.9, wordPrefix: 0.8, ownAlias: 0.7 } as const;
const FUZZY_CEILING = 0.95;
const FUZZY_SCALE = 0.65 / FUZZY_CEILING;
/** A prefix inside a word ("mk" of "mkdocs"), on the similarity scale. */
const IN_WORD_PREFIX = 0.6;

/** A score on the similarity scale (0 to 0.95) as a score in the fuzzy band. */
function fuzzy(similarity: number): number {
  return similarity * FUZZY_SCALE;
}

/** Minimum score for a source to count as matching a non-empty query. */
export const NAME_MATCH_THRESHOLD = fuzzy(0.25);

const norm = (x: string) => `regexp_replace(lower(${x}), '[^[:alnum:]]+', '', 'g')`;

/**
 * Whether the text in `p` starts the name in `name` and ends where a word of it ends: its letters and digits
 * in order, anything else between them, then the end or a character that is neither ("node" starts
 * "Node.js v18"; "node" does not end a word of "nodemon"). The pattern is built from the query's letters and
 * digits only, which are never regular-expression syntax.
 */
function wordPrefixOf(p: string, name: string): string {
  return `lower(${name}) ~ ('^[^[:alnum:]]*' || regexp_replace(${norm(p)}, '(.)', '\\1[^[:alnum:]]*', 'g') || '(?![[:alnum:]])')`;
}

/** How close the name in SQL expression `name` is to the text in parameter `p`: a whole-word prefix, else fuzzy. */
function fuzzyScoreOf(p: string, name: string): string {
  return `CASE
      WHEN length(${norm(p)}) >= 2 AND starts_with(${norm(name)}, ${norm(p)}) AND ${wordPrefixOf(p, name)} THEN ${MATCH_SCORES.wordPrefix}
      ELSE ${FUZZY_SCALE} * least(${FUZZY_CEILING}, greatest(
        0.5 * public.similarity(lower(${name}), lower(${p})) + 0.5 * public.strict_word_similarity(lower(${p}), lower(${name})),
        CASE WHEN length(${norm(p)}) >= 2 AND starts_with(${norm(name)}, ${norm(p)}) THEN ${IN_WORD_PREFIX} ELSE 0 END))
    END`;
}

/** SQL scoring `s.name` (and `s.description`) against the text in parameter `p`, in the bands of MATCH_SCORES. An empty `p` scores 0. */
function scoreOf(p: string): string {
  return `CASE
    WHEN ${p} = '' THEN 0
    WHEN lower(s.name) = lower(${p}) OR ${norm('s.name')} = ${norm(p)} THEN ${MATCH_SCORES.exact}
    ELSE greatest(${fuzzyScoreOf(p, 's.name')}, ${fuzzy(0.5)} * public.word_similarity(lower(${p}), lower(s.description)))
  END`;
}

/** SQL scoring the source's own aliases (`s.aliases`, set by setSourceAliases) against parameter `p`, below its name. */
function aliasesScoreOf(p: string): string {
  return `coalesce((SELECT max(CASE
      WHEN ${p} = '' THEN 0
      WHEN lower(a) = lower(${p}) OR ${norm('a')} = ${norm(p)} THEN ${MATCH_SCORES.ownAlias}
      ELSE 0.5 * (${fuzzyScoreOf(p, 'a')})
    END) FROM unnest(s.aliases) AS a), 0)`;
}

/**
 * The score of a source for query `q` or its well-known alias `alias` (both SQL parameters; see aliasOf),
 * whichever is higher; its own aliases count too. The bands are MATCH_SCORES'.
 */
export function nameScoreSql(q: string, alias: string): string {
  return `greatest(${scoreOf(q)}, least(${MATCH_SCORES.knownAlias}, ${scoreOf(alias)}), ${aliasesScoreOf(q)})`;
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
const CLEAR_SCORE = fuzzy(0.5);
const CLEAR_RATIO = 0.85;
/** With a single candidate, a weaker match is still taken. */
const SOLE_SCORE = fuzzy(0.3);

/** The kinds of match that score a constant (MATCH_SCORES), best first; below them every score is fuzzy. */
const FIXED_BANDS = [MATCH_SCORES.exact, MATCH_SCORES.knownAlias, MATCH_SCORES.wordPrefix, MATCH_SCORES.ownAlias];

/** Which kind of match a score is: the index of its band in FIXED_BANDS, or FIXED_BANDS.length for a fuzzy one. */
function bandOf(score: number): number {
  const band = FIXED_BANDS.findIndex((floor) => score >= floor - 1e-9);
  return band < 0 ? FIXED_BANDS.length : band;
}

/**
 * Index of the clearly best match among `items` (ranked best first), or undefined when the choice is a
 * judgement call. A better kind of match (MATCH_SCORES) is clear on its own; two of the same fixed kind (two
 * names both starting with the query) are a tie; fuzzy matches need a clear lead. Only sources with content
 * compete: an empty source (a crawl that stored nothing yet) is never the clear match, nor a rival to one.
 * Several versions of one name count as one match.
 */
export function clearBestMatch<T extends ScoredName>(items: readonly T[], query: string): number | undefined {
  if (query.trim() === '') return undefined;
  const full = items.filter((i) => i.snippet_count > 0);
  const top = full[0];
  if (!top) return undefined;
  const index = items.indexOf(top);
  const second = full.find((i) => i.name.toLowerCase() !== top.name.toLowerCase());
  if (!second) return top.score >= SOLE_SCORE ? index : undefined;
  const band = bandOf(top.score);
  if (band < bandOf(second.score)) return index;
  if (band < FIXED_BANDS.length) return undefined;
  return top.score >= CLEAR_SCORE && second.score <= top.score * CLEAR_RATIO ? index : undefined;
}
