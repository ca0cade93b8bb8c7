import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { editInEditor, readBodyFile } from '../../cli/editor.js';
import { repoFlag, skillScopeDefaultGlobalFlag } from '../../cli/flags.js';
import { editSkillFile, showSkill } from '../../core/agent/manage.js';
import { parseSkillFile, renderSkillFile } from '../../core/agent/skills.js';
import type { Skill, SkillScope, SkillUpdate } from '../../core/agent/skills.js';

export default class SkillsEdit extends BaseCommand<typeof SkillsEdit> {
  static override summary = 'Change a skill: --description and/or --body-file, or edit the whole file in $EDITOR on a terminal.';
  static override examples = [
    '<%= config.bin %> skills edit code-review --body-file review.md',
    '<%= config.bin %> skills edit code-review --description "How we review Go code"',
    '<%= config.bin %> skills edit code-review',
  ];
  static override args = { name: Args.string({ required: true, description: 'Skill name.' }) };
  static override flags = {
    description: Flags.string({ char: 'd', description: 'New description (1-1024 characters).' }),
    'body-file': Flags.string({ description: 'Markdown file with the new body, or - for stdin.' }),
    scope: skillScopeDefaultGlobalFlag,
    repo: repoFlag,
  };

  async run(): Promise<Skill> {
    const target = { scope: this.flags.scope as SkillScope, ...(this.flags.repo === undefined ? {} : { repo: this.flags.repo }) };
    const patch: SkillUpdate = {};
    if (this.flags.description !== undefined) patch.description = this.flags.description;
    if (this.flags['body-file'] !== undefined) patch.body = await readBodyFile(this.flags['body-file']);
    if (patch.description === undefined && patch.body === undefined) {
      const current = await showSkill(this.settings, this.args.name, target);
      const edited = parseSkillFile(await editInEditor(renderSkillFile(current), { fileName: 'SKILL.md', alternative: '--description or --body-file' }));
      patch.description = edited.description;
      patch.body = edited.body;
    }
    const skill = await editSkillFile(this.settings, this.args.name, patch, target);
    this.log(`Updated ${skill.scope} skill ${skill.name}.`);
    return skill;
  }
}
