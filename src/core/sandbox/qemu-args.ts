/**
 * The QEMU and bubblewrap command lines for the sandbox microVM. Pure: every host fact (paths, TSC rate,
 * merged-/usr layout) comes in as a value, so the exact argv is unit-testable.
 *
 * Choices that were checked on the target machines (issue 12):
 * - `microvm` with the virtio-mmio `*-device` forms; ACPI stays on because the stock Debian kernel finds
 *   virtio-mmio devices only through ACPI (CONFIG_VIRTIO_MMIO_CMDLINE_DEVICES is off).
 * - Under TCG the legacy PIT/PIC/RTC must be on and the kernel told the TSC rate (`tsc_early_khz`), or the
 *   boot hangs calibrating timers.
 * - `-no-reboot` with `panic=-1`: when the guest init or agent dies the kernel panics, asks for a reboot, and
 *   QEMU exits instead, so the host sees a dead VM rather than a half-alive one.
 * - `-sandbox on,...`: QEMU's own seccomp filter. TCG is documented as not a security boundary, hence also
 *   bubblewrap around QEMU with nothing bound but /usr, the boot files, the image and the two roots (the
 *   scratch disk comes in as an inherited file descriptor).
 */

export interface VmLaunchSpec {
  name: string;
  accel: 'kvm' | 'tcg';
  kernel: string;
  initramfs: string;
  /** Read-only ext4 image (the guest's lower root). Not needed for a probe boot. */
  image?: string;
  /**
   * Per-VM writable disk for the overlay's upper layer, as file descriptors QEMU inherits through bubblewrap
   * (`scratchFd` open read-write, `scratchFd + 1` read-only), so the runner's private state directory never
   * has to be bound or even be reachable by QEMU's user. Not needed for a probe boot.
   */
  scratchFd?: number;
  roots: readonly string[];
  memoryMib: number;
  cpus: number;
  tmpfsKib: number;
  execUser: { uid: number; gid: number };
  hostname: string;
  labels: Readonly<Record<string, string>>;
  /** Host TSC rate in kHz; required under TCG. */
  tscKhz?: number;
  /** Boot only far enough to prove the accelerator works (see accel.ts). */
  probe?: boolean;
  qemuBinary?: string;
}

/** What /lib, /lib64, /bin and /sbin are on the host: symlinks into /usr on merged-/usr systems. */
export type HostLayout = Readonly<Record<string, { symlink: string } | 'dir' | 'absent'>>;

export const MERGED_USR_LAYOUT: HostLayout = {
  '/bin': { symlink: 'usr/bin' },
  '/sbin': { symlink: 'usr/sbin' },
  '/lib': { symlink: 'usr/lib' },
  '/lib64': { symlink: 'usr/lib64' },
};

/** The x86 kernel keeps 2048 bytes of command line; longer root paths would be cut silently. */
export const MAX_CMDLINE = 2048;

