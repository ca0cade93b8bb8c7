import { BaseCommand } from '../../cli/base-command.js';
import { repoFlag, skillScopeFlag } from '../../cli/flags.js';
import { listSkillFiles } from '../../core/agent/manage.js';
import type { Skill, SkillScope } from '../../core/agent/skills.js';

export default class SkillsList extends BaseCommand<typeof SkillsList> {
  static override summary = 'List skills: global ones and the project skills of every repo (or of --repo).';
  static override examples = ['<%= config.bin %> skills list', '<%= config.bin %> skills list --scope project --repo api --json'];
  static override flags = { scope: skillScopeFlag, repo: repoFlag };

  async run(): Promise<{ skills: Skill[] }> {
    const skills = await listSkillFiles(this.settings, {
      ...(this.flags.scope === undefined ? {} : { scope: this.flags.scope as SkillScope }),
      ...(this.flags.repo === undefined ? {} : { repo: this.flags.repo }),
    });
    if (skills.length === 0) this.log('No skills. Create one with `docdex skills create <name> --description ... --body-file ...`.');
    for (const skill of skills) {
      const where = skill.scope === 'global' ? 'global' : `project ${skill.repoName}`;
      this.log(`${skill.name.padEnd(32)} ${where.padEnd(24)} ${skill.description.split('\n')[0]!.slice(0, 80)}`);
    }
    return { skills };
  }
}
