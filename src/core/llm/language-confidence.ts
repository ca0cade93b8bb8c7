import type pg from 'pg';
import type { PageWrite } from '../store/pages.js';

/**
 * Records which new snippets had an unsure language ('detected' by the content rules, or 'unknown'), so the
 * enhancer asks the model about those and trusts declared languages. Runs inside the page's transaction as the
 * llm-enhancement stage's step (core/pipeline/llm-enhancement.ts); only unsure rows are touched, so a page
 * whose blocks all declare their language costs no extra statement.
 */
export async function recordLanguageConfidence(client: pg.ClientBase, write: PageWrite, newSnippetIds: number[]): Promise<void> {
  if (newSnippetIds.length === 0) return;
  const unsure = write.snippets.filter((s) => s.languageConfidence === 'detected' || s.languageConfidence === 'unknown');
  if (unsure.length === 0) return;
  await client.query(
    `UPDATE snippets s SET language_confidence = t.confidence
       FROM unnest($2::text[], $3::text[]) AS t(code_hash, confidence)
      WHERE s.id = ANY($1::bigint[]) AND s.code_hash = t.code_hash`,
    [newSnippetIds, unsure.map((s) => s.codeHash), unsure.map((s) => s.languageConfidence)],
  );
}