/** Percent-encodes everything but a conservative set, so spaces, commas and non-ASCII survive the cmdline. */
export function pctEncode(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9/._-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function labelsParam(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((k) => `${pctEncode(k)}=${pctEncode(labels[k]!)}`)
    .join(',');
}

export function kernelCmdline(spec: VmLaunchSpec): string {
  const words = ['console=ttyS0', 'panic=-1', 'quiet', 'loglevel=3'];
  if (spec.accel === 'tcg') {
    if (!spec.tscKhz || spec.tscKhz <= 0) throw new Error('tscKhz is required under TCG');
    words.push(`tsc_early_khz=${Math.round(spec.tscKhz)}`);
  }
  if (spec.probe) {
    words.push('mgr.probe=1');
  } else {
    words.push(
      `mgr.roots=${spec.roots.map(pctEncode).join(',')}`,
      `mgr.tmpfs_kib=${spec.tmpfsKib}`,
      `mgr.user=${spec.execUser.uid}:${spec.execUser.gid}`,
      `mgr.hostname=${pctEncode(spec.hostname)}`,
      `mgr.labels=${labelsParam(spec.labels)}`,
    );
  }
  const line = words.join(' ');
  if (Buffer.byteLength(line) >= MAX_CMDLINE) throw new Error(`kernel command line of ${Buffer.byteLength(line)} bytes exceeds ${MAX_CMDLINE - 1}`);
  return line;
}

/** QEMU's option parser splits on commas; a literal comma in a path is written twice. */
function qemuPath(p: string): string {
  return p.replaceAll(',', ',,');
}

export function qemuArgs(spec: VmLaunchSpec): string[] {
  const machine = spec.accel === 'tcg' ? 'microvm,acpi=on,pit=on,pic=on,rtc=on' : 'microvm,acpi=on';
  const args = [
    spec.qemuBinary ?? 'qemu-system-x86_64',
    '-name',
    spec.name,
    '-machine',
    machine,
    '-accel',
    spec.accel,
    '-cpu',
    spec.accel === 'kvm' ? 'host' : 'max',
    '-m',
    `${spec.memoryMib}M`,
    '-smp',
    String(spec.cpus),
    '-nodefaults',
    '-no-user-config',
    '-display',
    'none',
    '-monitor',
    'none',
    '-no-reboot',
    '-kernel',
    spec.kernel,
    '-initrd',
    spec.initramfs,
    '-append',
    kernelCmdline(spec),
    // The guest console goes to QEMU's stderr, which the runner keeps as the boot log.
    '-serial',
    'file:/dev/stderr',
  ];
  if (!spec.probe) {
    if (!spec.image || spec.scratchFd === undefined) throw new Error('image and scratchFd are required unless probing');
    args.push(
      // The agent port rides on QEMU's stdin/stdout: no socket file exists that anything else could open.
      '-device',
      'virtio-serial-device,id=vser0',
      '-chardev',
      'stdio,id=agent,signal=off',
      '-device',
      'virtserialport,bus=vser0.0,chardev=agent,name=mgr.agent',
    );
    spec.roots.forEach((root, i) => {
      args.push(
        // security_model=none: files the guest creates belong to QEMU's user, the workspace owner.
        '-fsdev',
        `local,id=root${i},path=${qemuPath(root)},security_model=none`,
        '-device',
        `virtio-9p-device,fsdev=root${i},mount_tag=mgr${i}`,
      );
    });
    args.push(
      '-drive',
      `if=none,id=image,file=${qemuPath(spec.image)},format=raw,readonly=on`,
      '-device',
      'virtio-blk-device,drive=image,serial=mgr-image',
      // QEMU dups from the set by access mode and opens the disk read-only first, so the set holds both.
      '-add-fd',
      `fd=${spec.scratchFd},set=1,opaque=scratch-rw`,
      '-add-fd',
      `fd=${spec.scratchFd + 1},set=1,opaque=scratch-ro`,
      '-drive',
      'if=none,id=scratch,file=/dev/fdset/1,format=raw,discard=unmap',
      '-device',
      'virtio-blk-device,drive=scratch,serial=mgr-scratch',
    );
  }
  // No -netdev/-nic and -nodefaults: the guest has no network device at all (network policy "none").
  args.push('-sandbox', 'on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny');
  return args;
}

export function bwrapArgs(spec: VmLaunchSpec, layout: HostLayout, bwrapBinary = 'bwrap'): string[] {
  const args = [bwrapBinary, '--unshare-all', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--ro-bind', '/usr', '/usr'];
  for (const dir of Object.keys(layout).sort()) {
    const kind = layout[dir];
    if (kind === undefined || kind === 'absent') continue;
    // On a host without merged /usr the libraries live in /lib itself and must be bound to run QEMU at all.
    if (kind === 'dir') args.push('--ro-bind', dir, dir);
    else args.push('--symlink', kind.symlink, dir);
  }
  args.push('--dev', '/dev', '--proc', '/proc');
  if (spec.accel === 'kvm') args.push('--dev-bind', '/dev/kvm', '/dev/kvm');
  args.push('--ro-bind', spec.kernel, spec.kernel, '--ro-bind', spec.initramfs, spec.initramfs);
  if (spec.image) args.push('--ro-bind', spec.image, spec.image);
  if (!spec.probe) for (const root of spec.roots) args.push('--bind', root, root);
  args.push('--chdir', '/', '--', ...qemuArgs(spec));
  return args;
}
