import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { lstat, open, readFile, readlink, rm, truncate, writeFile } from 'node:fs/promises';
import { execa } from 'execa';
import { AgentChannel } from './agent-channel.js';
import { bwrapArgs } from './qemu-args.js';
import type { HostLayout, VmLaunchSpec } from './qemu-args.js';

/** Size of the sparse scratch disk that takes the guest's writes outside the shared roots. */
export const SCRATCH_BYTES = 8 * 1024 ** 3;
const CONSOLE_TAIL_BYTES = 16 * 1024;

export interface VmExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const NOISE = [
  /^\[\s*\d+\.\d+\]\s+(\S+\s*)?(Call Trace|RIP|RSP|RAX|RDX|RBP|R10|R13|Code|\?|<\/?TASK>|Kernel Offset|CPU:|Hardware name)/,
  // A stack frame: "[    3.33]  do_syscall_64+0x5d/0xb0".
  /^\[\s*\d+\.\d+\]\s+\S+\+0x[0-9a-f]+\/0x[0-9a-f]+/,
];
const FATAL = /Kernel panic|Out of memory|oom-kill|Killed process/;

/** The console lines worth quoting when a boot fails (see MicroVm.bootHint). */
export function bootFailureLines(consoleText: string): string[] {
  const lines = consoleText
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !NOISE.some((pattern) => pattern.test(l)));
  const fatal = lines.findIndex((l) => FATAL.test(l));
  return fatal >= 0 ? lines.slice(Math.max(0, fatal - 1), fatal + 1) : lines.slice(-3);
}

export async function hostLayout(): Promise<HostLayout> {
  const layout: Record<string, { symlink: string } | 'dir' | 'absent'> = {};
  for (const dir of ['/bin', '/sbin', '/lib', '/lib64']) {
    const info = await lstat(dir).catch(() => undefined);
    if (!info) layout[dir] = 'absent';
    else if (info.isSymbolicLink()) layout[dir] = { symlink: await readlink(dir) };
    else layout[dir] = 'dir';
  }
  return layout;
}

/**
 * A fresh, empty ext4 scratch disk per VM: the image stays read-only and anything the guest writes outside
 * the roots dies with the VM. Sparse, no journal (nothing survives a crash anyway), formatted on the host in
 * milliseconds.
 */
export async function createScratchDisk(file: string, bytes = SCRATCH_BYTES): Promise<void> {
  await rm(file, { force: true });
  await writeFile(file, '', { mode: 0o600 });
  await truncate(file, bytes);
  const result = await execa('mkfs.ext4', ['-q', '-F', '-O', '^has_journal', '-E', 'lazy_itable_init=1,lazy_journal_init=1', '-L', 'mgr-scratch', file], {
    reject: false,
    stdin: 'ignore',
  });
  if (result.exitCode !== 0) throw new Error(`mkfs.ext4 failed for the scratch disk: ${String(result.stderr).trim() || String(result.exitCode ?? result.failed)}`);
}

/**
 * One running microVM: bubblewrap around QEMU, the agent port on QEMU's stdio, the guest console in a log
 * file (QEMU's stderr). `start` resolves once the agent has said hello; it rejects (and kills everything) on exit or timeout.
 */
export class MicroVm {
  readonly channel: AgentChannel;
  readonly exited: Promise<VmExit>;
  readonly startedAt = Date.now();
  agentVersion = '';
  private sandboxPid: number | undefined;
  private exitInfo: VmExit | undefined;

  private constructor(
    private readonly child: ChildProcess,
    readonly spec: Omit<VmLaunchSpec, 'scratchFd'>,
    private readonly consoleLog: string,
  ) {
    this.channel = new AgentChannel(child.stdout!, child.stdin!);
    child.stdin!.on('error', () => undefined);
    // bwrap reports the pid of the sandboxed child on fd 3 (--info-fd): used to find and show QEMU's pid.
    const info = child.stdio[3] as NodeJS.ReadableStream | null;
    let infoText = '';
    info?.on('data', (chunk: Buffer) => {
      infoText += chunk.toString('utf8');
      const m = /"child-pid":\s*(\d+)/.exec(infoText);
      if (m) this.sandboxPid = Number(m[1]);
    });
    this.exited = new Promise((resolve) => {
      child.on('close', (code, signal) => {
        this.exitInfo = { code, signal };
        this.channel.close(new Error(`the microVM exited (${signal ?? `code ${String(code)}`})`));
        resolve(this.exitInfo);
      });
    });
  }

