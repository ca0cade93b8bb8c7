import { BaseCommand } from '../../cli/base-command.js';
import { sandboxDown } from '../../core/sandbox/service.js';
import { sandboxSettings } from '../../core/sandbox/settings.js';

export default class SandboxDown extends BaseCommand<typeof SandboxDown> {
  static override summary = 'Stop the mgr-workspace microVM and its runner.';
  static override examples = ['<%= config.bin %> sandbox down'];

  async run(): Promise<{ stopped: boolean }> {
    const result = await sandboxDown(sandboxSettings(this.settings));
    this.log(result.stopped ? 'mgr-workspace stopped' : 'mgr-workspace was not running');
    return result;
  }
}
