import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { addRequestFlags, addRequestFromFlags } from '../cli/add-flags.js';
import { openDatabase } from '../core/db/connect.js';
import { addLibraries } from '../core/library/add.js';
import type { AddOutcome } from '../core/library/outcome.js';
import { libraryResults } from '../core/library/results.js';
import type { FinishedJob, LibraryResult } from '../core/library/results.js';
import { outcomeLines, resultLine, warningLines } from '../cli/add-render.js';
import { parseAddRequest } from '../core/library-spec.js';

export interface AddResult {
  libraries: AddOutcome[];
  /** With --wait: how each job ended, with the reason of those that did not complete. */
  finished?: FinishedJob[];
  /** With --wait: what each library holds now (indexed, nothing_to_search, not_indexed) and its warnings. */
  results?: LibraryResult[];
}

export default class Add extends BaseCommand<typeof Add> {
  static override summary = 'Index a library: a docs site, a git repository at a ref, or a package at the version your project uses.';
  static override description =
    'Each spec becomes its own jobs. A docs URL is crawled (as `crawl start`). A git repository (https://host/org/repo.git, git@host:org/repo.git, file:///path or ./path, with @tag, @branch or @commit) is checked out shallowly and its docs folders, README and examples are indexed, each linked to the file at that commit. A package (npm:, pypi:, crates:, go:, with a version or range; the latest release without one) is resolved through its registry: its repository at the release tag, its docs site one link deep, or its published README. Versions sit side by side: search with --source name@version or a range. Without --wait the jobs are queued for `docdex serve` or `docdex worker`. A version already indexed (the same package version, docs URL or repository ref) is left as it is and nothing is fetched; --refresh fetches it again.';
  static override examples = [
    '<%= config.bin %> add npm:semver@7.6.3 --wait',
    '<%= config.bin %> add https://github.com/acme/widgets@v2.1.0 --path docs',
    '<%= config.bin %> add ./my-lib@main --name my-lib --wait',
    '<%= config.bin %> add pypi:requests@2.32.3 crates:serde@1',
  ];
  static override strict = false;
  static override args = { spec: Args.string({ description: 'What to index (several may be given): a docs URL, a git repository[@ref], or npm:|pypi:|crates:|go:name[@version].', required: true }) };
  static override flags = {
    ...addRequestFlags(),
    wait: Flags.boolean({
      description:
        'Run the jobs here (sharing them with any running worker) and wait until they are done. Exit 0 when every library holds docs (a failed origin is a warning), 1 when one is left without.',
      default: false,
    }),
  };

  async run(): Promise<AddResult> {
    const { argv } = await this.parse(Add);
    const request = addRequestFromFlags(argv.map(String), this.flags);
    // Validated before the database is opened: a bad spec exits 2 and creates nothing.
    parseAddRequest(request);
    const db = await openDatabase(this.settings, { max: 8, applicationName: 'docdex-add' });
    try {
      const libraries = await addLibraries(db, this.settings, request, 'user');
      for (const outcome of libraries) this.report(outcome);
      if (libraries.some((o) => o.status === 'failed')) process.exitCode = 1;
      if (!this.flags.wait) return { libraries };
      const { followAddedJobs } = await import('../cli/add-follow.js');
      const finished = await followAddedJobs(db, this.settings, libraries, {
        tty: this.isTty,
        json: this.jsonEnabled(),
        log: (line) => this.log(line),
        warn: (line) => this.logToStderr(line),
      });
      const results = await libraryResults(db.pool, libraries, finished);
      if (!this.jsonEnabled()) {
        for (const result of results) {
          this.log(resultLine(result));
          for (const line of warningLines(result)) this.logToStderr(line);
        }
      }
      // A library counts as indexed when any of its origins stored documents; 1 only when one is left without.
      if (results.some((r) => r.state === 'not_indexed') && process.exitCode !== 130) process.exitCode = 1;
      return { libraries, finished, results };
    } finally {
      await db.close();
    }
  }

  private report(outcome: AddOutcome): void {
    if (outcome.status === 'failed') {
      this.logToStderr(`Error: ${outcome.error.message}`);
      if (outcome.error.hint) this.logToStderr(`Hint: ${outcome.error.hint}`);
      return;
    }
    for (const line of outcomeLines(outcome)) this.log(line);
  }
}
