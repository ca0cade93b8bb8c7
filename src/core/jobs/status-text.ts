/**
 * How a job's status reads in text (the CLI's job lines and tables, the dashboard's Jobs screen): a job that
 * completed with failed pages or files is `partial` (issue #49: an upload whose files failed showed
 * `completed`). `--json` and the REST API keep the stored status, with the failed count beside it.
 */
export function jobStatusText(status: string, failed: number): string {
  return status === 'completed' && failed > 0 ? 'partial' : status;
}
