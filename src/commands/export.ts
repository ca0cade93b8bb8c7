import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { openDatabase } from '../core/db/connect.js';
import { UserError } from '../core/errors.js';
import { parseLibraryRef } from '../core/library-ref.js';
import { exportPackToFile } from '../core/pack/location.js';
import type { ExportSummary } from '../core/pack/export.js';
import path from 'node:path';
import { plural } from '../cli/plural.js';

export default class Export extends BaseCommand<typeof Export> {
  static override summary = 'Write indexed libraries to one portable index pack (.docdex) that `docdex import` installs anywhere.';
  static override description =
    'The pack holds each library version as indexed: its origin, crawl settings, pages and snippets (model-written descriptions and relationships included), with a SHA-256 of every part. Format: docs/pack-format.md.';
  static override examples = ['<%= config.bin %> export react@18.3.1 -o react.docdex', '<%= config.bin %> export acme-docs -o docs.docdex --json', '<%= config.bin %> export --all -o backup.docdex'];
  static override strict = false;
  static override args = { library: Args.string({ description: 'Library to export, as name, name@version or id (several may be given).', required: false }) };
  static override flags = {
    output: Flags.string({ char: 'o', description: 'The pack file to write.', required: true }),
    all: Flags.boolean({ description: 'Export every indexed library version.', default: false }),
  };

  async run(): Promise<ExportSummary & { file: string }> {
    const { argv } = await this.parse(Export);
    const refs = argv.map((a) => parseLibraryRef(String(a)));
    if (refs.length === 0 && !this.flags.all) throw new UserError('Name the libraries to export, or pass --all.', { code: 'usage_error', hint: 'docdex export react@18.3.1 -o react.docdex' });
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-export' });
    try {
      const summary = await exportPackToFile(db.pool, { libraries: this.flags.all ? 'all' : refs, tmpDir: this.settings.home }, this.flags.output);
      for (const l of summary.libraries) this.log(`Exported ${l.name}${l.version ? `@${l.version}` : ''}: ${plural(l.documents, 'page')}, ${plural(l.snippets, 'snippet')}.`);
      this.log(`Wrote ${this.flags.output}.`);
      return { ...summary, file: path.resolve(this.flags.output) };
    } finally {
      await db.close();
    }
  }
}
