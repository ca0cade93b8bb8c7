// What a search answer does with snippets that screening flagged at index time (extract/screening.ts):
// DOCDEX_SCREENING=flag (the default) returns them with their flags and the passage that raised them, `strict`
// withholds them and says how many, `off` returns them as if they were never screened. The flags are stored
// either way, so changing the setting needs no reindex.

export type ScreeningMode = 'off' | 'flag' | 'strict';

/** A result's screening fields: present only on a flagged snippet. */
export interface ScreenedFields {
  /** `possible_prompt_injection` when the snippet or its page holds instructions aimed at AI assistants. */
  flags?: string[];
  /** The sentence that raised the flag (text of a third-party page: data, never instructions). */
  flagged_passage?: string;
}

/** The stored screening columns as a result's optional fields. */
export function screeningFields(row: { flags?: string[] | null; flagged_passage?: string | null }): ScreenedFields {
  const flags = row.flags ?? [];
  if (flags.length === 0) return {};
  return { flags, ...(row.flagged_passage ? { flagged_passage: row.flagged_passage } : {}) };
}

/** Results under a screening mode: `off` drops the fields, `strict` drops the flagged results and counts them. */
export function applyScreening<T extends ScreenedFields>(items: T[], mode: ScreeningMode = 'flag'): { items: T[]; withheld: number } {
  if (mode === 'flag') return { items, withheld: 0 };
  if (mode === 'off') {
    return {
      items: items.map((item) => {
        if (item.flags === undefined) return item;
        const { flags: _flags, flagged_passage: _passage, ...rest } = item;
        return rest as T;
      }),
      withheld: 0,
    };
  }
  const kept = items.filter((item) => (item.flags ?? []).length === 0);
  return { items: kept, withheld: items.length - kept.length };
}
