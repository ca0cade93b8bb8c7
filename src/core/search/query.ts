import { ValidationError } from '../errors.js';
/**
 * Query text to tsquery text. Every token becomes one term; a term matches when any of its alternatives does.
 * Identifiers mirror `code_search_text` (migrations/001): `json.dumps`, `readFileSync` and `tokio::spawn` are
 * indexed whole AND split into parts, so a term for them is `whole | part & part`, which matches the
 * identifier itself, the identifier inside a longer one (`fs.readFileSync`), and `json dumps` written out.
 * Quoted text is one phrase term.
 *
 * The output is tsquery source for `to_tsquery('english', ...)`: the database applies the same stemming and
 * stop words to the query as to the documents, and drops stop-word operands by itself.
 *
 * A token with no letters or digits (`_`, `$`, `=>`, `::`, `$?`) has nothing the full-text index holds, so it
 * is never a term (an empty operand made the tsquery a syntax error). Operators of two or more characters
 * (`=>`, `::`, `$?`, `&&`) are code, though: they are kept as symbols, which rank a snippet up when its code
 * holds them verbatim (like an identifier typed in full) but never select or exclude one.
 */

export interface QueryTerm {
  /** The token as typed (an identifier, a word, or a quoted phrase). */
  text: string;
  /** Lower-cased words the token consists of: what typo correction checks against the lexicon. */
  words: string[];
  /** True for `json.dumps`, `read_file`, `readFileSync`, `tokio::spawn`: kept whole and split. */
  identifier: boolean;
  /** True for a "quoted phrase". */
  phrase: boolean;
}

export interface ParsedQuery {
  raw: string;
  terms: QueryTerm[];
  /** Operators typed as their own tokens (`=>`, `::`, `$?`): matched verbatim in code, for ranking only. */
  symbols: string[];
}

/** Word corrections: lower-cased query word → close lexicon words that are matched as well. */
export type Corrections = ReadonlyMap<string, readonly string[]>;

// A token is a run of letters, digits, `_` and `$`, joined by the separators identifiers use.
const TOKEN = /[\p{L}\p{N}_$]+(?:(?:\.|::|->|\/|-|#)[\p{L}\p{N}_$]+)*/gu;
const PHRASE = /"([^"]*)"/g;
/**
 * The one limit on search text, for the CLI, REST, MCP and the TUI: anything longer is not a search, and would
 * only make huge tsqueries. Longer text is refused (checkQueryLength), never cut.
 */
export const MAX_QUERY_CHARS = 1000;
const MAX_TERMS = 16;
// A whitespace-separated chunk with no letter or digit: an operator when it is short, noise when it is long.
const SYMBOL = /^[^\p{L}\p{N}\p{C}\s]{2,8}$/u;
const MAX_SYMBOLS = 4;

/** The parts code_search_text splits an identifier into, lower-cased (camelCase, `.`, `_`, `::`, `-`, `/`). */
export function identifierParts(token: string): string[] {
  return token
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((p) => p.length > 0)
    .map((p) => p.toLowerCase());
}

function tokenTerm(token: string): QueryTerm {
  const words = identifierParts(token);
  return { text: token, words, identifier: words.length > 1, phrase: false };
}

/** The tokens of `text` that hold a letter or digit (`_` and `$` alone hold none). */
function wordTokens(text: string): string[] {
  return (text.match(TOKEN) ?? []).filter((t) => identifierParts(t).length > 0);
}

function phraseTerm(inner: string): QueryTerm | null {
  const tokens = wordTokens(inner);
  const words = tokens.flatMap((t) => identifierParts(t));
  if (words.length > 1) return { text: inner.trim(), words, identifier: false, phrase: true };
  return tokens.length === 1 ? tokenTerm(tokens[0]!) : null;
}

function symbolsOf(text: string): string[] {
  return [...new Set(text.split(/\s+/).filter((chunk) => SYMBOL.test(chunk)))].slice(0, MAX_SYMBOLS);
}

/** Refuses search text over MAX_QUERY_CHARS: CLI exit 2, HTTP 422 (ValidationError). */
export function checkQueryLength(text: string): void {
  if (text.length <= MAX_QUERY_CHARS) return;
  throw new ValidationError(`The query is ${text.length.toLocaleString('en-US')} characters long; the limit is ${MAX_QUERY_CHARS.toLocaleString('en-US')}.`, {
    hint: 'Search for the key words or identifiers rather than a whole passage.',
  });
}

export function parseQuery(text: string): ParsedQuery {
  checkQueryLength(text);
  const raw = text;
  const terms: QueryTerm[] = [];
  const rest = raw.replace(PHRASE, (_m, inner: string) => {
    const term = phraseTerm(inner);
    if (term) terms.push(term);
    return ' ';
  });
  for (const token of wordTokens(rest)) terms.push(tokenTerm(token));
  // The same term twice adds nothing but weight the user did not ask for.
  const seen = new Set<string>();
  const unique = terms.filter((t) => {
    const key = `${t.phrase ? '"' : ''}${t.words.join(' ')}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return { raw, terms: unique.slice(0, MAX_TERMS), symbols: symbolsOf(rest) };
}

/** A tsquery operand: quoted, so the database's parser and dictionary see exactly this text. */
function operand(text: string, weight: string): string {
  return `'${text.replace(/['\\]/g, '')}'${weight}`;
}

