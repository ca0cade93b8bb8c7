/**
 * Results that cover more than one page (issue 50). Ranked by score alone, the ten results of a query came from
 * a median of three pages: a page with many matching blocks filled the list, and the other relevant pages sat
 * below it. Here each page's best unit comes first, in score order, and a page's further units wait ("more from
 * this page") unless they are clearly better than the best unit of every page not yet shown: by at least one
 * query term's share of the coverage (rank.ts), the dominant part of the score. So when one page is clearly the
 * answer (its units match a term the other pages lack), its units still lead; when pages are close, the list
 * spans them.
 */

export interface RankedUnit {
  id: number;
  /** The page the unit is shown from. */
  page: string;
  score: number;
}

/**
 * The units reordered as above. `margin` is how much better a unit of a page already shown must score than the
 * best unit of the next page to stay ahead of it. Every unit is kept: the ones that wait come after, in score
 * order, once no page is left unshown or they are clearly better.
 */
export function diversify<T extends RankedUnit>(units: readonly T[], margin: number): T[] {
  const sorted = [...units].sort((a, b) => b.score - a.score || a.id - b.id);
  const shown = new Set<string>();
  const out: T[] = [];
  // Two queues, both in score order: each page's first unit, and the units of pages already shown.
  const firsts: T[] = [];
  const later: T[] = [];
  const seen = new Set<string>();
  for (const u of sorted) {
    if (seen.has(u.page)) later.push(u);
    else {
      seen.add(u.page);
      firsts.push(u);
    }
  }
  let f = 0;
  for (;;) {
    // The best waiting unit whose page has been shown, against the best unit of the next page.
    const li = nextShown(later, shown);
    const next = later[li];
    const first = firsts[f];
    if (next !== undefined && (first === undefined || next.score >= first.score + margin)) {
      out.push(next);
      later.splice(li, 1);
      continue;
    }
    if (first === undefined) break;
    out.push(first);
    shown.add(first.page);
    f++;
  }
  return out;
}

/** The index of the first unit whose page is shown, or the list's length. */
function nextShown<T extends RankedUnit>(list: readonly T[], shown: ReadonlySet<string>): number {
  for (let i = 0; i < list.length; i++) if (shown.has(list[i]!.page)) return i;
  return list.length;
}
