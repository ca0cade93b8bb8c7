import { describe, expect, it } from 'vitest';
import { tscKhzFromCpuinfo } from '../../src/core/sandbox/accel.js';
import { MERGED_USR_LAYOUT, bwrapArgs, kernelCmdline, pctEncode, qemuArgs } from '../../src/core/sandbox/qemu-args.js';
import type { VmLaunchSpec } from '../../src/core/sandbox/qemu-args.js';

const spec: VmLaunchSpec = {
  name: 'mgr-workspace',
  accel: 'tcg',
  kernel: '/c/boot/k1/vmlinux',
  initramfs: '/c/boot/k1/initramfs.cpio',
  image: '/c/images/t/abc/rootfs.img',
  scratchFd: 4,
  roots: ['/workspace/repos', '/workspace/schedule-worktrees'],
  memoryMib: 256,
  cpus: 2,
  tmpfsKib: 65536,
  execUser: { uid: 1000, gid: 1001 },
  hostname: 'mgr-workspace',
  labels: { 'mgr.managed': 'true', 'mgr.name': 'mgr-workspace' },
  tscKhz: 2445406,
};

function after(args: string[], flag: string): string[] {
  return args.flatMap((a, i) => (a === flag ? [args[i + 1]!] : []));
}

describe('qemuArgs', () => {
  it('uses the microvm machine with ACPI, and PIT/PIC/RTC under TCG', () => {
    const args = qemuArgs(spec);
    expect(args[0]).toBe('qemu-system-x86_64');
    expect(after(args, '-machine')).toEqual(['microvm,acpi=on,pit=on,pic=on,rtc=on']);
    expect(after(args, '-accel')).toEqual(['tcg']);
    expect(after(qemuArgs({ ...spec, accel: 'kvm' }), '-machine')).toEqual(['microvm,acpi=on']);
    expect(after(qemuArgs({ ...spec, accel: 'kvm' }), '-cpu')).toEqual(['host']);
  });

  it('ends a dead guest: -no-reboot with panic=-1, and sets the TSC rate under TCG', () => {
    const args = qemuArgs(spec);
    expect(args).toContain('-no-reboot');
    const cmdline = after(args, '-append')[0]!;
    expect(cmdline.split(' ')).toEqual(expect.arrayContaining(['panic=-1', 'tsc_early_khz=2445406']));
    expect(kernelCmdline({ ...spec, accel: 'kvm' })).not.toContain('tsc_early_khz');
    expect(() => kernelCmdline({ ...spec, tscKhz: undefined })).toThrow(/tscKhz/);
  });

  it('uses only virtio-mmio device forms: 9p shares at the same paths, the agent port, two disks; no network', () => {
    const args = qemuArgs(spec);
    const devices = after(args, '-device');
    expect(devices).toEqual([
      'virtio-serial-device,id=vser0',
      'virtserialport,bus=vser0.0,chardev=agent,name=mgr.agent',
      'virtio-9p-device,fsdev=root0,mount_tag=mgr0',
      'virtio-9p-device,fsdev=root1,mount_tag=mgr1',
      'virtio-blk-device,drive=image,serial=mgr-image',
      'virtio-blk-device,drive=scratch,serial=mgr-scratch',
    ]);
    expect(devices.some((d) => d.includes('-pci'))).toBe(false);
    expect(after(args, '-fsdev')).toEqual(['local,id=root0,path=/workspace/repos,security_model=none', 'local,id=root1,path=/workspace/schedule-worktrees,security_model=none']);
    expect(after(args, '-drive')[0]).toContain('readonly=on');
    // the scratch disk is an inherited descriptor, not a path QEMU could reach
    expect(after(args, '-add-fd')).toEqual(['fd=4,set=1,opaque=scratch-rw', 'fd=5,set=1,opaque=scratch-ro']);
    expect(after(args, '-drive')[1]).toBe('if=none,id=scratch,file=/dev/fdset/1,format=raw,discard=unmap');
    expect(args).toContain('-nodefaults');
    expect(args.some((a) => a.startsWith('-net') || a === '-nic')).toBe(false);
    expect(after(args, '-sandbox')).toEqual(['on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny']);
  });

  it('passes roots, /tmp size, exec user and labels to the guest init, percent-encoded', () => {
    const cmdline = kernelCmdline({ ...spec, roots: ['/w/my repos', '/w/a,b'] });
    expect(cmdline).toContain('mgr.roots=/w/my%20repos,/w/a%2Cb');
    expect(cmdline).toContain('mgr.tmpfs_kib=65536');
    expect(cmdline).toContain('mgr.user=1000:1001');
    expect(cmdline).toContain('mgr.labels=mgr.managed=true,mgr.name=mgr-workspace');
    expect(pctEncode('é')).toBe('%C3%A9');
    expect(() => kernelCmdline({ ...spec, roots: ['/'.padEnd(3000, 'x')] })).toThrow(/exceeds/);
  });

  it('doubles commas in paths for QEMU option syntax', () => {
    expect(after(qemuArgs({ ...spec, image: '/c/a,b/rootfs.img' }), '-drive')[0]).toContain('file=/c/a,,b/rootfs.img,');
  });

  it('a probe boot has no devices and no shares', () => {
    const args = qemuArgs({ ...spec, accel: 'kvm', probe: true });
    expect(after(args, '-device')).toEqual([]);
    expect(after(args, '-append')[0]).toContain('mgr.probe=1');
  });
});

describe('bwrapArgs', () => {
  it('wraps QEMU with everything unshared, no capabilities, and only /usr, boot files, image and roots bound', () => {
    const args = bwrapArgs(spec, MERGED_USR_LAYOUT);
    const sep = args.indexOf('--');
    const wrapper = args.slice(0, sep);
    expect(wrapper.slice(0, 5)).toEqual(['bwrap', '--unshare-all', '--cap-drop', 'ALL', '--die-with-parent']);
    const binds = wrapper.flatMap((a, i) => (a === '--bind' || a === '--ro-bind' || a === '--dev-bind' ? [`${a} ${wrapper[i + 1]}`] : []));
    expect(binds).toEqual([
      '--ro-bind /usr',
      '--ro-bind /c/boot/k1/vmlinux',
      '--ro-bind /c/boot/k1/initramfs.cpio',
      '--ro-bind /c/images/t/abc/rootfs.img',
      '--bind /workspace/repos',
      '--bind /workspace/schedule-worktrees',
    ]);
    expect(wrapper).toContain('--symlink');
    expect(args.slice(sep + 1)).toEqual(qemuArgs(spec));
    expect(bwrapArgs({ ...spec, accel: 'kvm' }, MERGED_USR_LAYOUT)).toContain('--dev-bind');
  });

  it('binds /lib itself on a host without merged /usr', () => {
    const args = bwrapArgs(spec, { ...MERGED_USR_LAYOUT, '/lib': 'dir', '/lib64': 'absent' });
    expect(args.join(' ')).toContain('--ro-bind /lib /lib');
    expect(args.join(' ')).not.toContain('/lib64');
  });
});

describe('tscKhzFromCpuinfo', () => {
  it('reads the first cpu MHz line', () => {
    expect(tscKhzFromCpuinfo('processor\t: 0\ncpu MHz\t\t: 2445.406\ncpu MHz\t\t: 1.0\n')).toBe(2445406);
    expect(tscKhzFromCpuinfo('processor : 0\n')).toBeUndefined();
  });
});
