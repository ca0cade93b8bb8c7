import { BaseCommand } from '../../cli/base-command.js';
import { sandboxUp } from '../../core/sandbox/service.js';
import type { VmStatus } from '../../core/sandbox/runner-daemon.js';
import { sandboxSettings } from '../../core/sandbox/settings.js';
import { describeVm } from './status.js';

export default class SandboxUp extends BaseCommand<typeof SandboxUp> {
  static override summary = 'Start (or verify) the mgr-workspace microVM.';
  static override description = 'Boots the shared sandbox VM if it is not running, or attests the running one against the current settings and recreates it on any mismatch.';
  static override examples = ['<%= config.bin %> sandbox up', 'SANDBOX_ACCEL=tcg <%= config.bin %> sandbox up --json'];

  async run(): Promise<VmStatus> {
    const status = await sandboxUp(sandboxSettings(this.settings));
    for (const line of describeVm(status)) this.log(line);
    return status;
  }
}
