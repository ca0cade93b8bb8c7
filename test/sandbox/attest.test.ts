import { describe, expect, it } from 'vitest';
import { compareAttestation, decodeMountField, labelsFromCmdline, memoryMatches, parseAttestation } from '../../src/core/sandbox/attest.js';
import type { LiveFacts, WantedVm } from '../../src/core/sandbox/attest.js';

const REF = `docdex-test@sha256:${'c'.repeat(64)}`;
const want: WantedVm = {
  hostname: 'mgr-workspace',
  imageRef: REF,
  cpus: 1,
  memoryMib: 256,
  execUser: { uid: 1000, gid: 1000 },
  network: 'none',
  roots: ['/workspace/repos', '/workspace/schedule-worktrees'],
  tmpfsKib: 65536,
  labels: { 'mgr.managed': 'true', 'mgr.name': 'mgr-workspace' },
};

/** What the agent reported for such a VM (captured from a real boot, paths adjusted). */
const raw = {
  agent: 'mgr-agent/1',
  kernel_release: '6.1.0-56-amd64',
  kernel_version: '#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-2',
  machine: 'x86_64',
  hostname: 'mgr-workspace',
  boot_id: '27ecefe2-c9e3-4c3d-82be-632ab5f5fa31',
  cpus: 1,
  mem_total_kib: 210884,
  mem_ram_kib: 261755,
  exec_uid: 1000,
  exec_gid: 1000,
  image_ref: REF,
  cmdline:
    'console=ttyS0 panic=-1 quiet mgr.roots=/workspace/repos,/workspace/schedule-worktrees mgr.tmpfs_kib=65536 mgr.user=1000:1000 mgr.hostname=mgr-workspace mgr.labels=mgr.managed=true,mgr.name=mgr-workspace',
  mounts: [
    'proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0',
    'sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0',
    'devtmpfs /dev devtmpfs rw,nosuid,relatime,size=98140k,nr_inodes=24535,mode=755,inode64 0 0',
    'overlay / overlay rw,relatime,lowerdir=/mnt/image,upperdir=/mnt/scratch/upper,workdir=/mnt/scratch/work 0 0',
    'devpts /dev/pts devpts rw,nosuid,noexec,relatime,mode=600,ptmxmode=666 0 0',
    'tmpfs /tmp tmpfs rw,nosuid,nodev,relatime,size=65536k,inode64 0 0',
    'mgr0 /workspace/repos 9p rw,sync,dirsync,nosuid,nodev,relatime,access=client,msize=512000,trans=virtio 0 0',
    'mgr1 /workspace/schedule-worktrees 9p rw,sync,dirsync,nosuid,nodev,relatime,access=client,msize=512000,trans=virtio 0 0',
  ],
  interfaces: ['lo'],
  uptime_ms: 2790,
  running: 0,
};

function live(patch: Record<string, unknown> = {}): LiveFacts {
  return parseAttestation({ ...raw, ...patch });
}

function fields(facts: LiveFacts, wanted: WantedVm = want): string[] {
  return compareAttestation(wanted, facts).map((m) => m.field);
}

