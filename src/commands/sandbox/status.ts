import { BaseCommand } from '../../cli/base-command.js';
import { describeMismatches } from '../../core/sandbox/attest.js';
import type { VmStatus } from '../../core/sandbox/runner-daemon.js';
import { sandboxSwitchJson } from '../../cli/sandbox-switch.js';
import type { SandboxSwitchJson } from '../../cli/sandbox-switch.js';
import { sandboxOverview } from '../../core/sandbox/manage.js';
import { describeSandboxSwitches } from '../../core/sandbox/switch.js';

export function describeVm(status: VmStatus & { configError?: string }): string[] {
  const lines = [`${status.name}: ${status.state}${status.qemuPid ? ` (qemu pid ${status.qemuPid}, ${status.accel ?? '?'})` : ''}`];
  if (status.config) {
    // A tag or a local name says nothing about the content; the digest it resolved to at boot does.
    const digest = status.imageDigest && !status.config.imageRef.endsWith(status.imageDigest.replace(/^sha256:/, '')) ? ` (${status.imageDigest})` : '';
    lines.push(`  image:   ${status.config.imageRef}${digest}`);
    lines.push(`  size:    ${status.config.cpus} cpu, ${status.config.memoryMib} MiB, /tmp ${status.config.tmpfsKib / 1024} MiB`);
    lines.push(`  roots:   ${status.config.roots.join(', ')}`);
  }
  if (status.attestation) {
    const f = status.attestation.facts;
    lines.push(`  guest:   ${f.hostname}, kernel ${f.kernelRelease}, up ${(f.uptimeMs / 1000).toFixed(0)} s, ${f.running} command(s) running`);
    lines.push(
      `  attest:  ${status.attestation.mismatches.length === 0 ? 'matches the current settings' : `differs (${describeMismatches(status.attestation.mismatches)}); the next command recreates it`}`,
    );
  }
  if (status.accelReason) lines.push(`  accel:   ${status.accelReason}`);
  if (status.lastLoss) lines.push(`  last loss: ${status.lastLoss}`);
  if (status.configError) lines.push(`  config:  ${status.configError}`);
  return lines;
}

export default class SandboxStatus extends BaseCommand<typeof SandboxStatus> {
  static override summary = 'Show whether sandbox enforcement is on, what the running agent server enforces, and the mgr-workspace microVM attested against the current settings.';
  static override examples = ['<%= config.bin %> sandbox status', '<%= config.bin %> sandbox status --json'];

  async run(): Promise<VmStatus & { enforcement: SandboxSwitchJson }> {
    const { switches, vm } = await sandboxOverview(this.settings);
    for (const line of describeSandboxSwitches(switches)) this.log(line);
    for (const line of describeVm(vm)) this.log(line);
    if (vm.configError && switches.agentServer.enforced === true) this.log('  Every sandboxed command is refused until this is fixed.');
    return { ...vm, enforcement: sandboxSwitchJson(switches) };
  }
}
