import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { sandboxSwitchJson, sandboxSwitchLines } from '../../cli/sandbox-switch.js';
import type { SandboxSwitchJson } from '../../cli/sandbox-switch.js';
import { switchSandbox } from '../../core/sandbox/manage.js';

export default class SandboxDisable extends BaseCommand<typeof SandboxDisable> {
  static override summary = 'Turn sandbox enforcement off: agent bash commands run on the host again.';
  static override description = 'Takes effect at the next agent server start or restart (`docdex agent restart`), which also stops the microVM; until then the running server keeps enforcing.';
  static override examples = ['<%= config.bin %> sandbox disable && <%= config.bin %> agent restart'];
  static override flags = {
    'git-credentials': Flags.boolean({ description: 'Also change git credential forwarding (kept for the next enable); unchanged when not given.', allowNo: true }),
  };

  async run(): Promise<SandboxSwitchJson> {
    const { state } = await switchSandbox(this.settings, {
      enabled: false,
      ...(this.flags['git-credentials'] === undefined ? {} : { gitCredentials: this.flags['git-credentials'] }),
    });
    for (const line of sandboxSwitchLines(state)) this.log(line);
    return sandboxSwitchJson(state);
  }
}