describe('attestation', () => {
  it('accepts a VM that matches in every field', () => {
    expect(compareAttestation(want, live())).toEqual([]);
  });

  it('image: compares the reference string read from the image', () => {
    expect(fields(live({ image_ref: `docdex-test@sha256:${'d'.repeat(64)}` }))).toEqual(['image']);
    expect(fields(live({ image_ref: null }))).toEqual(['image']);
    expect(fields(live(), { ...want, imageRef: 'docdex-test-b@sha256:' + 'c'.repeat(64) })).toEqual(['image']);
  });

  it('cpus', () => {
    expect(fields(live({ cpus: 2 }))).toEqual(['cpus']);
  });

  it('memory: the RAM QEMU gave the guest, with room for firmware holes only', () => {
    expect(fields(live(), { ...want, memoryMib: 320 })).toEqual(['memory']);
    expect(fields(live({ mem_ram_kib: 256 * 1024 + 1 }))).toEqual(['memory']);
    expect(fields(live({ mem_ram_kib: 250 * 1024 }))).toEqual(['memory']);
    expect(memoryMatches(256, 261755)).toBe(true);
    expect(memoryMatches(4096, 4096 * 1024 - 30_000)).toBe(true); // 1 % slack for large VMs
  });

  it('user: what a forked probe became after dropping privileges', () => {
    expect(fields(live({ exec_uid: 0 }))).toEqual(['user']);
    expect(fields(live({ exec_gid: 0 }))).toEqual(['user']);
    expect(fields(live({ exec_uid: -1, exec_gid: -1 }))).toEqual(['user']);
  });

  it('network: anything but loopback breaks the "none" policy', () => {
    expect(fields(live({ interfaces: ['eth0', 'lo'] }))).toEqual(['network']);
    expect(fields(live({ interfaces: [] }))).toEqual([]);
  });

  it('mounts: each root shared read-write at its own path, and nothing else shared', () => {
    const withoutRoot = raw.mounts.filter((m) => !m.includes('/workspace/schedule-worktrees'));
    expect(fields(live({ mounts: withoutRoot }))).toEqual(['mounts']);
    const readOnly = raw.mounts.map((m) => m.replace('mgr0 /workspace/repos 9p rw,', 'mgr0 /workspace/repos 9p ro,'));
    expect(fields(live({ mounts: readOnly }))).toEqual(['mounts']);
    const covered = [...raw.mounts, 'tmpfs2 /workspace/repos ext4 rw 0 0'];
    expect(fields(live({ mounts: covered }))).toEqual(['mounts']);
    const extraShare = [...raw.mounts, 'mgr2 /home 9p rw,trans=virtio 0 0'];
    expect(fields(live({ mounts: extraShare }))).toEqual(['mounts']);
  });

  it('tmpfs: /tmp size and options, and no other tmpfs anywhere', () => {
    const size = raw.mounts.map((m) => m.replace('size=65536k', 'size=131072k'));
    expect(fields(live({ mounts: size }))).toEqual(['tmpfs']);
    const suid = raw.mounts.map((m) => m.replace('tmpfs rw,nosuid,nodev,', 'tmpfs rw,nodev,'));
    expect(fields(live({ mounts: suid }))).toEqual(['tmpfs']);
    const noTmp = raw.mounts.filter((m) => !m.startsWith('tmpfs /tmp'));
    expect(fields(live({ mounts: noTmp }))).toEqual(['tmpfs']);
    const shm = [...raw.mounts, 'tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0'];
    expect(fields(live({ mounts: shm }))).toEqual(['tmpfs']);
    const ramfs = [...raw.mounts, 'none /var/cache ramfs rw 0 0'];
    expect(fields(live({ mounts: ramfs }))).toEqual(['tmpfs']);
    expect(fields(live(), { ...want, tmpfsKib: 81920 })).toEqual(['tmpfs']);
  });

  it('labels: mgr.managed=true and every wanted label, from the kernel command line', () => {
    expect(fields(live({ cmdline: raw.cmdline.replace('mgr.managed=true,', '') }))).toEqual(['labels']);
    expect(fields(live({ cmdline: raw.cmdline.replace('mgr.managed=true', 'mgr.managed=false') }))).toEqual(['labels']);
    expect(fields(live(), { ...want, labels: { 'mgr.name': 'mgr-workspace' } })).toEqual([]); // mgr.managed is always required
    expect(fields(live(), { ...want, labels: { owner: 'x' } })).toEqual(['labels']);
  });

  it('hostname and agent', () => {
    expect(fields(live({ hostname: 'other' }))).toEqual(['hostname']);
    expect(fields(live({ agent: 'something-else' }))).toEqual(['agent']);
  });

  it('rejects a malformed report instead of treating missing fields as matches', () => {
    expect(() => parseAttestation({ ...raw, cpus: undefined })).toThrow(/cpus/);
    expect(() => parseAttestation({ ...raw, mounts: 'x' })).toThrow(/mounts/);
    expect(() => parseAttestation(null)).toThrow();
  });
});

describe('attestation parsing helpers', () => {
  it('decodes /proc/mounts octal escapes and Latin-1 escaped bytes', () => {
    expect(decodeMountField('/workspace/my\\040repos')).toBe('/workspace/my repos');
    expect(decodeMountField('a\\134b')).toBe('a\\b');
    const facts = parseAttestation({ ...raw, mounts: ['mgr0 /w/caf\u00c3\u00a9 9p rw 0 0'] });
    expect(facts.mounts[0]!.target).toBe('/w/café');
  });

  it('reads percent-encoded labels from the command line', () => {
    expect(labelsFromCmdline('quiet mgr.labels=a=1,b%2Cc=x%20y mgr.user=0:0')).toEqual({ a: '1', 'b,c': 'x y' });
    expect(labelsFromCmdline('quiet')).toEqual({});
  });
});
