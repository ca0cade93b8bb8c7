import { TMPFS_REQUIRED_OPTIONS } from './tmpfs.js';

/**
 * Attestation: before every reuse the runner asks the guest agent for live facts and compares them with the
 * wanted configuration (spec: "Before reuse the manager verifies image, resources, user, network policy,
 * mounts (including /tmp size and options) and labels"). The facts come from the running guest (uname,
 * /proc/self/mounts, /proc/iomem, /sys/class/net, the image's own reference file, a forked probe that drops
 * to the exec user), never from the runner's notes about what it started.
 */

export interface Mount {
  source: string;
  target: string;
  fstype: string;
  options: string[];
}

export interface LiveFacts {
  agent: string;
  kernelRelease: string;
  kernelVersion: string;
  hostname: string;
  bootId: string;
  cpus: number;
  memTotalKib: number;
  /** Sum of the "System RAM" ranges: the memory QEMU gave the guest, minus firmware holes of a few hundred KiB. */
  memRamKib: number;
  execUid: number;
  execGid: number;
  imageRef: string | null;
  labels: Record<string, string>;
  mounts: Mount[];
  interfaces: string[];
  uptimeMs: number;
  running: number;
}

export interface WantedVm {
  hostname: string;
  imageRef: string;
  cpus: number;
  memoryMib: number;
  execUser: { uid: number; gid: number };
  network: 'none';
  roots: readonly string[];
  tmpfsKib: number;
  labels: Readonly<Record<string, string>>;
}

export type AttestField = 'agent' | 'image' | 'cpus' | 'memory' | 'user' | 'network' | 'mounts' | 'tmpfs' | 'labels' | 'hostname';

export interface Mismatch {
  field: AttestField;
  want: string;
  got: string;
}

/** Labels every runner-managed VM carries; a VM without them is not ours to reuse. */
export const REQUIRED_LABELS: Readonly<Record<string, string>> = { 'mgr.managed': 'true' };

