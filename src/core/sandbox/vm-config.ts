import { lstat, mkdir, readFile, stat } from 'node:fs/promises';
import type { WantedVm } from './attest.js';
import { REQUIRED_LABELS } from './attest.js';
import { resolveImageRef } from './images.js';
import type { AccelMode, SandboxSettings } from './settings.js';
import { VM_NAME } from './settings.js';
import { tmpfsSizeKib } from './tmpfs.js';
import { SandboxUnavailableError } from './unavailable.js';

/**
 * The wanted state of the VM, resolved on the client side from settings and sent with every runner request.
 * Plain JSON: the runner compares it with the live attestation and recreates the VM when they differ.
 */
export interface VmConfig {
  name: string;
  imageRef: string;
  memoryMib: number;
  cpus: number;
  execUser: { uid: number; gid: number };
  network: 'none';
  roots: string[];
  tmpfsKib: number;
  labels: Record<string, string>;
  accel: AccelMode;
  startTimeoutMs: number;
  cacheDir: string;
  /** The outbound allow-list a registry pull obeys (CRAWL_ALLOW_HOSTS entries). */
  allowHosts: string[];
}

export function wantedFacts(config: VmConfig): WantedVm {
  return {
    hostname: config.name,
    imageRef: config.imageRef,
    cpus: config.cpus,
    memoryMib: config.memoryMib,
    execUser: config.execUser,
    network: config.network,
    roots: config.roots,
    tmpfsKib: config.tmpfsKib,
    labels: config.labels,
  };
}

function lookup(table: string, name: string, column: number): number | undefined {
  for (const line of table.split('\n')) {
    const fields = line.split(':');
    if (fields[0] === name && fields[column] !== undefined && /^\d+$/.test(fields[column])) return Number(fields[column]);
  }
  return undefined;
}

/**
 * SANDBOX_EXEC_USER: `uid`, `uid:gid`, `name` or `name:group` (names from the host's /etc/passwd and
 * /etc/group, since the guest image may not know them). Without a group, the user's primary group.
 */
export function parseExecUser(spec: string, passwd: string, group: string): { uid: number; gid: number } {
  const [userPart, groupPart, ...rest] = spec.trim().split(':');
  if (!userPart || rest.length > 0) throw new SandboxUnavailableError(`SANDBOX_EXEC_USER=${JSON.stringify(spec)} must be uid[:gid] or name[:group]`);
  const uid = /^\d+$/.test(userPart) ? Number(userPart) : lookup(passwd, userPart, 2);
  if (uid === undefined) throw new SandboxUnavailableError(`SANDBOX_EXEC_USER names an unknown user ${JSON.stringify(userPart)}`);
  let gid: number | undefined;
  if (groupPart === undefined || groupPart === '') {
    const primary = passwd.split('\n').find((l) => {
      const f = l.split(':');
      return f[2] === String(uid) || f[0] === userPart;
    });
    const g = primary?.split(':')[3];
    gid = g !== undefined && /^\d+$/.test(g) ? Number(g) : uid;
  } else {
    gid = /^\d+$/.test(groupPart) ? Number(groupPart) : lookup(group, groupPart, 2);
  }
  if (gid === undefined) throw new SandboxUnavailableError(`SANDBOX_EXEC_USER names an unknown group ${JSON.stringify(groupPart)}`);
  return { uid, gid };
}

/**
 * The roots are shared writable into the guest at the same paths. A root that is a symlink would share
 * whatever it points at (possibly outside the workspace), so it is refused. A missing root is created when the
 * VM is to use it (`create`); a read such as `sandbox status` leaves the disk as it found it.
 */
export async function checkRoots(roots: readonly string[], create = true): Promise<void> {
  for (const root of roots) {
    let info = await lstat(root).catch(() => undefined);
    if (!info) {
      if (!create) continue;
      await mkdir(root, { recursive: true });
      info = await lstat(root);
    }
    if (info.isSymbolicLink()) throw new SandboxUnavailableError(`the sandbox root ${root} is a symlink; roots must be real directories`);
    if (!info.isDirectory()) throw new SandboxUnavailableError(`the sandbox root ${root} is not a directory`);
  }
}

export async function resolveVmConfig(settings: SandboxSettings, options: { create?: boolean } = {}): Promise<VmConfig> {
  const create = options.create ?? true;
  await checkRoots(settings.roots, create);
  // A workspace not made yet would be made by this user, so a read takes this user as its owner.
  const owner = await stat(settings.workspacePath).catch((error: NodeJS.ErrnoException) => {
    if (create || error.code !== 'ENOENT') throw error;
    return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  });
  let execUser = { uid: owner.uid, gid: owner.gid };
  if (settings.execUser !== undefined) {
    const [passwd, group] = await Promise.all([readFile('/etc/passwd', 'utf8').catch(() => ''), readFile('/etc/group', 'utf8').catch(() => '')]);
    execUser = parseExecUser(settings.execUser, passwd, group);
    // Files written through 9p belong to QEMU's user (the workspace owner); a different guest uid could not
    // write them back, so a mismatch is a configuration error, not something to run with.
    if (execUser.uid !== owner.uid) {
      throw new SandboxUnavailableError(`SANDBOX_EXEC_USER=${settings.execUser} (uid ${execUser.uid}) does not match the owner of ${settings.workspacePath} (uid ${owner.uid})`, {
        hint: `Set SANDBOX_EXEC_USER=${owner.uid}:${owner.gid} or unset it.`,
      });
    }
  }
  const image = await resolveImageRef(settings.cacheDir, settings.image);
  return {
    name: VM_NAME,
    imageRef: image.ref,
    memoryMib: settings.memoryMib,
    cpus: settings.cpus,
    execUser,
    network: 'none',
    roots: [...settings.roots],
    tmpfsKib: tmpfsSizeKib(settings.memoryMib),
    labels: { ...REQUIRED_LABELS, 'mgr.name': VM_NAME },
    accel: settings.accel,
    startTimeoutMs: settings.startTimeoutMs,
    cacheDir: settings.cacheDir,
    allowHosts: [...(settings.allowHosts ?? [])],
  };
}
