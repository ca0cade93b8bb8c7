import { Args } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { languageFlag, limitFlag, offsetFlag, sourceFlag, versionFlag } from '../cli/index-flags.js';
import { renderSearch } from '../cli/render-search.js';
import { openDatabase } from '../core/db/connect.js';
import { searchSnippets } from '../core/search/search.js';
import type { SearchResponse } from '../core/search/search.js';

export default class Search extends BaseCommand<typeof Search> {
  static override summary = 'Search indexed code snippets.';
  static override description = 'Full-text search over snippet titles, descriptions and code, tolerant of typos; identifiers match whole or in parts (json.dumps, readFileSync, "read file sync").';
  static override examples = [
    '<%= config.bin %> search "asyncio gather"',
    '<%= config.bin %> search readFileSync --source node --limit 5',
    '<%= config.bin %> search "create index" --language sql --json',
  ];
  static override strict = false;
  static override args = { query: Args.string({ description: 'What to search for (several words need no quotes).', required: true }) };
  static override flags = {
    source: sourceFlag,
    version: versionFlag,
    language: languageFlag,
    limit: limitFlag(10),
    offset: offsetFlag,
  };

  async run(): Promise<SearchResponse> {
    // Not strict: `docdex search asyncio gather` searches both words without quotes.
    const { argv } = await this.parse(Search);
    const query = argv.map(String).join(' ');
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-search' });
    try {
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
}
