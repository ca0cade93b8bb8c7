import { Flags } from '@oclif/core';

/** Flags shared by several commands, each validated where it is parsed. */
export const forceFlag = Flags.boolean({ description: 'Do not ask for confirmation.', default: false });

/** Skills: where a skill lives. */
export const skillScopeFlag = Flags.string({ description: 'global (the workspace) or project (a repo; needs --repo).', options: ['global', 'project'] });
/** The same, defaulting to global, for commands that name one existing skill. */
export const skillScopeDefaultGlobalFlag = Flags.string({
  description: 'global (the workspace) or project (a repo; needs --repo).',
  options: ['global', 'project'],
  default: 'global',
});
/** A repo by id or by its name under repos/. */
export const repoFlag = Flags.string({ description: 'Repo id or name (see `docdex repos list`).' });