/** /proc/mounts escapes space, tab, newline and backslash as \ooo. Takes the field as a Latin-1 byte string. */
export function decodeMountField(field: string): string {
  const bytes: number[] = [];
  const raw = Buffer.from(field, 'latin1');
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] === 0x5c && i + 3 < raw.length && /^[0-7]{3}$/.test(raw.subarray(i + 1, i + 4).toString('latin1'))) {
      bytes.push(parseInt(raw.subarray(i + 1, i + 4).toString('latin1'), 8));
      i += 3;
    } else {
      bytes.push(raw[i]!);
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

export function parseMountLine(line: string): Mount | undefined {
  const parts = line.split(' ');
  if (parts.length < 4) return undefined;
  return {
    source: decodeMountField(parts[0]!),
    target: decodeMountField(parts[1]!),
    fstype: parts[2]!,
    options: parts[3]!.split(','),
  };
}

function pctDecode(value: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < value.length; i++) {
    const hex = value.slice(i + 1, i + 3);
    if (value[i] === '%' && /^[0-9A-Fa-f]{2}$/.test(hex)) {
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(value[i]!, 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** Labels live on the guest kernel command line (`mgr.labels=k=v,...`, percent-encoded), which nothing in the guest can change. */
export function labelsFromCmdline(cmdline: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const word of cmdline.split(/\s+/)) {
    if (!word.startsWith('mgr.labels=')) continue;
    for (const pair of word.slice('mgr.labels='.length).split(',')) {
      const at = pair.indexOf('=');
      if (at > 0) labels[pctDecode(pair.slice(0, at))] = pctDecode(pair.slice(at + 1));
    }
  }
  return labels;
}

/** The agent escapes bytes >= 0x80 as \u00XX; turn such strings back into the bytes they were, read as UTF-8. */
function latin1ToUtf8(s: string): string {
  return Buffer.from(s, 'latin1').toString('utf8');
}

export function parseAttestation(raw: unknown): LiveFacts {
  if (typeof raw !== 'object' || raw === null) throw new Error('attestation is not an object');
  const r = raw as Record<string, unknown>;
  const num = (k: string): number => {
    const v = r[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new Error(`attestation field ${k} is missing`);
    return v;
  };
  const text = (k: string): string => {
    const v = r[k];
    if (typeof v !== 'string') throw new Error(`attestation field ${k} is missing`);
    return latin1ToUtf8(v);
  };
  // Mount lines stay as Latin-1 "byte strings" here: decodeMountField undoes the octal escapes on bytes first.
  const rawList = (k: string): string[] => {
    const v = r[k];
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw new Error(`attestation field ${k} is missing`);
    return v as string[];
  };
  const list = (k: string): string[] => rawList(k).map(latin1ToUtf8);
  const imageRef = r.image_ref === null ? null : text('image_ref');
  return {
    agent: text('agent'),
    kernelRelease: text('kernel_release'),
    kernelVersion: text('kernel_version'),
    hostname: text('hostname'),
    bootId: text('boot_id'),
    cpus: num('cpus'),
    memTotalKib: num('mem_total_kib'),
    memRamKib: num('mem_ram_kib'),
    execUid: num('exec_uid'),
    execGid: num('exec_gid'),
    imageRef,
    labels: labelsFromCmdline(text('cmdline')),
    mounts: rawList('mounts')
      .map(parseMountLine)
      .filter((m): m is Mount => m !== undefined),
    interfaces: list('interfaces').sort(),
    uptimeMs: num('uptime_ms'),
    running: num('running'),
  };
}

/** Memory check tolerance: firmware holes take a few hundred KiB of the configured size. */
export function memoryMatches(wantMib: number, ramKib: number): boolean {
  const want = wantMib * 1024;
  const slack = Math.max(4096, Math.round(want * 0.01));
  return ramKib <= want && ramKib >= want - slack;
}

/** The effective mount at a path is the last one listed there (later mounts cover earlier ones). */
function mountAt(mounts: readonly Mount[], target: string): Mount | undefined {
  return mounts.filter((m) => m.target === target).at(-1);
}

function describeMount(m: Mount | undefined): string {
  return m ? `${m.fstype} ${m.source} (${m.options.join(',')})` : 'not mounted';
}

export function compareAttestation(want: WantedVm, live: LiveFacts): Mismatch[] {
  const out: Mismatch[] = [];
  if (!live.agent.startsWith('mgr-agent/')) out.push({ field: 'agent', want: 'mgr-agent/*', got: live.agent });
  if (live.hostname !== want.hostname) out.push({ field: 'hostname', want: want.hostname, got: live.hostname });
  if (live.imageRef !== want.imageRef) out.push({ field: 'image', want: want.imageRef, got: live.imageRef ?? 'no reference file' });
  if (live.cpus !== want.cpus) out.push({ field: 'cpus', want: String(want.cpus), got: String(live.cpus) });
  if (!memoryMatches(want.memoryMib, live.memRamKib)) {
    out.push({ field: 'memory', want: `${want.memoryMib} MiB`, got: `${(live.memRamKib / 1024).toFixed(1)} MiB` });
  }
  if (live.execUid !== want.execUser.uid || live.execGid !== want.execUser.gid) {
    out.push({ field: 'user', want: `${want.execUser.uid}:${want.execUser.gid}`, got: `${live.execUid}:${live.execGid}` });
  }
  const foreign = live.interfaces.filter((i) => i !== 'lo');
  if (want.network === 'none' && foreign.length > 0) out.push({ field: 'network', want: 'none (lo only)', got: live.interfaces.join(',') });

  for (const root of want.roots) {
    const m = mountAt(live.mounts, root);
    if (!m || m.fstype !== '9p' || !m.options.includes('rw')) out.push({ field: 'mounts', want: `${root}: 9p rw`, got: `${root}: ${describeMount(m)}` });
  }
  const extraShares = live.mounts.filter((m) => m.fstype === '9p' && !want.roots.includes(m.target));
  for (const m of extraShares) out.push({ field: 'mounts', want: `only ${want.roots.join(' and ')} shared`, got: `${m.target}: ${describeMount(m)}` });

  const tmp = mountAt(live.mounts, '/tmp');
  const wantedTmp = [...TMPFS_REQUIRED_OPTIONS, `size=${want.tmpfsKib}k`];
  if (!tmp || tmp.fstype !== 'tmpfs' || wantedTmp.some((o) => !tmp.options.includes(o))) {
    out.push({ field: 'tmpfs', want: `/tmp: tmpfs (${wantedTmp.join(',')})`, got: `/tmp: ${describeMount(tmp)}` });
  }
  // The runtime-owned /tmp is the only tmpfs allowed (spec: MicroVM scope); ramfs is the same thing unbounded.
  for (const m of live.mounts) {
    if ((m.fstype === 'tmpfs' || m.fstype === 'ramfs') && m.target !== '/tmp') out.push({ field: 'tmpfs', want: 'no tmpfs besides /tmp', got: `${m.target}: ${describeMount(m)}` });
  }

  const wantedLabels = { ...REQUIRED_LABELS, ...want.labels };
  for (const [k, v] of Object.entries(wantedLabels)) {
    if (live.labels[k] !== v) out.push({ field: 'labels', want: `${k}=${v}`, got: live.labels[k] === undefined ? `${k} absent` : `${k}=${live.labels[k]}` });
  }
  return out;
}

export function describeMismatches(mismatches: readonly Mismatch[]): string {
  return mismatches.map((m) => `${m.field}: want ${m.want}, got ${m.got}`).join('; ');
}
