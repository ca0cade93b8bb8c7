import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { openDatabase } from '../core/db/connect.js';
import type { JobEvent } from '../core/events/notify.js';
import { createUploadFromPaths } from '../core/upload/jobs.js';
import { waitForUpload } from '../core/upload/job-rows.js';
import { startUploadWorkers } from '../core/upload/worker.js';
import { llmProgressText } from '../core/llm/progress-text.js';
import type { UploadJob } from '../core/upload/job-rows.js';
import { plural } from '../cli/plural.js';
import { unresolvedIncludeLines, uploadSummaryLine } from '../cli/upload-summary.js';
import { documentStages } from '../core/pipeline/stages.js';

export default class Upload extends BaseCommand<typeof Upload> {
  static override summary = 'Index local documentation files: .md .markdown .mdx .txt .rst .adoc, or directories of them.';
  static override description =
    'Directories are scanned recursively (node_modules, .git and hidden folders are skipped; other formats are listed as skipped). Files over 10 MB, binary or not UTF-8 are reported one by one and the rest is indexed. Without --wait the job is queued for `docdex serve` or `docdex worker`.';
  static override examples = ['<%= config.bin %> upload ./docs --name mylib --version 2.0 --wait', '<%= config.bin %> upload README.md --source-url https://github.com/me/mylib#readme'];
  static override strict = false;
  static override args = { path: Args.string({ description: 'File or directory (several may be given).', required: true }) };
  static override flags = {
    name: Flags.string({ description: 'Source name (default: the file or directory name).' }),
    'source-url': Flags.string({ description: 'Where these files are published; result links are built under it.' }),
    version: Flags.string({ description: 'Library version.' }),
    wait: Flags.boolean({ description: 'Process the upload now and wait until it is done.', default: false }),
  };

  async run(): Promise<UploadJob> {
    const { argv } = await this.parse(Upload);
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-upload' });
    try {
      const job = await createUploadFromPaths(db, this.settings, {
        paths: argv.map(String),
        ...(this.flags.name === undefined ? {} : { name: this.flags.name }),
        ...(this.flags['source-url'] === undefined ? {} : { sourceUrl: this.flags['source-url'] }),
        ...(this.flags.version === undefined ? {} : { version: this.flags.version }),
      });
      for (const s of job.skipped_files.slice(0, 20)) this.log(`skipped ${s.path}: ${s.reason}`);
      if (job.skipped_files.length > 20) this.log(`skipped ${job.skipped_files.length - 20} more files`);
      for (const line of unresolvedIncludeLines(job)) this.logToStderr(`warning ${line}`);
      if (!this.flags.wait) {
        this.log(`Upload job ${job.id} queued: ${plural(job.file_count, 'file')} into ${job.source_name}. \`docdex serve\` or \`docdex worker\` processes it; or re-run with --wait.`);
        this.reportErrors(job);
        return job;
      }
      // Processed here, so --wait works without a daemon; a running daemon's workers share the files.
      const workers = await startUploadWorkers(db, this.settings, { pollingIntervalSeconds: 0.5, stages: documentStages(this.settings), llmStage: true });
      try {
        const done = await waitForUpload(db, job.id, (e) => this.progress(e));
        if (this.isTty) process.stdout.write('\r\u001b[K');
        this.log(uploadSummaryLine(done));
        this.reportErrors(done);
        return done;
      } finally {
        await workers.stop();
      }
    } finally {
      await db.close();
    }
  }

  private progress(e: JobEvent): void {
    if (!this.isTty || e.event !== 'upload_progress') return;
    const c = e.counters;
    if (e.state === 'enhancing') {
      process.stdout.write(`\r\u001b[Kenhancing: ${llmProgressText(c)}`.slice(0, (process.stdout.columns || 100) - 1));
      return;
    }
    process.stdout.write(
      `\r\u001b[K${c.processed_files ?? 0}/${plural(c.file_count ?? 0, 'file')}, ${plural(c.snippets_extracted ?? 0, 'snippet')}  ${e.currentUrl ?? ''}`.slice(0, (process.stdout.columns || 100) - 1),
    );
  }

  /** Names every file that failed; any failed file makes the exit status 1, so scripts notice. */
  private reportErrors(job: UploadJob): void {
    for (const e of job.file_errors) this.logToStderr(`error ${e.path}: ${e.error}`);
    if (job.file_errors.length === 0 && job.status !== 'failed') return;
    process.exitCode = 1;
    if (this.jsonEnabled()) return;
    const names = job.file_errors.map((e) => e.path);
    const shown = names.slice(0, 10).join(', ') + (names.length > 10 ? `, and ${names.length - 10} more` : '');
    this.logToStderr(`Error: ${names.length} of ${plural(job.file_count, 'file')} failed${shown ? `: ${shown}` : ''}.`);
    this.logToStderr('Hint: Fix or remove them and upload again; the other files are indexed.');
  }
}
