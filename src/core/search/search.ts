import { createHash } from 'node:crypto';
import type pg from 'pg';
import { ValidationError } from '../errors.js';
import { openableLink } from '../document-link.js';
import { parseLibraryRef } from '../library-ref.js';
import { resolveLibrary } from '../sources/resolve.js';
import { termCodeness } from './codeness.js';
import { languageFilter } from './language-filter.js';
import { buildTsQueries, checkQueryLength, compoundPattern, exactIdentifiers, parseQuery, phraseWordsQuery } from './query.js';
import type { ParsedQuery, TsQueries } from './query.js';
import { diversify } from './diversify.js';
import { CODE_VECTOR_SQL, OWN_VECTOR_SQL, scoreParts, scoreSql, termHitsSql, WEIGHTS } from './rank.js';
import type { ScorePart } from './rank.js';
import { applyScreening, screeningFields } from './screening.js';
import type { ScreenedFields, ScreeningMode } from './screening.js';
import { correctWords, wordStats } from './typo.js';
import type { WordStats } from './typo.js';

type Db = pg.Pool | pg.ClientBase;

/**
 * The one snippet search behind the CLI, REST, MCP and the TUI.
 *
 * Query words are first checked against the index's vocabulary and misspellings expanded (typo.ts). Retrieval
 * then runs in tiers inside one statement, each only when the tiers before it found too little: every term
 * (AND); then all terms but one (n-1 of n); then any term (OR); and, in parallel with the relaxed tiers, the
 * snippets of the pages whose text matches every term (the page's prose often says what its code does), or,
 * when few pages do, all terms but one, the pages with the query's rarest words first.
 * Candidates are ranked by scoreSql (rank.ts), where coverage dominates, so relaxed matches only fill in below
 * full ones. When snippets still come up short, the pages whose text matches any term are searched and their
 * snippets returned after the others, marked `match: 'page'`.
 */

export interface SearchOptions {
  query: string;
  /** A library reference (library-ref.ts): source UUID, name (exact, then fuzzy; its latest version) or name@version. */
  source?: string;
  version?: string;
  /**
   * Only these sources (UUIDs), ranked together: a project's libraries at their recorded versions. With
   * `source` or `version` too, only the sources both select. An empty list matches nothing.
   */
  sourceIds?: readonly string[];
  /** Any spelling normalizeLanguage knows (`py`, `Python`, `js`). */
  language?: string;
  limit?: number;
  offset?: number;
  /** DOCDEX_SCREENING: what to do with snippets flagged at index time (search/screening.ts); default `flag`. */
  screening?: ScreeningMode;
}

export interface SearchResult extends ScreenedFields {
  id: number;
  /**
   * 'snippet': a code block with its title and context; 'section': a heading-bounded section of a page (title:
   * its breadcrumb; code: its markdown, prose with the code blocks it holds; language: that of its code).
   */
  kind: 'snippet' | 'section';
  title: string;
  description: string;
  language: string;
  code: string;
  /**
   * Page URL with the anchor of the nearest heading: the document's identity in the index (a local
   * repository's is `<remote>@<commit>/<path>`), not always something that opens.
   */
  source_url: string;
  /** What opens it (document-link.ts openableLink): a web URL, or a `file://` URL of a file on disk; absent when nothing does. */
  link?: string;
  source_id: string;
  source_name: string;
  version: string;
  score: number;
  /** 'snippet': the snippet itself matched; 'page': its page's text matched (fallback). */
  match: 'snippet' | 'page';
  /**
   * More from this page: its other matching units that wait below results from other pages (diversify.ts),
   * best first, at most MORE_PER_PAGE; absent when there are none.
   */
  more?: MoreFromPage[];
}

/** A unit folded under its page's first result: enough to name it and fetch it (its id, its URL). */
export interface MoreFromPage {
  id: number;
  kind: SearchResult['kind'];
  title: string;
  source_url: string;
  score: number;
}

export interface SearchResponse {
  items: SearchResult[];
  /** Matches found; counting stops at MAX_CANDIDATES per tier, so a very broad query reports a floor. */
  total: number;
  limit: number;
  offset: number;
  /** Query words not in the index's vocabulary and what they were read as. */
  corrected?: Array<{ from: string; to: string }>;
  /** True when page-text matches were added because snippets matched too little. */
  fallback: boolean;
  /** DOCDEX_SCREENING=strict: how many results of this page were withheld as possible prompt injection. */
  withheld?: number;
  /** The library `source` named, when one was given: which one was searched, and whether its name was exact. */
  library?: SearchedLibrary;
}

export interface SearchedLibrary {
  id: string;
  name: string;
  version: string;
  /** The name as asked for. */
  requested: string;
  /** False when no library is named so and the closest match (sources/match.ts) was searched instead. */
  exact: boolean;
}

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
const MAX_OFFSET = 1000;
// Ranking cost grows with the candidates; beyond this many matches of a tier the query is too broad for the
// order among the rest to matter, and a broad one-word query stays within the latency budget at 1M snippets.
export const MAX_CANDIDATES = 500;
// A tier that found fewer matches than this lets the next, looser tier add candidates.
const RELAX_BELOW = 30;
// Fewer snippet matches than this and the page-text fallback runs.
const FALLBACK_BELOW = 3;
const FALLBACK_PAGES = 10;
// Pages whose text matches every term, considered when the snippets alone match too few: ranking a page reads its
// whole (large) vector, so both how many are ranked and how many lend their snippets are bounded.
const MAX_PAGE_MATCHES = 200;
// With no library named, the pages of every library share these: at half as many, the answer's page to a question
// in plain words often came just after other libraries' pages with the same common words (`npm run eval`, mixed).
const CONTEXT_PAGES = 20;
// Relaxed tiers match broadly (any one word); their extra candidates only fill in below full matches, so fewer
// of them are ranked. A page lends at most this many of its matching snippets (an all-in-one page has thousands).
const MAX_RELAXED_CANDIDATES = 200;
const SNIPPETS_PER_CONTEXT_PAGE = 30;
// Pages matching all terms but one are found combination by combination, each capped on its own: a capped OR of
// them all filled up with the pages of the most common combination, and the page holding the query's rare
// word was left out. Within a combination the first pages by URL are taken, not the first the index returns:
// the same pages in another database (an installed index pack) must give the same answers.
const PAGES_PER_COMBO = 50;
// ts_rank normalisation 2: divide by the document length, so a page focused on the terms beats a long one.
const PAGE_RANK_NORMALISATION = 2;
// How deep the ranking is read to fill a page of results from distinct pages (diversify.ts): units of a page
// come in runs (the ten results of a query came from a median of three pages), so five per result asked for.
const DIVERSIFY_DEPTH = 5;
// Units folded under a result as "more from this page": enough to say the page has more, bounded so a
// result list stays small.
const MORE_PER_PAGE = 3;

interface Filters {
  sourceIds: string[] | null;
  language: string | null;
  library: SearchedLibrary | null;
}

