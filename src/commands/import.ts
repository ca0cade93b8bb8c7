import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { openDatabase } from '../core/db/connect.js';
import { importPacksFrom } from '../core/pack/location.js';
import type { ImportSummary } from '../core/pack/import.js';
import { plural } from '../cli/plural.js';

const VERB = { installed: 'Installed', replaced: 'Replaced', unchanged: 'Already installed' } as const;

export default class Import extends BaseCommand<typeof Import> {
  static override summary = 'Install index packs written by `docdex export`, from files or http(s) URLs, without crawling.';
  static override description =
    "Every part is checked against the manifest before anything is written; each library version is then installed in one transaction. An identical installed version is left as it is; a different one needs --replace. A URL is downloaded under the crawler's outbound rules, with DOCDEX_PACK_MAX_MB as the cap.";
  static override examples = [
    '<%= config.bin %> import docs.docdex',
    '<%= config.bin %> import https://example.com/releases/docs.docdex --json',
    '<%= config.bin %> import react.docdex --as react@18 --replace',
  ];
  static override strict = false;
  static override args = { pack: Args.string({ description: 'A pack file or an http(s) URL (several may be given).', required: true }) };
  static override flags = {
    replace: Flags.boolean({ description: 'Replace an installed version of the same name@version whose content differs.', default: false }),
    as: Flags.string({ description: "Install the pack's one library as name@version." }),
  };

  async run(): Promise<{ packs: Array<ImportSummary & { location: string }> }> {
    const { argv } = await this.parse(Import);
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-import' });
    try {
      const packs = await importPacksFrom(db.pool, argv.map(String), {
        home: this.settings.home,
        maxBytes: this.settings.packs.maxBytes,
        replace: this.flags.replace,
        ...(this.flags.as === undefined ? {} : { as: this.flags.as }),
        outbound: { allow: this.settings.outbound.allowHosts, allowLoopback: true },
      });
      for (const l of packs.flatMap((p) => p.libraries)) this.log(`${VERB[l.status]} ${l.name}${l.version ? `@${l.version}` : ''}: ${plural(l.documents, 'page')}, ${plural(l.snippets, 'snippet')}.`);
      return { packs };
    } finally {
      await db.close();
    }
  }
}
