import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { forceFlag, repoFlag, skillScopeDefaultGlobalFlag } from '../../cli/flags.js';
import { confirm } from '../../cli/prompt.js';
import { deleteSkillFile } from '../../core/agent/manage.js';
import type { Skill, SkillScope } from '../../core/agent/skills.js';
import { UserError } from '../../core/errors.js';

export default class SkillsDelete extends BaseCommand<typeof SkillsDelete> {
  static override summary = 'Delete a skill (its whole folder).';
  static override examples = ['<%= config.bin %> skills delete code-review --force', '<%= config.bin %> skills delete release --scope project --repo api'];
  static override args = { name: Args.string({ required: true, description: 'Skill name.' }) };
  static override flags = { scope: skillScopeDefaultGlobalFlag, repo: repoFlag, force: forceFlag };

  async run(): Promise<Skill> {
    if (!this.flags.force && !(await confirm(`Delete the ${this.flags.scope} skill ${this.args.name}?`))) {
      throw new UserError('Aborted: nothing was deleted.', { code: 'aborted' });
    }
    const skill = await deleteSkillFile(this.settings, this.args.name, {
      scope: this.flags.scope as SkillScope,
      ...(this.flags.repo === undefined ? {} : { repo: this.flags.repo }),
    });
    this.log(`Deleted ${skill.scope} skill ${skill.name} (${skill.location}).`);
    return skill;
  }
}
