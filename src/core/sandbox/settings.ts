import path from 'node:path';
import type { Config } from '../config.js';
import type { AllowEntry } from '../net/policy.js';

export type AccelMode = 'auto' | 'kvm' | 'tcg';

/** The single VM every project shares (spec: MicroVM scope). */
export const VM_NAME = 'mgr-workspace';

/**
 * Sandbox configuration as plain values. Commands build it from the environment through `sandboxSettings()`;
 * tests and the manager construct it directly. Environment variables: SANDBOX_IMAGE, SANDBOX_ACCEL,
 * SANDBOX_EXEC_USER, SANDBOX_START_TIMEOUT_MS, SANDBOX_MEMORY_MB, SANDBOX_CPUS, WORKSPACE_PATH, DOCDEX_HOME.
 */
export interface SandboxSettings {
  workspacePath: string;
  /** `$WORKSPACE_PATH/repos` and `$WORKSPACE_PATH/schedule-worktrees`, shared at the same guest paths. */
  roots: readonly [string, string];
  /** SANDBOX_IMAGE as given: `name@sha256:<hex>` (recommended) or a bare local name; unset = docdex-debian. */
  image: string | undefined;
  accel: AccelMode;
  /** SANDBOX_EXEC_USER as given (`uid[:gid]` or a user name); unset = the workspace owner. */
  execUser: string | undefined;
  startTimeoutMs: number;
  memoryMib: number;
  cpus: number;
  /** Built kernels, initramfs and images (content-addressed, safe to share). */
  cacheDir: string;
  /** The runner's socket, lock, log and the VM's scratch disk. */
  stateDir: string;
  /**
   * CRAWL_ALLOW_HOSTS entries (the outbound policy's allow-list): a registry image is pulled only from a public
   * address or a listed one. Unset = none listed.
   */
  allowHosts?: readonly string[];
}

export function sandboxRoots(workspacePath: string): [string, string] {
  return [path.join(workspacePath, 'repos'), path.join(workspacePath, 'schedule-worktrees')];
}

export function sandboxSettings(config: Config): SandboxSettings {
  const workspacePath = config.agent.workspacePath;
  return {
    workspacePath,
    roots: sandboxRoots(workspacePath),
    image: config.sandbox.image,
    accel: config.sandbox.accel,
    execUser: config.sandbox.execUser,
    startTimeoutMs: config.sandbox.startTimeoutMs,
    memoryMib: config.sandbox.memoryMb,
    cpus: config.sandbox.cpus,
    cacheDir: path.join(config.home, 'sandbox'),
    stateDir: path.join(config.home, 'sandbox', 'run'),
    allowHosts: config.outbound.allowHosts.map(allowEntryText),
  };
}

function allowEntryText(entry: AllowEntry): string {
  return entry.kind === 'cidr' ? entry.text : entry.name;
}
