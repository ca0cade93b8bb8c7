/**
 * The snippet score, as one SQL expression over a candidate row `s` and the query row `q` (see search.ts).
 * Every signal is normalised to about 0..1 so the weights read as their relative importance:
 *
 * - coverage: share of the query's terms the snippet matches anywhere, each term weighted by how much its words
 *   name code (codeness.ts: "finally" and "listen" above "handle" and "values"). Dominant, so a snippet matching
 *   every term beats one matching fewer whatever its other merits (relaxed searches mix both).
 * - title coverage: share of the terms found in the title (weight A). The title names what the snippet is
 *   about (page heading and section); code that merely mentions a word ranks below it.
 * - page title coverage: share of the terms in the title of the snippet's page: the whole page is about them
 *   (`json — JSON encoder and decoder`), which a section heading alone does not say.
 * - proximity: the terms appear in query order next to each other (stop words keep their distance).
 * - exact identifier: an identifier typed in full (`json.dumps`, `readFileSync`) occurs verbatim in the code.
 * - compound identifier: the code names an identifier made of two of the query's words (`json.load` for "load
 *   json", `copytree` for "copy a directory tree", `urlopen` for "open a url"): among the snippets of one page,
 *   which share their title and prose, the one that calls the API the words describe.
 * - text rank: ts_rank with title A > description B > code C, length-normalised (a long block mentioning a
 *   word many times is not more relevant than a short example of it). Breaks ties between equal coverages.
 * - page context: when the snippets alone do not match every term, pages whose text does (or, when few do, all
 *   terms but one) are searched too; their snippets get part credit for the terms only the page has, plus the
 *   page's relevance (ts_rank normalised by length, so a focused page beats a long one that mentions
 *   everything once, times the rarity of the terms the page has, relative to the best page).
 * - code coverage: share of the terms found in the code itself (weight C), a word also by the cut code names it
 *   by (`date_trunc` for "truncate", query.ts abbreviationsOf). Snippets of one section share their
 *   title and prose, so among them the one whose code does what was asked ("try … except … finally" for a
 *   question naming `finally`) is the one that carries the asked-for words in its code.
 * - page count: code shown on many pages of a site is a canonical example; logarithmic and small, it only
 *   orders otherwise equal snippets.
 */
export const WEIGHTS = {
  coverage: 4,
  titleCoverage: 1.5,
  pageTitleCoverage: 1.5,
  proximity: 0.6,
  exactIdentifier: 0.8,
  compoundIdentifier: 0.8,
  textRank: 1,
  pageRelevance: 1,
  pageCount: 0.05,
  codeCoverage: 1.5,
} as const;

// A term missing from the snippet but present on its page (one of the pages lending their snippets) counts two
// thirds: the page's prose explains the code ("Recursively copy an entire directory tree" above `copytree`), but
// a term in the snippet itself is closer evidence. At a half, the answer on a page with every word ranked below
// snippets elsewhere with all words but one of their own; at a whole, a page's other snippets drew level with
// its answer (`npm run eval`, the CHANGELOG).
const PAGE_CONTEXT_CREDIT = 2 / 3;

// ts_rank weights in {D, C, B, A} order: code C, description B, title A.
const RANK_WEIGHTS = '{0.05, 0.2, 0.5, 1.0}';
// Normalisation 1: divide by 1 + log(length), so long blocks do not win on repetition alone.
const RANK_NORMALISATION = 1;

