import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { editInEditor, readBodyFile } from '../../cli/editor.js';
import { repoFlag, skillScopeDefaultGlobalFlag } from '../../cli/flags.js';
import { createSkillFile } from '../../core/agent/manage.js';
import { parseSkillFile, renderSkillFile } from '../../core/agent/skills.js';
import type { Skill, SkillScope } from '../../core/agent/skills.js';
import { ValidationError } from '../../core/errors.js';

export default class SkillsCreate extends BaseCommand<typeof SkillsCreate> {
  static override summary = 'Create a skill. The body comes from --body-file (or - for stdin), or from $EDITOR on a terminal.';
  static override examples = [
    '<%= config.bin %> skills create code-review --description "How we review code" --body-file review.md',
    '<%= config.bin %> skills create release --scope project --repo api --description "Release steps" --body-file -',
    '<%= config.bin %> skills create code-review',
  ];
  static override args = { name: Args.string({ required: true, description: 'Lowercase words joined by single hyphens, at most 64 characters.' }) };
  static override flags = {
    description: Flags.string({ char: 'd', description: 'What the skill is for (1-1024 characters).' }),
    'body-file': Flags.string({ description: 'Markdown file with the body, or - for stdin.' }),
    scope: skillScopeDefaultGlobalFlag,
    repo: repoFlag,
  };

  async run(): Promise<Skill> {
    let description = this.flags.description;
    let body: string;
    if (this.flags['body-file'] !== undefined) {
      body = await readBodyFile(this.flags['body-file']);
    } else {
      const template = renderSkillFile({ name: this.args.name, description: description ?? 'Describe when an agent should use this skill.', body: `# ${this.args.name}\n\n` });
      const edited = parseSkillFile(await editInEditor(template, { fileName: 'SKILL.md' }));
      description = edited.description;
      body = edited.body;
    }
    if (description === undefined) throw new ValidationError('A skill needs a description.', { hint: 'Pass --description.' });
    const skill = await createSkillFile(
      this.settings,
      { name: this.args.name, description, body },
      { scope: this.flags.scope as SkillScope, ...(this.flags.repo === undefined ? {} : { repo: this.flags.repo }) },
    );
    this.log(`Created ${skill.scope} skill ${skill.name} at ${skill.location}.`);
    return skill;
  }
}
