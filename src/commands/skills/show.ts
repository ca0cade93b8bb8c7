import { Args } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { repoFlag, skillScopeDefaultGlobalFlag } from '../../cli/flags.js';
import { showSkill } from '../../core/agent/manage.js';
import { renderSkillFile } from '../../core/agent/skills.js';
import type { Skill, SkillScope } from '../../core/agent/skills.js';

export default class SkillsShow extends BaseCommand<typeof SkillsShow> {
  static override summary = 'Print a skill file (frontmatter and body).';
  static override examples = ['<%= config.bin %> skills show code-review', '<%= config.bin %> skills show release --scope project --repo api --json'];
  static override args = { name: Args.string({ required: true, description: 'Skill name.' }) };
  static override flags = { scope: skillScopeDefaultGlobalFlag, repo: repoFlag };

  async run(): Promise<Skill> {
    const skill = await showSkill(this.settings, this.args.name, {
      scope: this.flags.scope as SkillScope,
      ...(this.flags.repo === undefined ? {} : { repo: this.flags.repo }),
    });
    this.log(`# ${skill.location}`);
    this.log(renderSkillFile(skill));
    return skill;
  }
}