function sum(parts: string[]): string {
  return parts.length === 0 ? '0' : `(${parts.join(' + ')})`;
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * Whether the code of unit `s` names the query's compound: a snippet's code, or the code blocks of a section
 * (migration 038's section_code), whose `code` column holds its markdown. The compound signal is evidence that
 * code calls what the query's words name together; read over a section's prose it fired on any mention
 * (`role_table_grants` in a reference table's text for "grant select on a table to a role"), and the section
 * outranked the snippet that runs the command. The exact-identifier signal still reads the whole markdown: an
 * identifier typed in full and named in a section's prose is what the section is about (read over code blocks
 * too, the peer benchmark ranked lower; figures in the CHANGELOG).
 * A section's markdown is matched first, and its code blocks cut out only when it matches: the pattern
 * (compoundPattern) cannot match across a line break, so every match in the blocks is one in the markdown too,
 * and cutting the blocks out of every section candidate was the costliest part of scoring one (a regular
 * expression over the whole markdown, for every query of two words or more).
 * Inline in the signal, so it is only computed for a query that has a compound.
 */
const UNIT_CODE_NAMES_COMPOUND = `(CASE WHEN s.code !~* q.compound THEN false WHEN s.kind = 'section' THEN section_code(s.code) ~* q.compound ELSE true END)`;

/**
 * The score expression over snippet `s` (search_vector, code, page_count), its page `d` (title_vector), `h.hits` (terms the snippet matches, see termHitsSql),
 * `h.code_vector` the snippet's code lexemes (CODE_VECTOR_SQL), `o.own_title` its title lexemes (OWN_VECTOR_SQL)
 * and `tp`, the page's row among the best pages matching every term (NULL when it is not one; `relevance` 0..1
 * relative to the best). Needs `q` with: terms tsquery[], titles tsquery[], n int, phrase tsquery, any tsquery,
 * identifiers text[]. The per-term checks are unrolled for the query's term count: a subquery per row costs
 * more than all the checks together.
 */
export function scoreSql(termCount: number, identifierCount: number): string {
  return `(
  ${scoreParts(termCount, identifierCount)
    .map((p) => p.sql)
    .join('\n  + ')}
)`;
}

/** One weighted signal of the score: its name (a WEIGHTS key) and its SQL expression. */
export interface ScorePart {
  name: keyof typeof WEIGHTS;
  sql: string;
}

/**
 * The score's weighted signals, in the order scoreSql adds them: the score is their sum. Named so that a
 * ranking can be read signal by signal (explainScores in search.ts, `bench/why.ts`).
 */
export function scoreParts(termCount: number, identifierCount: number): ScorePart[] {
  const terms = range(termCount);
  const titleHits = sum(terms.map((i) => `(o.own_title @@ q.titles[${i}])::int`));
  const pageTitleHits = sum(terms.map((i) => `(d.title_vector @@ q.terms[${i}])::int`));
  const codeHits = sum(terms.map((i) => `(h.code_vector @@ q.code_terms[${i}])::int`));
  const exact =
    identifierCount === 0
      ? '0'
      : `(CASE WHEN ${range(identifierCount)
          .map((i) => `strpos(s.code, q.identifiers[${i}]) > 0`)
          .join(' OR ')} THEN 1 ELSE 0 END)`;
  return [
    { name: 'coverage', sql: `${WEIGHTS.coverage} * (h.hits + ${PAGE_CONTEXT_CREDIT} * greatest(COALESCE(tp.hits, 0) - h.hits, 0)) / greatest(q.n, 1)` },
    { name: 'pageRelevance', sql: `${WEIGHTS.pageRelevance} * COALESCE(tp.relevance, 0)` },
    { name: 'titleCoverage', sql: `${WEIGHTS.titleCoverage} * ${titleHits}::float8 / greatest(q.n, 1)` },
    { name: 'pageTitleCoverage', sql: `${WEIGHTS.pageTitleCoverage} * ${pageTitleHits}::float8 / greatest(q.n, 1)` },
    { name: 'proximity', sql: `${WEIGHTS.proximity} * (CASE WHEN q.n > 1 AND numnode(q.phrase) > 0 AND s.search_vector @@ q.phrase THEN 1 ELSE 0 END)` },
    { name: 'exactIdentifier', sql: `${WEIGHTS.exactIdentifier} * ${exact}` },
    { name: 'compoundIdentifier', sql: `${WEIGHTS.compoundIdentifier} * (CASE WHEN q.compound <> '' AND ${UNIT_CODE_NAMES_COMPOUND} THEN 1 ELSE 0 END)` },
    { name: 'textRank', sql: `${WEIGHTS.textRank} * ts_rank('${RANK_WEIGHTS}', s.search_vector, q.any, ${RANK_NORMALISATION})` },
    { name: 'pageCount', sql: `${WEIGHTS.pageCount} * ln(s.page_count)` },
    { name: 'codeCoverage', sql: `${WEIGHTS.codeCoverage} * ${codeHits}::float8 / greatest(q.n, 1)` },
  ];
}

/**
 * The code lexemes (weight C) of snippet `s`, once per row: filtered again for each term, the vector was rebuilt
 * as many times as the query has terms, for every candidate.
 */
export const CODE_VECTOR_SQL = `ts_filter(s.search_vector, '{c}') AS code_vector`;

/**
 * A section's title as a snippet's reads (its own heading and the page title, weight A): its breadcrumb also
 * names the headings above it, which a snippet's title does not, so a section won the title coverage over the
 * snippets of its own heading for words of a parent heading ("Reading and Writing Files" above "Saving
 * structured data with json"). Those words are context, like the prose around the section's code. Only a
 * breadcrumb of three or more parts has parent headings; the others' title lexemes are read from the stored
 * vector, so most candidates cost no parsing.
 */
const PARENT_HEADINGS = `strpos(substr(s.title, strpos(s.title, ' › ') + 3), ' › ') > 0 AND strpos(s.title, ' › ') > 0`;
const SECTION_OWN_TITLE = `setweight(to_tsvector('english', snippet_title_words(split_part(s.title, ' › ', 1) || ' | ' || regexp_replace(s.title, '^.* › ', ''))), 'A')`;

/**
 * The lexemes of unit `s` that are its own evidence, once per row: a snippet's whole vector (title, the prose
 * just above its code, its code); a section's own title (SECTION_OWN_TITLE) and the code of its blocks (weight
 * C), not its prose or parent headings. A section holds its page's prose around the code it shows, the text a
 * snippet gets part credit for as page context; counted in full, every term a section's prose mentions weighed
 * as if its code did it, and a section outranked the snippet of its own page and, across pages, the snippet
 * that answers (a reference table's section naming "grant", "select", "table" and "role" above the GRANT
 * synopsis). `own_title` is what the title coverage reads (its checks ask for weight A).
 */
export const OWN_VECTOR_SQL = `SELECT t.own_title, CASE WHEN s.kind <> 'section' THEN s.search_vector WHEN t.parsed THEN t.own_title || ts_filter(s.search_vector, '{c}') ELSE ts_filter(s.search_vector, '{a,c}') END AS own_vector
    FROM (SELECT p.parsed, CASE WHEN p.parsed THEN ${SECTION_OWN_TITLE} ELSE s.search_vector END AS own_title
            FROM (SELECT s.kind = 'section' AND ${PARENT_HEADINGS} AS parsed) AS p) AS t`;

/**
 * How many of the query's terms unit `s` matches, each weighted by its codeness (float8): in its own lexemes
 * (`o.own_vector`, OWN_VECTOR_SQL) in full, in a section's prose at the page context's part credit.
 */
export function termHitsSql(termCount: number): string {
  return `${sum(
    range(termCount).map((i) => `q.codeness[${i}] * (CASE WHEN o.own_vector @@ q.terms[${i}] THEN 1 WHEN s.search_vector @@ q.terms[${i}] THEN ${PAGE_CONTEXT_CREDIT} ELSE 0 END)`),
  )}::float8`;
}