function wordOrCorrections(word: string, corrections: Corrections | undefined, weight: string): string {
  const alternatives = [word, ...(corrections?.get(word) ?? [])];
  const ops = alternatives.map((w) => operand(w, weight));
  return ops.length === 1 ? ops[0]! : `(${ops.join(' | ')})`;
}

/**
 * tsquery source for one term. `weight` restricts every operand to a label ('A' = title). A misspelt word
 * inside an identifier is corrected in its parts (the whole identifier cannot be).
 *
 * An identifier's parts are ANDed, not required adjacent: a phrase operator makes the index recheck every row
 * holding all the parts, which for common parts (`read.process`) is most of the table. Adjacency still counts
 * in the ranking (exact identifier and proximity); only a quoted phrase is required to be one.
 */
export function termQuery(term: QueryTerm, corrections?: Corrections, weight = ''): string {
  const w = weight ? `:${weight}` : '';
  const parts = term.words.map((word) => wordOrCorrections(word, corrections, w));
  if (term.phrase) return `(${parts.join(' <-> ')})`;
  if (!term.identifier) return parts[0]!;
  return `(${operand(term.text, w)} | ${parts.join(' & ')})`;
}

/**
 * tsquery source for the words of a phrase term that `keep` accepts, ANDed: every row the phrase matches has all
 * its words, so this matches at least those rows (the search reads the index for it and checks the phrase on
 * the rows it finds). '' when no word is kept.
 */
export function phraseWordsQuery(term: QueryTerm, keep: (word: string) => boolean, corrections?: Corrections): string {
  const parts = term.words.filter(keep).map((word) => wordOrCorrections(word, corrections, ''));
  return parts.length === 0 ? '' : `(${parts.join(' & ')})`;
}

export interface TsQueries {
  /** Every term must match. */
  all: string;
  /** Any term may match. */
  any: string;
  /** One tsquery per term, for coverage counting. */
  perTerm: string[];
  /** The same, restricted to titles (weight A). */
  perTermTitle: string[];
  /** The terms in order as one phrase (stop words in between keep their distance): proximity bonus. */
  phrase: string;
  /** One tsquery per term for matching code, where a word also matches its abbreviations (abbreviationsOf). */
  perTermCode: string[];
}

// Code shortens words by cutting them (`date_trunc`, `param`, `config`, `concat`, `repo`); a cut shorter than
// this, or than half the word, names too many other things (`dir`, `str`).
const MIN_ABBREVIATION = 4;

/** The cuts of a plain word that code may name it by: `trunc`, `trunca`, … for "truncate". */
export function abbreviationsOf(word: string): string[] {
  if (!/^[a-z]+$/.test(word)) return [];
  const from = Math.max(MIN_ABBREVIATION, Math.ceil(word.length / 2));
  return Array.from({ length: Math.max(0, word.length - from) }, (_, i) => word.slice(0, from + i));
}

function codeTermQuery(term: QueryTerm, corrections: Corrections | undefined): string {
  const base = termQuery(term, corrections);
  if (term.phrase || term.identifier || term.words.length !== 1) return base;
  const word = corrections?.get(term.words[0]!)?.[0] ?? term.words[0]!;
  const cuts = abbreviationsOf(word);
  return cuts.length === 0 ? base : `(${[base, ...cuts.map((c) => operand(c, ''))].join(' | ')})`;
}

export function buildTsQueries(parsed: ParsedQuery, corrections?: Corrections): TsQueries {
  const perTerm = parsed.terms.map((t) => termQuery(t, corrections));
  const perTermTitle = parsed.terms.map((t) => termQuery(t, corrections, 'A'));
  return {
    all: perTerm.join(' & '),
    any: perTerm.join(' | '),
    perTerm,
    perTermTitle,
    phrase: perTerm.length > 1 ? perTerm.join(' <-> ') : '',
    perTermCode: parsed.terms.map((t) => codeTermQuery(t, corrections)),
  };
}

/**
 * Identifiers as typed (`json.dumps`, `readFileSync`) and operators (`=>`, `$?`): an exact occurrence in the
 * code is a strong signal.
 */
export function exactIdentifiers(parsed: ParsedQuery): string[] {
  return [...parsed.terms.filter((t) => t.identifier && t.text.length >= 4).map((t) => t.text), ...parsed.symbols];
}

/**
 * A case-insensitive pattern for code that names an identifier made of two of the query's words, in either
 * order, joined as code joins them (`json.load`, `copytree`, `urlopen`, `searchParams`, `path.join`,
 * `date_trunc`): people describe an API with the words its name is made of. `keep` drops words that cannot
 * be part of a name (stop words). '' when fewer than two words are left.
 */
export function compoundPattern(parsed: ParsedQuery, keep: (word: string) => boolean, corrections?: Corrections): string {
  const words = [
    ...new Set(
      parsed.terms
        .filter((t) => !t.phrase && !t.identifier)
        .flatMap((t) => t.words)
        .map((w) => corrections?.get(w)?.[0] ?? w)
        .filter((w) => /^[a-z][a-z0-9]{2,31}$/.test(w) && keep(w)),
    ),
  ].slice(0, 8);
  const pairs = words.flatMap((a) => words.filter((b) => b !== a).map((b) => `${a}[._]?${b}`));
  // The name ends where the pair ends: `json.load` is not `json.loads`, `urlopen` not `FancyURLopener`.
  return pairs.length === 0 ? '' : `(${pairs.join('|')})(?![a-z0-9])`;
}