  /**
   * The guest console (and bwrap's/QEMU's own complaints) go to `consoleLog`, passed as QEMU's stderr. It must be
   * a real file: QEMU reopens /dev/stderr for `-serial file:`, which fails for the socket pairs Node uses as pipes.
   */
  static async start(
    spec: Omit<VmLaunchSpec, 'scratchFd'>,
    options: { layout: HostLayout; timeoutMs: number; consoleLog: string; scratch: string; runAs?: { uid: number; gid: number }; bwrapBinary?: string },
  ): Promise<MicroVm> {
    // fd 3: bwrap's --info-fd; fds 4 and 5: the scratch disk read-write and read-only, for QEMU's -add-fd.
    const full: VmLaunchSpec = { ...spec, scratchFd: 4 };
    const [bin, ...args] = bwrapArgs(full, options.layout, options.bwrapBinary);
    args.splice(args.indexOf('--unshare-all'), 0, '--info-fd', '3');
    // A new file every boot: an old one may belong to the previous VM's user, whom QEMU must not depend on.
    await rm(options.consoleLog, { force: true });
    const log = await open(options.consoleLog, 'wx', 0o600);
    // QEMU reopens its stderr through /proc/self/fd/2 for `-serial file:`, which checks the file's permissions.
    if (options.runAs) await log.chown(options.runAs.uid, options.runAs.gid);
    const scratch = await open(options.scratch, 'r+');
    const scratchRo = await open(options.scratch, 'r');
    let child: ChildProcess;
    try {
      child = spawn(bin!, args, {
        stdio: ['pipe', 'pipe', log.fd, 'pipe', scratch.fd, scratchRo.fd],
        // A root runner still runs QEMU as the workspace owner, so files the guest writes through 9p belong to
        // the owner (with security_model=none they belong to QEMU's user).
        ...(options.runAs ? { uid: options.runAs.uid, gid: options.runAs.gid } : {}),
      });
    } finally {
      await log.close();
      await scratch.close();
      await scratchRo.close();
    }
    const vm = new MicroVm(child, spec, options.consoleLog);
    const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
    const exitedDuringBoot = async (): Promise<never> => {
      const e = await vm.exited;
      throw new Error(`the microVM exited during boot (${e.signal ?? `code ${String(e.code)}`})${await vm.bootHint()}`);
    };
    let timer: NodeJS.Timeout | undefined;
    try {
      vm.agentVersion = await Promise.race([
        // A closed port means QEMU is going away; report its exit and console rather than the bare close.
        vm.channel.hello.catch(exitedDuringBoot),
        spawnError,
        exitedDuringBoot(),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            void vm.bootHint().then((hint) => reject(new Error(`the microVM did not boot within ${options.timeoutMs} ms (SANDBOX_START_TIMEOUT_MS)${hint || '; the guest console stayed empty'}`)));
          }, options.timeoutMs);
        }),
      ]);
      return vm;
    } catch (error) {
      await vm.kill();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * The console lines that say why a boot failed, for error messages: the kernel panic (or OOM kill) and the
   * line before it when there is one, else the last meaningful lines. Register dumps and stack frames are left
   * out; they say nothing a user can act on.
   */
  async bootHint(): Promise<string> {
    const tail = bootFailureLines(await this.consoleText());
    return tail.length > 0 ? `; console: ${tail.join(' | ')}` : '';
  }

  async consoleText(): Promise<string> {
    const handle = await open(this.consoleLog, 'r').catch(() => undefined);
    if (!handle) return '';
    try {
      const { size } = await handle.stat();
      const length = Math.min(size, CONSOLE_TAIL_BYTES);
      const buf = Buffer.alloc(length);
      await handle.read(buf, 0, length, size - length);
      return buf.toString('utf8');
    } finally {
      await handle.close();
    }
  }

  get alive(): boolean {
    return this.exitInfo === undefined;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** QEMU's pid on the host: the sandbox's child (bwrap runs an init inside the pid namespace) or below it. */
  async qemuPid(): Promise<number | undefined> {
    const seen = new Set<number>();
    const queue = this.sandboxPid ? [this.sandboxPid] : this.child.pid ? [this.child.pid] : [];
    while (queue.length > 0) {
      const pid = queue.shift()!;
      if (seen.has(pid)) continue;
      seen.add(pid);
      const comm = (await readFile(`/proc/${pid}/comm`, 'utf8').catch(() => '')).trim();
      if (comm.startsWith('qemu-system')) return pid;
      const children = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
      for (const c of children.trim().split(/\s+/).filter(Boolean)) queue.push(Number(c));
    }
    return undefined;
  }

  /** Hard stop: the VM holds nothing worth a clean shutdown (the roots are written through synchronously). */
  async kill(): Promise<VmExit> {
    if (this.alive) this.child.kill('SIGKILL');
    return this.exited;
  }
}
