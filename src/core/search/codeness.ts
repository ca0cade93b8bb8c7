import type { Corrections, ParsedQuery } from './query.js';
import type { WordStats } from './typo.js';

/**
 * How much each query term names code, as a weight on the term's share of the coverage (rank.ts).
 *
 * A question mixes words that name code ("finally", "listen", "json", "deepcopy") with words the docs' prose
 * uses around it ("handle", "keep", "values", "difference"). Counted alike, a snippet titled "Handling
 * Exceptions" that lacks `finally` covered "handle exceptions with try except finally" as well as the example
 * of `finally`, and the prose word decided. The lexicon counts for each word the snippets holding it and those
 * holding it in their code (migrations/030); the share in code tells the two kinds apart across the whole
 * index, whatever the library.
 *
 * Each word's share is smoothed ((code + 1) / (count + 1)) and a term's is the geometric mean of its words'.
 * Weights are the square root of the share (at the share itself, a word in prose only counted for almost
 * nothing and questions in plain words lost their pages: `npm run eval`), scaled so that the terms with a weight
 * average 1: a query's full coverage stays its term count. A term whose words the lexicon does not know (a
 * typo left uncorrected, a dotted identifier) or that has no words to match (a stop word) weighs 1.
 */
export function termCodeness(parsed: ParsedQuery, stats: WordStats, corrected: Corrections, correctionStats: WordStats | null): number[] {
  const shares = parsed.terms.map((t) => {
    // Stop words inside a phrase match anything.
    const perWord = t.words.filter((w) => stats.words.get(w)?.stem !== null).map((w) => wordCodeShare(w, stats, corrected, correctionStats));
    if (perWord.some((s) => s === null)) return null;
    const known = perWord as number[];
    return known.length === 0 ? null : Math.exp(known.reduce((sum, s) => sum + Math.log(s), 0) / known.length);
  });
  const weights = shares.map((s) => (s === null ? null : Math.sqrt(s)));
  const known = weights.filter((w): w is number => w !== null);
  const mean = known.reduce((a, b) => a + b, 0) / Math.max(known.length, 1);
  return weights.map((w) => (w === null || mean === 0 ? 1 : w / mean));
}

/**
 * A word's smoothed share of its snippets that hold it in code; a corrected word counts with its corrections'
 * counts (the typed spelling is in no snippet). Null when there is nothing to count: a word neither the lexicon
 * nor a correction knows.
 */
function wordCodeShare(word: string, stats: WordStats, corrected: Corrections, correctionStats: WordStats | null): number | null {
  const own = stats.words.get(word);
  if (!own) return null;
  let count = own.count;
  let code = own.code;
  for (const c of corrected.get(word) ?? []) {
    const s = correctionStats?.words.get(c);
    count += s?.count ?? 0;
    code += s?.code ?? 0;
  }
  if (count <= 0) return null;
  // Counts folded in by separate refreshes could disagree for a moment; a share stays within 0..1 whatever they say.
  return (Math.min(Math.max(code, 0), count) + 1) / (count + 1);
}
