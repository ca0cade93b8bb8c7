import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { openDatabase } from '../core/db/connect.js';
import { pruneProject } from '../core/project/sync.js';

export default class Prune extends BaseCommand<typeof Prune> {
  static override summary = 'Forget the library versions a synced project no longer uses.';
  static override description =
    '`docdex sync` keeps the versions a lockfile stopped naming (marked unused) so an older checkout still finds its docs. Prune drops them from the project; the indexed sources stay (delete those with `docdex sources delete`).';
  static override examples = ['<%= config.bin %> prune', '<%= config.bin %> prune ../shop', '<%= config.bin %> prune --project shop'];
  static override args = { dir: Args.string({ description: 'The project directory.', default: '.' }) };
  static override flags = {
    project: Flags.string({ description: 'The recorded project by name or id, instead of a directory.' }),
  };

  async run(): Promise<{ project: string; pruned: number }> {
    const db = await openDatabase(this.settings, { max: 2, applicationName: 'docdex-prune' });
    try {
      const { project, pruned } = await pruneProject(db, this.flags.project === undefined ? { dir: this.args.dir } : { name: this.flags.project });
      this.log(`${project.name}: ${pruned} unused ${pruned === 1 ? 'library version' : 'library versions'} forgotten.`);
      return { project: project.name, pruned };
    } finally {
      await db.close();
    }
  }
}
