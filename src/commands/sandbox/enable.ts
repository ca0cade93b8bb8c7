import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { sandboxSwitchJson, sandboxSwitchLines } from '../../cli/sandbox-switch.js';
import type { SandboxSwitchJson } from '../../cli/sandbox-switch.js';
import { switchSandbox } from '../../core/sandbox/manage.js';

export default class SandboxEnable extends BaseCommand<typeof SandboxEnable> {
  static override summary = 'Turn sandbox enforcement on: every agent bash command runs in the microVM.';
  static override description =
    'Checks first that this host can run the microVM (QEMU, bubblewrap, the kernel and a built docdex) and changes nothing when it cannot. ' +
    'Enforcement starts with the next agent server start or restart (`docdex agent restart`); a running server keeps what it was started with. ' +
    '--git-credentials also forwards the stored git credentials and the git identity into the microVM, from the next command on.';
  static override examples = ['<%= config.bin %> sandbox enable', '<%= config.bin %> sandbox enable --git-credentials && <%= config.bin %> agent restart'];
  static override flags = {
    'git-credentials': Flags.boolean({ description: 'Forward git credentials and the git identity into the microVM (--no-git-credentials stops it); unchanged when not given.', allowNo: true }),
  };

  async run(): Promise<SandboxSwitchJson> {
    const { state, host } = await switchSandbox(this.settings, {
      enabled: true,
      ...(this.flags['git-credentials'] === undefined ? {} : { gitCredentials: this.flags['git-credentials'] }),
    });
    for (const line of sandboxSwitchLines(state, host)) this.log(line);
    return sandboxSwitchJson(state, host);
  }
}