function checkOptions(options: SearchOptions): { limit: number; offset: number } {
  const limit = options.limit ?? DEFAULT_LIMIT;
  const offset = options.offset ?? 0;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw new ValidationError(`limit must be a whole number from 1 to ${MAX_LIMIT}, got ${limit}.`);
  if (!Number.isInteger(offset) || offset < 0 || offset > MAX_OFFSET) throw new ValidationError(`offset must be a whole number from 0 to ${MAX_OFFSET}, got ${offset}.`);
  if (typeof options.query !== 'string') throw new ValidationError('query must be a string.');
  checkQueryLength(options.query);
  checkSourceIds(options.sourceIds);
  return { limit, offset };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function checkSourceIds(ids: readonly string[] | undefined): string[] | null {
  if (ids === undefined) return null;
  const bad = ids.find((id) => typeof id !== 'string' || !UUID.test(id));
  if (bad !== undefined) throw new ValidationError(`sourceIds must be source UUIDs, got ${JSON.stringify(bad)}.`);
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

async function resolveFilters(pool: Db, options: SearchOptions): Promise<Filters> {
  const only = checkSourceIds(options.sourceIds);
  let sourceIds: string[] | null = null;
  let library: SearchedLibrary | null = null;
  if (options.source !== undefined && options.source.trim() !== '') {
    const ref = parseLibraryRef(options.source);
    const resolved = await resolveLibrary(pool, ref, options.version);
    library = { id: resolved.id, name: resolved.name, version: resolved.version, requested: ref.kind === 'id' ? ref.id : ref.name, exact: !resolved.fuzzy };
    sourceIds = [resolved.id];
  } else if (options.version !== undefined && options.version !== '') {
    const { rows } = await pool.query<{ id: string }>('SELECT id FROM sources WHERE version = $1', [options.version]);
    sourceIds = rows.map((r) => r.id);
  }
  if (only !== null) sourceIds = sourceIds === null ? only : sourceIds.filter((id) => only.includes(id.toLowerCase()));
  return { sourceIds, language: await languageFilter(pool, options.language), library };
}

/**
 * Which tiers a search runs, from how common its terms are (the lexicon's snippet counts). A term in most
 * snippets matches nearly everything once the query is relaxed, and reading its huge index entry is what makes
 * a search slow at a million snippets, so the relaxed tiers leave such terms out (they still count in the
 * ranking). A relaxed tier made only of common terms is not run at all.
 */
export interface Retrieval {
  /** tsquery source of the (n-1)-of-n tier, '' when it does not run. */
  relaxed: string;
  /** tsquery source of the any-term tier, '' when it does not run. */
  any: string;
  /** The any-term tier's terms one by one (anyTierCte). */
  anyTerms: string[];
  /** Whether pages matching every term lend their snippets (two terms or more). */
  pages: boolean;
  /** Whether the every-term tier reads rows in table order instead of through the search index. */
  scan: boolean;
  /**
   * tsquery source the every-term tier reads the search index for when some terms are very common and some are
   * not, or a phrase has a narrower form (phraseIndexForms): the other terms, phrases in their narrower form; every
   * term is then checked on the rows found. '' to read it for all terms as they are.
   */
  find: string;
  /** Whether the relaxed tier reads the index for its selective terms only (`any`), checking its pairs on rows. */
  relaxedOnRows: boolean;
  /** The relaxed tier's (n-1)-term combinations one by one, for the pages matching all terms but one. */
  relaxedCombos: string[];
  /** Each term's weight in choosing those pages: how rare it is (0 for a stop word). */
  termWeights: number[];
  /**
   * Two words each, side by side in a quoted phrase (phrasePairs): the every-term tier reads the pair index for
   * them (migration 041) in place of the index entries of the phrases they come from. [] when there are none.
   */
  pairs: string[];
}

// A term in more than this share of all snippets is "common": no help in finding, only in ranking.
const COMMON_SHARE = 0.05;

/**
 * Share of the snippets a word matches. A corrected word counts with its corrections' counts, the typed
 * spelling being unknown to the index: counted as rare instead, a typo of a common word planned the search
 * unlike the same query spelled right (its common word read through the index and put in the relaxed tiers).
 */
function wordShare(w: string, stats: WordStats, corrected: ReadonlyMap<string, readonly string[]>, correctionStats: WordStats | null): number {
  const s = stats.words.get(w);
  if (!s || s.stem === null) return 1; // a stop word constrains nothing
  if (stats.total === 0) return 0;
  const alternatives = corrected.get(w) ?? [];
  const count = s.count + alternatives.reduce((sum, c) => sum + (correctionStats?.words.get(c)?.count ?? 0), 0);
  return Math.min(1, count / stats.total);
}

function termShares(parsed: ParsedQuery, stats: WordStats, corrected: ReadonlyMap<string, readonly string[]>, correctionStats: WordStats | null): number[] {
  return parsed.terms.map((t) =>
    t.words
      .map((w) => wordShare(w, stats, corrected, correctionStats))
      // Words of one identifier or phrase must all be there.
      .reduce((a, b) => a * b, 1),
  );
}

/** Estimated share of the snippets matching every term (independence assumed). */
export function matchShare(parsed: ParsedQuery, stats: WordStats, corrected: ReadonlyMap<string, readonly string[]>, correctionStats: WordStats | null): number {
  if (stats.total === 0) return 0;
  return termShares(parsed, stats, corrected, correctionStats).reduce((product, share) => product * share, 1);
}

// Finding every-term matches through the search index reads every posting of every term before the first row
// comes back (a bitmap), which for terms in a large share of a million snippets takes tens of milliseconds;
// reading rows in table order until the cap is met checks about cap / share rows, a few thousand at these
// shares. Without a source to narrow the rows by index, a language filter leaves the scan more rows to pass
// over, so it needs more common terms before it pays.
const SCAN_SHARE = 0.05;
const SCAN_SHARE_LANGUAGE_ONLY = 0.25;

export function scanAllTerms(share: number, filters: Pick<Filters, 'sourceIds' | 'language'>): boolean {
  return share >= (filters.language !== null && filters.sourceIds === null ? SCAN_SHARE_LANGUAGE_ONLY : SCAN_SHARE);
}

// The rarest a word counts as: one snippet in a million. A word in none (a typo left as typed) is no rarer.
const RAREST_SHARE = 1e-6;

/** A term's inverse document frequency, from its share of the snippets: 0 for a stop word (share 1). */
function rarity(share: number): number {
  return Math.log(1 / Math.max(share, RAREST_SHARE));
}

// A term on at least this share of the snippets is checked on the rows that the query's other terms find
// through the index, instead of being read from it (planRetrieval).
const ON_ROWS_SHARE = 0.2;

/**
 * A term in a large share of the snippets is what makes an index read slow: its entry lists a large share of a
 * million rows, all of which the index decodes to answer a query that names it (for an OR of ANDs, as the
 * relaxed tier is, with no skipping at all). Every match of the every-term tier has each of the other terms,
 * so the index is read for those and the very common ones are checked on the rows it returns. Of three terms,
 * every match of the relaxed tier has a selective one, and a row found through it matches its pair with a very
 * common term about as often as that term occurs, so the tier's cap is met within a few times as many rows.
 * Terms that are only fairly common stay in the index read: checked on rows, most rows would fail them, and
 * the rows fetched only to be dropped cost more than the index read saved (the median in `npm run eval`).
 */
export function planRetrieval(q: TsQueries, shares: readonly number[], narrower: readonly string[] = [], pairs: ReadonlyArray<readonly string[]> = []): Retrieval {
  const n = q.perTerm.length;
  const rare = q.perTerm.filter((_, i) => (shares[i] ?? 0) <= COMMON_SHARE);
  // A share of 1 is a stop word (or a word in every snippet): it constrains nothing wherever it is checked.
  const veryCommon = q.perTerm.filter((_, i) => (shares[i] ?? 0) >= ON_ROWS_SHARE && (shares[i] ?? 0) < 1);
  // A phrase with word pairs is read from the pair index, so not from the search index too.
  const paired = (i: number) => (pairs[i]?.length ?? 0) > 0;
  // A term's narrower form (phraseIndexForms) is what the index is read for in its place.
  const indexed = q.perTerm.flatMap((t, i) => ((shares[i] ?? 0) < ON_ROWS_SHARE && !paired(i) ? [narrower[i] || t] : []));
  const narrowed = q.perTerm.some((t, i) => (shares[i] ?? 0) < ON_ROWS_SHARE && !paired(i) && (narrower[i] || t) !== t);
  const pairList = pairs.flat();
  const relaxedCombos =
    n < 3
      ? []
      : q.perTerm
          .map((_, skip) => q.perTerm.filter((__, i) => i !== skip))
          .filter((combo) => combo.some((t) => rare.includes(t)))
          .map((combo) => `(${combo.join(' & ')})`);
  const relaxed = relaxedCombos.join(' | ');
  return {
    relaxed,
    relaxedCombos,
    termWeights: shares.map(rarity),
    any: n >= 2 ? rare.join(' | ') : '',
    anyTerms: n >= 2 ? rare : [],
    pages: n >= 2,
    scan: false,
    // With pairs, only the other terms are read through the search index (none: the pairs alone).
    find: (pairList.length > 0 || veryCommon.length > 0 || narrowed) && indexed.length > 0 ? indexed.join(' & ') : '',
    relaxedOnRows: n === 3 && relaxed !== '' && veryCommon.length > 0,
    pairs: pairList,
  };
}

// A phrase's word in at least this share of the snippets is left out of its index read (phraseIndexForms).
// Leaving out a word in a share s of the snippets multiplies the rows the phrase is checked on by up to 1 / s,
// each a heap visit, against decoding the word's whole index entry: it pays for a word in nearly every snippet
// ("dorpravel read"), whose entry is the longest to decode, but not for one in a minority of them ("build
// insert" checked several times as many rows and got slower; the search bench, BENCH_VERBOSE=1).
const PHRASE_ON_ROWS_SHARE = 0.5;

/**
 * For each term, a narrower form to read the index for instead ('' for none). A quoted phrase with a word in
 * most snippets ("dorpravel read") made the index decode that word's whole entry to find rows holding both
 * words, although the other alone finds nearly the same rows; the phrase is checked on each row either way (the
 * index has no word positions). So such words, and stop words, are left out of the index read. Identifiers are
 * left whole: a dotted one is also a lexeme of its own, which a row can hold without its parts.
 */
export function phraseIndexForms(parsed: ParsedQuery, stats: WordStats, corrected: ReadonlyMap<string, readonly string[]>, correctionStats: WordStats | null): string[] {
  return parsed.terms.map((t) => {
    if (!t.phrase) return '';
    const selective = (w: string) => wordShare(w, stats, corrected, correctionStats) < PHRASE_ON_ROWS_SHARE;
    return t.words.every(selective) ? '' : phraseWordsQuery(t, selective, corrected);
  });
}

/**
 * For each term, the pairs of words side by side in it that the pair index (migration 041) lists rows for: of a
 * quoted phrase, each two neighbouring words that are both indexed, as 'first second' (the database stems them
 * as it stems a row's text). A phrase matches only rows that hold each such pair side by side, so the rows the
 * pair index finds hold every match, whatever the words' shares (a pair is never more common than its rarer
 * word). A stop word between two words breaks their pair (the phrase then allows a word between them), and a
 * corrected word is left out (its pair would be one of several spellings). Identifiers and words have none.
 */
export function phrasePairs(parsed: ParsedQuery, stats: WordStats, corrected: ReadonlyMap<string, readonly string[]>): string[][] {
  const indexed = (w: string) => (stats.words.get(w)?.stem ?? null) !== null && (corrected.get(w)?.length ?? 0) === 0;
  return parsed.terms.map((t) => (t.phrase ? t.words.slice(1).flatMap((w, i) => (indexed(t.words[i]!) && indexed(w) ? [`${t.words[i]!} ${w}`] : [])) : []));
}

// The screening columns are read here, for the returned rows only, never while ranking.
const RESULT_COLUMNS = `s.id, s.kind, s.title, s.description, s.language, s.code, s.source_url, s.source_id, src.name AS source_name, src.version, s.flags, s.flagged_passage, src.typed_by_user`;

// A folded unit's row in the same statement as the results shown: RESULT_COLUMNS by position, with only what names
// and links it (foldedLinks) read and the rest NULL, derived so that the two lists cannot drift apart.
const FOLDED_COLUMNS = RESULT_COLUMNS.split(', ')
  .map((column) => (['s.id', 's.kind', 's.title', 's.source_url'].includes(column) ? column : 'NULL'))
  .join(', ');

/**
 * Code shown on several pages links to the first page it was stored from. When that page is an aggregate (Node's
 * all.html, a single-page print version) several times the size of another page showing the same code, the
 * smaller, focused page stands for the snippet instead: its title is what the code is about, and it is the
 * better link. Its anchor for the code is not known, so the link is to the page.
 */
const FOCUSED_PAGE = `LEFT JOIN LATERAL (
    SELECT d2.id, d2.url FROM snippet_occurrences o JOIN documents d2 ON d2.id = o.document_id
     WHERE s.page_count > 1 AND o.snippet_id = s.id AND o.document_id <> s.document_id
       AND octet_length(d2.markdown) * 3 < (SELECT octet_length(d1.markdown) FROM documents d1 WHERE d1.id = s.document_id)
     ORDER BY octet_length(d2.markdown), d2.url
     LIMIT 1
  ) focused ON true`;

type Row = Omit<SearchResult, 'match' | keyof ScreenedFields> & { total: number; flags: string[]; flagged_passage: string | null; typed_by_user: boolean };

/**
 * The ranking statement's parameters by name; their order here is their `$n` number, so placeholders are computed
 * (`param`) and the value list is built from a named object (`searchValues`), never counted by hand.
 */
const SEARCH_PARAMETERS = [
  'all', // every term (AND)
  'relaxed', // all terms but one (Retrieval.relaxed)
  'any', // any selective term (Retrieval.any)
  'terms', // each term's tsquery source
  'titles', // each term's tsquery source for titles
  'phrase',
  'identifiers',
  'sourceIds',
  'language',
  'candidateCap',
  'relaxBelow', // a tier with fewer matches lets the next one run
  'limit',
  'offset',
  'pageMatchCap',
  'contextPages', // pages searched for snippets
  'relaxedCandidateCap',
  'snippetsPerContextPage',
  'anyTerm', // any term, the common ones too, for ranking ('any' leaves them out)
  'find', // what of 'all' is read through the index when it is not all of it (Retrieval.find)
  'compound', // code naming two query words as one identifier (compoundPattern)
  'codeTerms', // each term's tsquery source for code, abbreviations included
  'relaxedCombos', // Retrieval.relaxedCombos
  'termWeights', // Retrieval.termWeights
  'pagesPerCombo', // pages found for each of relaxedCombos
  'codeness', // each term's weight in the coverage (codeness.ts)
  'anyTerms', // Retrieval.anyTerms
  'pairs', // Retrieval.pairs
] as const;
type SearchParameter = (typeof SEARCH_PARAMETERS)[number];
type SearchValues = Record<SearchParameter, unknown>;

/** The `$n` placeholder of each parameter. */
const param = Object.fromEntries(SEARCH_PARAMETERS.map((name, i) => [name, `$${i + 1}`])) as Record<SearchParameter, string>;

function searchValues(values: SearchValues): unknown[] {
  return SEARCH_PARAMETERS.map((name) => values[name]);
}

/** What a statement's shape depends on: the tiers it runs and how they read the index. */
type Tiers = Omit<Retrieval, 'relaxed' | 'any' | 'find' | 'relaxedCombos' | 'termWeights' | 'anyTerms' | 'pairs'> & { relaxed: boolean; any: boolean; find: boolean; pairs: boolean };

/** The source filter on a table with a source_id (snippets s, documents d). */
function sourceFilter(alias: string): string {
  return `(${param.sourceIds}::uuid[] IS NULL OR ${alias}.source_id = ANY(${param.sourceIds}))`;
}
const LANGUAGE_FILTER = `(${param.language}::text IS NULL OR s.language = ${param.language})`;
const SNIPPET_FILTERS = `${sourceFilter('s')} AND ${LANGUAGE_FILTER}`;

/**
 * The tiers call to_tsquery on their parameter in place (not through the q row) so the planner, which plans
 * each search with its values, can estimate how common the terms are: a word in most snippets is found faster
 * by reading rows until the cap than through the index.
 */
function snippetSearchSql(termCount: number, identifierCount: number, tiers: Tiers, withParts = false): string {
  return `
WITH ${queryCte()},
${tierCtes(tiers)}${pageCtes(tiers, termCount)}
${rankingCtes(termCount, identifierCount, tiers, withParts)}`;
}

/** The query's tsqueries, computed once. */
function queryCte(): string {
  return `q AS MATERIALIZED (
  SELECT to_tsquery('english', ${param.all}) AS qall,
         to_tsquery('english', ${param.anyTerm}) AS any,
         terms, titles, code_terms,
         (SELECT count(*)::int FROM unnest(terms) AS t WHERE numnode(t) > 0) AS n,
         to_tsquery('english', ${param.phrase}) AS phrase,
         ${param.identifiers}::text[] AS identifiers,
         ${param.compound}::text AS compound,
         ${param.termWeights}::float8[] AS weights,
         ${param.codeness}::float8[] AS codeness,
         -- Typed here so that statements without the tiers using them still accept every parameter.
         (${param.relaxed}::text, ${param.any}::text, ${param.relaxBelow}::int, ${param.pageMatchCap}::int, ${param.contextPages}::int, ${param.relaxedCandidateCap}::int, ${param.snippetsPerContextPage}::int, ${param.find}::text, ${param.relaxedCombos}::text[], ${param.pagesPerCombo}::int, ${param.anyTerms}::text[], ${param.pairs}::text[]) AS tier_parameters
    FROM (SELECT ARRAY(SELECT to_tsquery('english', t) FROM unnest(${param.terms}::text[]) AS t) AS terms,
                 ARRAY(SELECT to_tsquery('english', t) FROM unnest(${param.titles}::text[]) AS t) AS titles,
                 ARRAY(SELECT to_tsquery('english', t) FROM unnest(${param.codeTerms}::text[]) AS t) AS code_terms) AS a
)`;
}

/**
 * Snippets and sections are found in pools of their own, each tier relaxing on its own kind's count. In one
 * pool, sections (prose and code, so they match more terms than a snippet) filled the every-term tier's cap and
 * its count: the snippets of a broad query were cut from the candidates, and a question whose words no snippet
 * held all of never reached the relaxed tiers and the pages' snippets, which the sections' matches counted for.
 * The Debian sets fell with sections in the index even when none was ranked (`npm run eval`, the CHANGELOG).
 */
const UNIT_KINDS = ['snippet', 'section'] as const;

/** A tier's candidates of both kinds: `select(kind)` is one kind's capped query. */
function byKind(select: (kind: (typeof UNIT_KINDS)[number]) => string): string {
  return UNIT_KINDS.map((kind) => `(${select(kind)})`).join('\n  UNION ALL\n  ');
}

/** How many candidates of `kind` the tiers named found. */
function foundOfKind(tiers: readonly string[], kind: string): string {
  return tiers.map((t) => `(SELECT count(*) FROM ${t} WHERE kind = '${kind}')`).join(' + ');
}

/**
 * The every-term tier's condition: what it reads through the indexes, and every term checked on the rows found.
 * IS TRUE hides a match from the planner's index matching (same rows: a match is never NULL here). A phrase's
 * pairs are read from the pair index (migration 041): the search index has no word positions, so a phrase read
 * from it fetched every row holding its words anywhere to check their order.
 */
function allTermsCondition(tiers: Tiers): string {
  const check = `(s.search_vector @@ to_tsquery('english', ${param.all})) IS TRUE`;
  const find = `s.search_vector @@ to_tsquery('english', ${param.find})`;
  if (tiers.scan) return check;
  if (tiers.pairs) return [`search_pairs(s.search_vector) @> search_pair_keys(${param.pairs}::text[])`, ...(tiers.find ? [find] : []), check].join(' AND ');
  return tiers.find ? `${find} AND ${check}` : `s.search_vector @@ to_tsquery('english', ${param.all})`;
}

/** Candidates by the index tiers, for each kind apart: every term, then (when too few) all but one, then any term. */
function tierCtes(tiers: Tiers): string {
  const allTerms = allTermsCondition(tiers);
  const relaxedTerms = tiers.relaxedOnRows
    ? `s.search_vector @@ to_tsquery('english', ${param.any}) AND (s.search_vector @@ to_tsquery('english', ${param.relaxed})) IS TRUE`
    : `s.search_vector @@ to_tsquery('english', ${param.relaxed})`;
  const tier1 = `-- The search index holds each snippet's language (migration 016): its reads answer the language filter too.
tier1 AS (
  ${byKind(
    (kind) => `SELECT s.id, s.kind FROM snippets s
   WHERE numnode(to_tsquery('english', ${param.all})) > 0 AND ${allTerms}
     AND ${SNIPPET_FILTERS} AND s.kind = '${kind}'
   LIMIT ${param.candidateCap}`,
  )}
),
`;
  const tier2 = `tier2 AS (
  ${byKind(
    (kind) => `SELECT s.id, s.kind FROM snippets s
   WHERE ${foundOfKind(['tier1'], kind)} < ${param.relaxBelow} AND ${relaxedTerms}
     AND ${SNIPPET_FILTERS} AND s.kind = '${kind}'
   LIMIT ${param.relaxedCandidateCap}`,
  )}
),`;
  const tier3 = `${anyTierCte(tiers)},`;
  return `${tier1}${tiers.relaxed ? tier2 : ''}${tiers.any ? tier3 : ''}`;
}

/**
 * The any-term tier: for each kind, rows matching any selective term, at most the relaxed cap of them. Read as
 * one OR through the index and cut at the cap, they came in table order: the library indexed first filled the
 * cap with rows of its most common selective word, and with no library named, the answer in a library indexed
 * later, holding a rarer word of the question, was never a candidate (the repository held-out set, mixed). Each
 * term's rows are read apart, each term taking an equal share of the cap: a rare word's rows all come in, and
 * the rows visited stay within the cap as before.
 */
function anyTierCte(tiers: Tiers): string {
  return `tier3 AS (
  ${byKind(
    (kind) => `SELECT DISTINCT m.id, m.kind FROM unnest(${param.anyTerms}::text[]) AS t(term), LATERAL (
    SELECT s.id, s.kind FROM snippets s
     WHERE ${foundOfKind(tiers.relaxed ? ['tier1', 'tier2'] : ['tier1'], kind)} < ${param.relaxBelow}
       AND s.search_vector @@ to_tsquery('english', t.term)
       AND ${SNIPPET_FILTERS} AND s.kind = '${kind}'
     LIMIT ceil(${param.relaxedCandidateCap}::float8 / cardinality(${param.anyTerms}::text[]))::int) AS m`,
  )}
)`;
}

/**
 * The sum over the query's terms that page `d` matches of `value(i)`, for term i (1-based), unrolled like the
 * snippet checks (rank.ts): `q.codeness[i]` counts the terms as the snippets' coverage does, `q.weights[i]`
 * adds up their rarity.
 */
function pageTermSum(termCount: number, value: (i: number) => string): string {
  const terms = Array.from({ length: termCount }, (_, i) => i + 1);
  return `(${terms.map((i) => `(CASE WHEN d.search_vector @@ q.terms[${i}] THEN ${value(i)} ELSE 0 END)`).join(' + ') || '0'})`;
}

/**
 * The snippets of the pages whose text matches every term, when the tiers found too few; and when fewer pages
 * than CONTEXT_PAGES do, of pages matching all terms but one (the relaxed tier's query). A question in plain
 * words carries a word its answer's page never uses ("freezing" for run_in_executor, "many" for an upsert);
 * each page counts the terms it has, and its snippets get credit for those only (rank.ts).
 */
function pageCtes(tiers: Tiers, termCount: number): string {
  if (!tiers.pages) return `top_pages AS (SELECT NULL::uuid AS id, NULL::float8 AS relevance, NULL::float8 AS hits WHERE false),`;
  const relaxedPages = tiers.relaxed
    ? `
  UNION
  SELECT x.id FROM unnest(${param.relaxedCombos}::text[]) AS c(combo), LATERAL (
    SELECT d.id FROM documents d
     WHERE ${foundOfKind(['tier1'], 'snippet')} < ${param.relaxBelow} AND (SELECT count(*) FROM (SELECT 1 FROM full_page_matches LIMIT ${param.contextPages}) AS f) < ${param.contextPages}
       AND d.search_vector @@ to_tsquery('english', c.combo)
       AND ${sourceFilter('d')}
     ORDER BY d.url LIMIT ${param.pagesPerCombo}) AS x`
    : '';
  return `full_page_matches AS (
  SELECT d.id FROM documents d
   WHERE ${foundOfKind(['tier1'], 'snippet')} < ${param.relaxBelow}
     AND numnode(to_tsquery('english', ${param.all})) > 0 AND d.search_vector @@ to_tsquery('english', ${param.all})
     AND ${sourceFilter('d')}
   LIMIT ${param.pageMatchCap}
),
page_matches AS (SELECT id FROM full_page_matches${relaxedPages}),
top_pages AS (
  SELECT x.id, x.hits, (x.weight / NULLIF(max(x.weight) OVER (), 0)) * (x.rank / NULLIF(max(x.rank) OVER (), 0)) AS relevance
    FROM (SELECT d.id, ${pageTermSum(termCount, (i) => `q.codeness[${i}]`)} AS hits, ${pageTermSum(termCount, (i) => `q.weights[${i}]`)} AS weight, ts_rank(d.search_vector, q.qall, ${PAGE_RANK_NORMALISATION}) AS rank
            FROM page_matches m JOIN documents d ON d.id = m.id, q
           ORDER BY weight DESC, rank DESC, d.url, d.id LIMIT ${param.contextPages}) AS x
),
tier_pages AS (
  SELECT x.id FROM top_pages p, q, LATERAL (
    SELECT o.snippet_id AS id FROM snippet_occurrences o JOIN snippets s ON s.id = o.snippet_id
     WHERE o.document_id = p.id AND s.search_vector @@ q.any AND ${LANGUAGE_FILTER}
     ORDER BY o.position LIMIT ${param.snippetsPerContextPage}) AS x
),`;
}

/**
 * The candidates ranked (rank.ts), one page of them, with their result columns; `withParts`, each weighted
 * signal of the score too (explainScores), as columns `part_<name>`.
 */
function rankingCtes(termCount: number, identifierCount: number, tiers: Tiers, withParts: boolean): string {
  const parts: ScorePart[] = withParts ? scoreParts(termCount, identifierCount) : [];
  const computed = parts.map((p) => `, ${p.sql} AS "part_${p.name}"`).join('');
  const passed = (alias: string) => parts.map((p) => `, ${alias}."part_${p.name}"`).join('');
  return `candidates AS (SELECT id FROM tier1${tiers.relaxed ? ' UNION SELECT id FROM tier2' : ''}${tiers.any ? ' UNION SELECT id FROM tier3' : ''}${tiers.pages ? ' UNION SELECT id FROM tier_pages' : ''}),
placed AS (
  SELECT s.id, s.kind, s.title, s.search_vector, s.code, s.page_count, COALESCE(focused.id, s.document_id) AS document_id, focused.url AS page_url
    FROM candidates c JOIN snippets s ON s.id = c.id
    ${FOCUSED_PAGE}
),
ranked AS (
  SELECT s.id, s.document_id, s.page_url, ${scoreSql(termCount, identifierCount)} AS score${computed}
    FROM placed s
    -- One index probe per candidate: planned as a join, a mid-sized index (tens of thousands of pages) got its
    -- whole documents table hashed for a few hundred candidates. OFFSET 0 keeps the subquery from being merged.
    CROSS JOIN LATERAL (SELECT d.title_vector FROM documents d WHERE d.id = s.document_id OFFSET 0) AS d
    LEFT JOIN top_pages tp ON tp.id = s.document_id, q,
    LATERAL (${OWN_VECTOR_SQL}) AS o,
    LATERAL (SELECT ${termHitsSql(termCount)} AS hits, ${CODE_VECTOR_SQL}) AS h
),
paged AS (
  SELECT r.id, r.document_id, r.page_url, r.score${passed('r')}, count(*) OVER ()::int AS total FROM ranked r ORDER BY r.score DESC, r.id LIMIT ${param.limit} OFFSET ${param.offset}
)
SELECT p.id, p.document_id::text AS document_id, p.page_url, p.score, p.total, sn.title, sn.kind, CASE WHEN sn.kind = 'snippet' THEN sn.code ELSE '' END AS code${passed('p')}
  FROM paged p JOIN snippets sn ON sn.id = p.id ORDER BY p.score DESC, p.id`;
}

// The statement texts are few (one per shape of query) and long: each goes out as a named statement, parsed
// and analysed once per connection instead of once per search, where parsing a long text is a real share of a
// fast search (the search bench's 'function / bare SQL' row). The connections plan them for each search's
// values all the same (plan_cache_mode, db/connect.ts). A prepared shape keeps its parse tree in the memory of
// every connection that ran it, so only the first NAMED_SHAPES shapes of a process are named (the search
// bench's query mix uses fewer); rarer shapes are parsed each time.
const NAMED_SHAPES = 32;
const sqlCache = new Map<string, { name?: string; text: string }>();
let namedShapes = 0;

function tiersOf(retrieval: Retrieval): Tiers {
  return { ...retrieval, relaxed: retrieval.relaxed !== '', any: retrieval.any !== '', find: retrieval.find !== '', pairs: retrieval.pairs.length > 0 };
}

function cachedSql(termCount: number, identifierCount: number, retrieval: Retrieval): { name?: string; text: string } {
  const tiers = tiersOf(retrieval);
  const key = `${termCount}/${identifierCount}/${tiers.relaxed}/${tiers.any}/${tiers.pages}/${tiers.scan}/${tiers.find}/${tiers.relaxedOnRows}/${tiers.pairs}`;
  let sql = sqlCache.get(key);
  if (sql === undefined) {
    const text = snippetSearchSql(termCount, identifierCount, tiers);
    sql = namedShapes < NAMED_SHAPES ? { name: `docdex-search-${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text } : { text };
    if (sql.name !== undefined) namedShapes++;
    sqlCache.set(key, sql);
  }
  return sql;
}

/** What the ranking statement is built from: a prepared search without its paging. */
type StatementInput = Pick<PreparedSearch, 'q' | 'parsed' | 'retrieval' | 'filters' | 'compound' | 'codeness'>;

function snippetStatement({ q, parsed, retrieval, filters, compound, codeness }: StatementInput, limit: number, offset: number, withParts = false): { name?: string; text: string; values: unknown[] } {
  const identifiers = exactIdentifiers(parsed);
  return {
    // The statement with the score's parts is for reading a ranking (explainScores), not a search: not cached.
    ...(withParts ? { text: snippetSearchSql(q.perTerm.length, identifiers.length, tiersOf(retrieval), true) } : cachedSql(q.perTerm.length, identifiers.length, retrieval)),
    values: searchValues({
      all: q.all,
      relaxed: retrieval.relaxed,
      any: retrieval.any,
      terms: q.perTerm,
      titles: q.perTermTitle,
      phrase: q.phrase,
      identifiers,
      sourceIds: filters.sourceIds,
      language: filters.language,
      candidateCap: MAX_CANDIDATES,
      relaxBelow: Math.max(RELAX_BELOW, offset + limit),
      // The ranking is read deeper than the page asked for, from the top: diversify() reorders it.
      limit: offset + limit * DIVERSIFY_DEPTH,
      offset: 0,
      pageMatchCap: MAX_PAGE_MATCHES,
      contextPages: CONTEXT_PAGES,
      relaxedCandidateCap: MAX_RELAXED_CANDIDATES,
      snippetsPerContextPage: SNIPPETS_PER_CONTEXT_PAGE,
      anyTerm: q.any,
      find: retrieval.find,
      compound,
      codeTerms: q.perTermCode,
      relaxedCombos: retrieval.relaxedCombos,
      termWeights: retrieval.termWeights,
      pagesPerCombo: PAGES_PER_COMBO,
      codeness,
      anyTerms: retrieval.anyTerms,
      pairs: retrieval.pairs,
    }),
  };
}

/** A ranked unit as the ranking statement returns it: which row, shown from which page, how good. */
interface RankedRow {
  id: number;
  document_id: string;
  /** Its title, kind and (a snippet's) code: to find a page's variants of one example (foldVariants). */
  title: string;
  kind: SearchResult['kind'];
  code: string;
  /** The focused page's URL when the unit is shown from another page than its home (FOCUSED_PAGE). */
  page_url: string | null;
  score: number;
  total: number;
}

async function rankUnits(pool: Db, input: StatementInput, limit: number, offset: number): Promise<{ rows: RankedRow[]; total: number }> {
  const { rows } = await pool.query<RankedRow>(snippetStatement(input, limit, offset));
  return { rows: rows.map((r) => ({ ...r, id: Number(r.id), score: Number(r.score) })), total: rows[0]?.total ?? 0 };
}

/** The result rows of ranked units, in their order, each shown from its ranked page. */
async function loadResults(pool: Db, ranked: readonly RankedRow[]): Promise<Row[]> {
  return (await loadShown(pool, ranked, [])).rows;
}

/**
 * The result rows of the units shown and the names and links of those folded under them (foldedLinks), in one
 * round trip: as two statements, the second waited for its turn on a busy server as long as the first, for a
 * lookup of a few rows (the search bench's per-statement times).
 */
async function loadShown(pool: Db, shown: readonly RankedRow[], folded: readonly RankedRow[]): Promise<{ rows: Row[]; folded: Map<number, MoreFromPage> }> {
  if (shown.length === 0 && folded.length === 0) return { rows: [], folded: new Map() };
  const { rows } = await pool.query<Row & { shown: boolean }>({
    name: 'docdex-search-shown',
    text: `SELECT ${RESULT_COLUMNS}, true AS shown FROM snippets s JOIN sources src ON src.id = s.source_id WHERE s.id = ANY($1::bigint[])
     UNION ALL
     SELECT ${FOLDED_COLUMNS}, false FROM snippets s WHERE s.id = ANY($2::bigint[])`,
    values: [shown.map((r) => r.id), folded.map((r) => r.id)],
  });
  const byId = new Map(rows.filter((r) => r.shown).map(({ shown: _shown, ...r }) => [Number(r.id), r]));
  return {
    rows: shown.flatMap((r) => {
      const row = byId.get(r.id);
      return row ? [{ ...row, source_url: r.page_url ?? row.source_url, score: r.score, total: r.total }] : [];
    }),
    folded: foldedLinks(
      folded,
      rows.filter((r) => !r.shown),
    ),
  };
}

/**
 * The ranking reordered so that the first results come from distinct pages (diversify.ts), one page of it, and
 * for each result the units of its page that wait below. A unit waits unless it beats the next page's best by
 * one query term's share of the coverage: the coverage weight over the term count (term weights average 1).
 */
async function diversifiedPage(db: Db, ranked: readonly RankedRow[], termCount: number, limit: number, offset: number): Promise<SearchResult[]> {
  const { shown: order, variants } = foldVariants(
    diversify(
      ranked.map((r) => ({ ...r, page: r.document_id })),
      WEIGHTS.coverage / Math.max(termCount, 1),
    ),
  );
  const window = order.slice(offset, offset + limit);
  const inWindow = new Set(window.map((r) => r.id));
  // A page's variants of a shown example come first among what is folded under it, then its other units.
  const more = new Map<string, RankedRow[]>();
  for (const r of [...variants, ...order]) {
    if (inWindow.has(r.id)) continue;
    const list = more.get(r.document_id) ?? [];
    if (list.length < MORE_PER_PAGE) more.set(r.document_id, [...list, r]);
  }
  const firstOfPage = new Set<number>();
  const seenPages = new Set<string>();
  for (const r of window) {
    if (!seenPages.has(r.document_id)) firstOfPage.add(r.id);
    seenPages.add(r.document_id);
  }
  const folded = window.flatMap((r) => (firstOfPage.has(r.id) ? (more.get(r.document_id) ?? []) : []));
  const { rows, folded: foldedById } = await loadShown(db, window, folded);
  return rows.map((row, i) => {
    const r = window[i]!;
    const extra = firstOfPage.has(r.id) ? (more.get(r.document_id) ?? []).flatMap((m) => foldedById.get(m.id) ?? []) : [];
    const result = toResult(row, 'snippet');
    return extra.length === 0 ? result : { ...result, more: extra };
  });
}

// A line that only brings a module in or hands one out, in CommonJS or ESM: what two copies of one example differ by.
const MODULE_LINE = /^\s*(import\b.*|export\s*(\*|\{).*\bfrom\b.*|(const|let|var)\s+[^=]+=\s*require\(.*|require\(.*)$/;
const MODULE_PREFIX = /^\s*(export\s+default\s+|module\.exports\s*=\s*|exports\.\w+\s*=\s*|export\s+)/;

/** A snippet's code without its module lines, each line trimmed: equal for a CommonJS and an ESM copy. */
function exampleBody(code: string): string {
  return code
    .split('\n')
    .filter((line) => !MODULE_LINE.test(line))
    .map((line) => line.replace(MODULE_PREFIX, '').trim())
    .filter((line) => line !== '')
    .join('\n');
}

/**
 * Copies of one example on one page (a CommonJS and an ESM copy, issue #49): snippets of one page with one
 * title whose code is the same but for the lines that import or export modules. All but the best ranked are
 * taken out of the list and folded under the page's first result, with "more from this page": they took the
 * places of other pages' results. Different examples under one generic heading ("Examples") stay results, as
 * do the same title on two pages (two pages' answers) and sections.
 */
function foldVariants<T extends RankedRow>(order: readonly T[]): { shown: T[]; variants: T[] } {
  const seen = new Set<string>();
  const shown: T[] = [];
  const variants: T[] = [];
  for (const r of order) {
    const title = r.title.trim().toLowerCase();
    const body = r.kind === 'snippet' && title !== '' ? exampleBody(r.code) : '';
    const key = `${r.document_id}\u0000${title}\u0000${body}`;
    if (body !== '' && seen.has(key)) variants.push(r);
    else shown.push(r);
    seen.add(key);
  }
  return { shown, variants };
}

/** The folded units' names and links (not their text: a result names them, a later call fetches them). */
function foldedLinks(folded: readonly RankedRow[], rows: ReadonlyArray<Pick<MoreFromPage, 'id' | 'kind' | 'title' | 'source_url'>>): Map<number, MoreFromPage> {
  const ranked = new Map(folded.map((r) => [r.id, r]));
  return new Map(
    rows.map((row) => {
      const r = ranked.get(Number(row.id))!;
      return [r.id, { id: r.id, kind: row.kind, title: row.title, source_url: r.page_url ?? row.source_url, score: roundScore(r.score) }];
    }),
  );
}

/**
 * Snippets of the pages whose text matches best, for queries the snippets themselves do not answer. Pages are
 * found by the query's selective terms (`find`: a word on most pages would make every page a candidate and
 * each one's whole text vector would be read to rank it), a bounded number of them, and ranked by all terms.
 */
async function searchPages(pool: Db, q: TsQueries, find: string, filters: Filters, excludeIds: number[], take: number): Promise<Row[]> {
  const { rows } = await pool.query<Row>({
    name: 'docdex-search-pages',
    text: `WITH q AS MATERIALIZED (SELECT to_tsquery('english', $1) AS any),
     matches AS (
       SELECT d.id FROM documents d
        WHERE numnode(to_tsquery('english', $7)) > 0 AND d.search_vector @@ to_tsquery('english', $7)
          AND ($2::uuid[] IS NULL OR d.source_id = ANY($2))
        LIMIT $8
     ),
     pages AS (
       SELECT d.id, d.url, ts_rank(d.search_vector, q.any, 1) AS rank FROM matches m JOIN documents d ON d.id = m.id, q
        ORDER BY rank DESC, d.id LIMIT $5
     ),
     hits AS (
       SELECT DISTINCT ON (o.snippet_id) o.snippet_id, p.id AS document_id, p.url, p.rank, o.position
         FROM pages p JOIN snippet_occurrences o ON o.document_id = p.id
        ORDER BY o.snippet_id, p.rank DESC
     )
     SELECT ${RESULT_COLUMNS.replace('s.source_url', 'CASE WHEN s.document_id = h.document_id THEN s.source_url ELSE h.url END AS source_url')},
            h.rank AS score, count(*) OVER ()::int AS total
       FROM hits h JOIN snippets s ON s.id = h.snippet_id JOIN sources src ON src.id = s.source_id
      WHERE ($3::text IS NULL OR s.language = $3) AND s.id <> ALL($4::bigint[])
      ORDER BY h.rank DESC, h.position, s.id
      LIMIT $6`,
    values: [q.any, filters.sourceIds, filters.language, excludeIds, FALLBACK_PAGES, take, find, MAX_PAGE_MATCHES],
  });
  return rows;
}

function roundScore(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}

function toResult(row: Row, match: SearchResult['match']): SearchResult {
  const { total: _total, flags: _flags, flagged_passage: _passage, typed_by_user: typedByUser, ...rest } = row;
  const link = openableLink(row.source_url, { localFiles: typedByUser });
  return { ...rest, ...(link === undefined ? {} : { link }), score: roundScore(Number(row.score)), match, ...screeningFields(row) };
}

interface PreparedSearch {
  limit: number;
  offset: number;
  parsed: ParsedQuery;
  filters: Filters;
  q: TsQueries;
  retrieval: Retrieval;
  /** compoundPattern of the query: code naming two of its words as one identifier ranks up. */
  compound: string;
  /** termCodeness of the query: each term's weight in the coverage. */
  codeness: number[];
  corrected: Array<{ from: string; to: string }>;
}

/** `db` runs the search's statements; `pool` is the pool it came from (its word counts, a side lookup). */
async function prepareSearch(db: Db, options: SearchOptions, pool: pg.Pool): Promise<PreparedSearch | null> {
  const { limit, offset } = checkOptions(options);
  const parsed = parseQuery(options.query);
  if (parsed.terms.length === 0) {
    const hint =
      parsed.symbols.length > 0 ? `Operators such as ${parsed.symbols[0]} only rank results: add a word next to them (e.g. "echo $?").` : 'Search for a function, a concept or an error message.';
    throw new ValidationError('The search query has no words to search for.', { hint });
  }
  const words = parsed.terms.flatMap((t) => t.words);
  // On the search's own connection. A second connection from the pool, taken while this one is held, overlapped
  // the two round trips but deadlocked a full pool: every search held one connection and waited for another.
  const filters = await resolveFilters(db, options);
  const stats = await wordStats(db, words, { cacheOwner: pool });
  if (filters.sourceIds !== null && filters.sourceIds.length === 0) return null;
  const corrections = await correctWords(db, words, stats, pool);
  const q = buildTsQueries(parsed, corrections);
  const correctionStats = corrections.size > 0 ? await wordStats(db, [...corrections.values()].flat(), { cacheOwner: pool }) : null;
  const share = matchShare(parsed, stats, corrections, correctionStats);
  const planned = planRetrieval(q, termShares(parsed, stats, corrections, correctionStats), phraseIndexForms(parsed, stats, corrections, correctionStats), phrasePairs(parsed, stats, corrections));
  // A phrase's pairs find its matches directly: its words' shares say nothing about how many rows hold them side by side.
  const retrieval = { ...planned, scan: planned.pairs.length === 0 && scanAllTerms(share, filters) };
  const compound = compoundPattern(parsed, (w) => stats.words.get(w)?.stem !== null, corrections);
  const codeness = termCodeness(parsed, stats, corrections, correctionStats);
  return { limit, offset, parsed, filters, q, retrieval, compound, codeness, corrected: [...corrections].map(([from, to]) => ({ from, to: to[0]! })) };
}

/**
 * EXPLAIN ANALYZE of the main ranking statement searchSnippets runs for these options (after typo correction
 * and filter resolution): the bare database cost the benchmark compares the whole function against.
 */
export async function explainSearch(pool: pg.Pool, options: SearchOptions): Promise<{ executionMs: number; planningMs: number; plan: unknown }> {
  const prepared = await prepareSearch(pool, options, pool);
  if (prepared === null) return { executionMs: 0, planningMs: 0, plan: null };
  const statement = snippetStatement(prepared, prepared.limit, prepared.offset);
  const { rows } = await pool.query<{ 'QUERY PLAN': Array<{ 'Execution Time': number; 'Planning Time': number; Plan: unknown }> }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) ${statement.text}`,
    statement.values,
  );
  const out = rows[0]!['QUERY PLAN'][0]!;
  return { executionMs: out['Execution Time'], planningMs: out['Planning Time'], plan: out.Plan };
}

/** A ranked unit with the weighted signals its score adds up (ScorePart names), as explainScores reads them. */
export interface ScoredUnit {
  id: number;
  kind: SearchResult['kind'];
  title: string;
  source_url: string;
  score: number;
  parts: Partial<Record<ScorePart['name'], number>>;
}

/**
 * Why a search ranks what it ranks: the units searchSnippets ranks for these options, best first and before the
 * results are spread over pages (diversify.ts), each with every weighted signal of its score (rank.ts
 * scoreParts), which add up to it. For reading a ranking (`bench/why.ts`); it costs what a search costs.
 */
export async function explainScores(pool: pg.Pool, options: SearchOptions): Promise<ScoredUnit[]> {
  const prepared = await prepareSearch(pool, options, pool);
  if (prepared === null) return [];
  const { rows } = await pool.query<Record<string, unknown>>(snippetStatement(prepared, prepared.limit, prepared.offset, true));
  const urls = await pool.query<{ id: string; source_url: string }>('SELECT id, source_url FROM snippets WHERE id = ANY($1::bigint[])', [rows.map((r) => r.id)]);
  const urlOf = new Map(urls.rows.map((r) => [Number(r.id), r.source_url]));
  const names = scoreParts(prepared.q.perTerm.length, 0).map((p) => p.name);
  return rows.map((r) => ({
    id: Number(r.id),
    kind: r.kind as SearchResult['kind'],
    title: String(r.title),
    source_url: (r.page_url as string | null) ?? urlOf.get(Number(r.id)) ?? '',
    score: Number(r.score),
    parts: Object.fromEntries(names.map((n) => [n, Number(r[`part_${n}`])])),
  }));
}

export async function searchSnippets(pool: pg.Pool, options: SearchOptions): Promise<SearchResponse> {
  const { limit, offset } = checkOptions(options);
  // One connection for the whole search: taking one per statement sent each of a search's several statements
  // to the back of the pool's queue under load, so a search that needed three waited three times as long
  // (the daemon load bench's p99 against its p50).
  const client = await pool.connect();
  try {
    return await searchOn(client, pool, options, limit, offset);
  } finally {
    client.release();
  }
}

async function searchOn(db: pg.ClientBase, pool: pg.Pool, options: SearchOptions, limit: number, offset: number): Promise<SearchResponse> {
  const prepared = await prepareSearch(db, options, pool);
  if (prepared === null) return { items: [], total: 0, limit, offset, fallback: false };
  const { filters, q, corrected, retrieval } = prepared;

  const ranked = await rankUnits(db, prepared, limit, offset);
  let items = await diversifiedPage(db, ranked.rows, q.perTerm.length, limit, offset);
  let total = ranked.total;
  let fallback = false;
  if (ranked.total < FALLBACK_BELOW) {
    // The few snippet matches come first; page matches fill the list after them.
    const head = (await loadResults(db, ranked.rows)).map((r) => toResult(r, 'snippet'));
    const pageRows = await searchPages(
      db,
      q,
      retrieval.any || q.any,
      filters,
      head.map((r) => r.id),
      offset + limit,
    );
    if (pageRows.length > 0) {
      fallback = true;
      items = [...head, ...pageRows.map((r) => toResult(r, 'page'))].slice(offset, offset + limit);
      total = ranked.total + (pageRows[0]?.total ?? 0);
    }
  }
  const screened = applyScreening(items, options.screening);
  return {
    items: screened.items,
    total,
    limit,
    offset,
    ...(corrected.length > 0 ? { corrected } : {}),
    fallback,
    ...(screened.withheld > 0 ? { withheld: screened.withheld } : {}),
    ...(filters.library === null ? {} : { library: filters.library }),
  };
}
