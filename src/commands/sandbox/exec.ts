import { Flags } from '@oclif/core';
import { BaseCommand } from '../../cli/base-command.js';
import { rawProcessArgs } from '../../core/sandbox/exec-args.js';
import { runSandboxExecCli } from '../../core/sandbox/exec-cli.js';
import { sandboxSettings } from '../../core/sandbox/settings.js';

const FORWARDED_SIGNALS = { SIGINT: 2, SIGTERM: 15, SIGHUP: 1 } as const;

export default class SandboxExec extends BaseCommand<typeof SandboxExec> {
  static override summary = 'Run one command in the mgr-workspace microVM.';
  static override description =
    'The exit code is the guest command\'s (128+N for a signal, 124 for --timeout). When the sandbox cannot run it, nothing runs anywhere: the message starts with "Sandbox enforcement is on but the sandbox is unavailable" and the exit code is 125. The command bytes are passed unchanged.';
  static override examples = ['<%= config.bin %> sandbox exec -w "$WORKSPACE_PATH/repos/app" -e GIT_AUTHOR_NAME=me -- sh -c "make test"'];
  static override strict = false;
  // stdout belongs to the guest command.
  static override enableJsonFlag = false;
  static override flags = {
    workdir: Flags.string({ char: 'w', description: 'Guest working directory; must be inside the sandbox roots.', required: true }),
    env: Flags.string({ char: 'e', description: 'NAME=VALUE for the guest environment (repeatable).', multiple: true }),
    timeout: Flags.integer({ description: 'Kill the command after this many milliseconds (0 = never).', default: 0, min: 0 }),
  };

  async run(): Promise<void> {
    const raw = rawProcessArgs(process.argv);
    const at = raw.findIndex((b, i) => b.toString('latin1') === 'sandbox' && raw[i + 1]?.toString('latin1') === 'exec');
    process.exitCode = await runSandboxExecCli(at >= 0 ? raw.slice(at + 2) : this.argv.map((a) => Buffer.from(a)), () => sandboxSettings(this.settings), {
      stdout: process.stdout,
      stderr: process.stderr,
      onSignal: (forward) => {
        const entries = Object.entries(FORWARDED_SIGNALS).map(([name, n]) => [name, () => forward(n)] as const);
        for (const [name, h] of entries) process.on(name, h);
        return () => {
          for (const [name, h] of entries) process.off(name, h);
        };
      },
    });
  }
}
