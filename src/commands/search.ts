import path from 'node:path';
import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { languageFlag, limitFlag, offsetFlag, sourceFlag, versionFlag } from '../cli/index-flags.js';
import { renderProjectSearch } from '../cli/render-project-search.js';
import { renderSearch } from '../cli/render-search.js';
import { openDatabase } from '../core/db/connect.js';
import type { Database } from '../core/db/connect.js';
import { searchProject } from '../core/project/search.js';
import type { ProjectSearchResponse } from '../core/project/search.js';
import { searchSnippets } from '../core/search/search.js';
import type { SearchResponse } from '../core/search/search.js';

export default class Search extends BaseCommand<typeof Search> {
  static override summary = 'Search indexed code snippets.';
  static override description = 'Full-text search over snippet titles, descriptions and code, tolerant of typos; identifiers match whole or in parts (json.dumps, readFileSync, "read file sync").';
  static override examples = [
    '<%= config.bin %> search "asyncio gather"',
    '<%= config.bin %> search readFileSync --source node --limit 5',
    '<%= config.bin %> search "create index" --language sql --json',
    '<%= config.bin %> search --project . "parse a range"',
  ];
  static override strict = false;
  static override args = { query: Args.string({ description: 'What to search for (several words need no quotes).', required: true }) };
  static override flags = {
    source: sourceFlag,
    version: versionFlag,
    project: Flags.string({
      char: 'p',
      description: 'Search a synced project\'s libraries at exactly the versions it uses: a directory (".", "./app", an absolute path; a folder inside a project finds it) or a project name or id.',
      exclusive: ['source', 'version'],
    }),
    language: languageFlag,
    limit: limitFlag(10),
    offset: offsetFlag,
  };

  async run(): Promise<SearchResponse | ProjectSearchResponse> {
    // Not strict: `docdex search asyncio gather` searches both words without quotes.
    const { argv } = await this.parse(Search);
    const query = argv.map(String).join(' ');
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-search' });
    try {
      if (this.flags.project !== undefined) return await this.searchProject(db, query, this.flags.project);
      const result = await searchSnippets(db.pool, {
        query,
        limit: this.flags.limit,
        offset: this.flags.offset,
        screening: this.settings.screening,
        ...(this.flags.source === undefined ? {} : { source: this.flags.source }),
        ...(this.flags.version === undefined ? {} : { version: this.flags.version }),
        ...(this.flags.language === undefined ? {} : { language: this.flags.language }),
      });
      if (!this.jsonEnabled()) this.log(renderSearch(result, { colour: this.isTty && !process.env.NO_COLOR }));
      return result;
    } finally {
      await db.close();
    }
  }

  private async searchProject(db: Database, query: string, project: string): Promise<ProjectSearchResponse> {
    const result = await searchProject(db.pool, {
      project: projectRef(project),
      query,
      limit: this.flags.limit,
      offset: this.flags.offset,
      screening: this.settings.screening,
      ...(this.flags.language === undefined ? {} : { language: this.flags.language }),
    });
    if (!this.jsonEnabled()) this.log(renderProjectSearch(result, { colour: this.isTty && !process.env.NO_COLOR }));
    return result;
  }
}

/**
 * A `--project` value as the project store knows it: a path (".", "..", anything with a slash) as an absolute
 * directory, a bare word as a project name or id. oclif has no flag with an optional value, and the query
 * takes every word, so the current directory is spelled ".".
 */
function projectRef(value: string): string {
  const looksLikePath = value === '.' || value === '..' || value.includes('/') || value.includes(path.sep);
  return looksLikePath ? path.resolve(value) : value;
}
