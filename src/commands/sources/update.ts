import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { versionFlag } from '../../cli/index-flags.js';
import { crawlRequestFlags, requestFromFlags } from '../../cli/request-flags.js';
import { openDatabase } from '../../core/db/connect.js';
import { ValidationError } from '../../core/errors.js';
import { updateSource } from '../../core/sources/manage.js';
import type { SourceDetails, SourceUpdate } from '../../core/sources/manage.js';

export default class SourcesUpdate extends BaseCommand<typeof SourcesUpdate> {
  static override summary = 'Edit a source: name, version, base URL, URL patterns, depth and concurrency.';
  static override description = 'Crawl settings apply from the next `docdex sources recrawl`. URL patterns are globs and are added to the existing lists.';
  static override examples = [
    '<%= config.bin %> sources update python --set-version 3.13',
    '<%= config.bin %> sources update fastapi --include "https://fastapi.tiangolo.com/tutorial/**" --exclude "**/release-notes/**" --depth 2',
  ];
  static override args = { source: Args.string({ description: 'Source name (fuzzy) or id.', required: true }) };
  static override flags = {
    version: versionFlag,
    name: Flags.string({ description: 'New name.' }),
    'set-version': Flags.string({ description: 'New version ("" for unversioned).' }),
    description: Flags.string({ description: 'New description.' }),
    'base-url': Flags.string({ description: 'New base URL (the recrawl start page when no start URLs are stored).' }),
    include: Flags.string({ description: 'Add an include URL pattern (repeatable).', multiple: true }),
    exclude: Flags.string({ description: 'Add an exclude URL pattern (repeatable).', multiple: true }),
    // --depth and --concurrency: the crawl request's own fields, bounds enforced here as before.
    ...crawlRequestFlags(['max_depth', 'max_concurrent_crawls'], { enforceBounds: true }),
  };

  async run(): Promise<SourceDetails> {
    const f = this.flags;
    const crawl = requestFromFlags(f);
    const update: SourceUpdate = {
      ...(f.name === undefined ? {} : { name: f.name }),
      ...(f['set-version'] === undefined ? {} : { version: f['set-version'] }),
      ...(f.description === undefined ? {} : { description: f.description }),
      ...(f['base-url'] === undefined ? {} : { baseUrl: f['base-url'] }),
      ...(f.include === undefined ? {} : { addIncludePatterns: f.include }),
      ...(f.exclude === undefined ? {} : { addExcludePatterns: f.exclude }),
      ...(crawl.max_depth === undefined ? {} : { maxDepth: crawl.max_depth }),
      ...(crawl.max_concurrent_crawls === undefined ? {} : { maxConcurrent: crawl.max_concurrent_crawls }),
    };
    if (Object.keys(update).length === 0) {
      throw new ValidationError('Nothing to update.', { hint: 'Pass --name, --set-version, --base-url, --include, --exclude, --depth or --concurrency.' });
    }
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-sources' });
    try {
      const s = await updateSource(db.pool, this.args.source, update, f.version === undefined ? {} : { version: f.version });
      this.log(`Updated ${s.name}${s.version ? ` ${s.version}` : ''} (${s.id}).`);
      return s;
    } finally {
      await db.close();
    }
  }
}
