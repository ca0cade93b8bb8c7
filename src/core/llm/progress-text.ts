/** The LLM stage's progress in words, as `crawl status`, `crawl list`, `--wait` and the MCP tools show it. */

export interface LlmProgressFields {
  llm_pages_total?: number;
  llm_pages_done?: number;
  llm_pages_failed?: number;
  llm_snippets_enhanced?: number;
}

export function llmProgressText(job: LlmProgressFields): string {
  const failed = job.llm_pages_failed ?? 0;
  const errors = failed > 0 ? `, ${failed} with enhancement errors (kept their extracted titles and descriptions)` : '';
  return `${job.llm_pages_done ?? 0}/${job.llm_pages_total ?? 0} pages through the LLM, ${job.llm_snippets_enhanced ?? 0} snippets enhanced${errors}`;
}
