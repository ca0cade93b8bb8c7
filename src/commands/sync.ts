import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { resultLine, warningLines } from '../cli/add-render.js';
import { hintLines, notIndexed, notIndexedNames, planLines } from '../cli/sync-render.js';
import type { JobWarning, LibraryResult } from '../core/library/results.js';
import { openDatabase } from '../core/db/connect.js';
import { syncProjectDirectory } from '../core/project/sync.js';
import type { SyncResult } from '../core/project/sync.js';

export interface SyncCommandResult extends SyncResult {
  /** After waiting: the libraries that are still not indexed (the exit code is 1 when any are). */
  not_indexed?: string[];
  /** After waiting: what each queued library holds now (indexed, nothing_to_search, not_indexed). */
  results?: LibraryResult[];
  /** After waiting: each job that did not complete, with its library and reason (the library may still be indexed from another origin). */
  warnings?: Array<JobWarning & { library: string }>;
}

export default class Sync extends BaseCommand<typeof Sync> {
  static override summary = "Index the docs of a project's dependencies at the exact versions its lockfiles pin.";
  static override description =
    'Reads package.json with package-lock.json, pnpm-lock.yaml, yarn.lock or bun.lock (and the other ecosystems docdex reads), and .docdex.yml when present. Shows each dependency with its indexed state, then queues `docdex add` jobs for the missing ones and waits for them (--no-wait only queues). Already-indexed versions are never fetched again. The project is remembered: ask by project with search --project, get_project_libraries and search_project. Versions the lockfile no longer names are kept until `docdex prune`. Exit code 0 when every library holds docs (a docs host that failed is a warning with its reason), 1 when a library is left without docs, 2 for bad input.';
  static override examples = ['<%= config.bin %> sync', '<%= config.bin %> sync ../shop --all --exclude "@types/*"', '<%= config.bin %> sync --dry-run --json'];
  static override args = { dir: Args.string({ description: 'The project directory.', default: '.' }) };
  static override flags = {
    all: Flags.boolean({ description: 'Transitive dependencies too (default: only those the manifests name).', default: false }),
    include: Flags.string({ description: 'Only dependencies whose names match this glob (repeatable).', multiple: true }),
    exclude: Flags.string({ description: 'Leave out dependencies whose names match this glob (repeatable).', multiple: true }),
    'dry-run': Flags.boolean({ description: 'Show the plan; queue and record nothing.', default: false }),
    wait: Flags.boolean({ description: 'Run the jobs here and wait until they are done (--no-wait: only queue them).', default: true, allowNo: true }),
  };

  async run(): Promise<SyncCommandResult> {
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-sync' });
    try {
      const result = await syncProjectDirectory(db, this.settings, {
        dir: this.args.dir,
        options: { all: this.flags.all, include: this.flags.include ?? [], exclude: this.flags.exclude ?? [] },
        dryRun: this.flags['dry-run'],
      });
      if (!this.jsonEnabled()) for (const line of planLines(result)) this.log(line);
      if (result.dry_run || !this.flags.wait) {
        if (!this.jsonEnabled()) for (const line of hintLines(result)) this.logToStderr(line);
        return result;
      }
      const { followSync } = await import('../cli/sync-follow.js');
      const { rows, results } = await followSync(db, this.settings, result, { tty: this.isTty, json: this.jsonEnabled(), log: (line) => this.log(line), warn: (line) => this.logToStderr(line) });
      const warnings = results.flatMap((r) => r.warnings.map((w) => ({ library: r.library, ...w })));
      const missing = notIndexed(rows);
      if (!this.jsonEnabled()) {
        for (const r of results) {
          this.log(resultLine(r));
          for (const line of warningLines(r)) this.logToStderr(line);
        }
        if (missing.length > 0) this.logToStderr(`Not indexed: ${notIndexedNames(rows).join(', ')}.`);
        for (const line of hintLines(result)) this.logToStderr(line);
      }
      // Exit 0 when every library holds docs, warnings or not; 1 when one is left without (130 after Ctrl-C stays).
      if (missing.length > 0 && process.exitCode !== 130) process.exitCode = 1;
      return { ...result, not_indexed: missing, results, warnings };
    } finally {
      await db.close();
    }
  }
}
