import type pg from 'pg';
import { editDistance } from '../edit-distance.js';
import { ValidationError } from '../errors.js';
import { CANONICAL_LANGUAGES, isKnownLanguage, normalizeLanguage } from '../extract/language-names.js';

/**
 * The language a search is filtered by, canonical (`py` is python). A name that is neither a language docdex
 * knows nor one any stored snippet has can match nothing: that is a typo (`pyhton`), said as an error naming the
 * closest language, not a silent "No snippets found".
 */
export async function languageFilter(pool: pg.Pool | pg.ClientBase, typed: string | undefined): Promise<string | null> {
  if (!typed?.trim()) return null;
  const language = normalizeLanguage(typed);
  if (isKnownLanguage(language) || (await languageIsStored(pool, language))) return language;
  const close = [...CANONICAL_LANGUAGES]
    .map((name) => ({ name, distance: editDistance(language, name, 2) }))
    .filter((c) => c.distance <= 2)
    .sort((a, b) => a.distance - b.distance || a.name.localeCompare(b.name))
    .map((c) => c.name);
  const hint = close.length > 0 ? `Did you mean ${close.slice(0, 3).join(' or ')}?` : `Languages docdex knows include ${[...CANONICAL_LANGUAGES].slice(0, 12).join(', ')}.`;
  throw new ValidationError(`Unknown language ${JSON.stringify(typed.trim())}: no indexed snippet has it.`, { hint });
}

/** Whether any snippet is stored with this language (the search index's leading column answers it). */
async function languageIsStored(pool: pg.Pool | pg.ClientBase, language: string): Promise<boolean> {
  const { rows } = await pool.query<{ found: boolean }>({
    name: 'docdex-search-language-is-stored',
    text: 'SELECT EXISTS (SELECT 1 FROM snippets WHERE language = $1) AS found',
    values: [language],
  });
  return rows[0]?.found ?? false;
}
