/**
 * The guest /tmp is the only tmpfs in the microVM (spec: MicroVM scope): one quarter of the VM memory,
 * clamped to 1-512 MiB. Computed in KiB so small VMs keep the exact quarter (a 6 MiB VM gets 1536 KiB, not a
 * rounded 1 MiB); every value is a multiple of 256 KiB, so the kernel reports it back unchanged.
 */
export const TMPFS_MIN_KIB = 1024;
export const TMPFS_MAX_KIB = 512 * 1024;

export function tmpfsSizeKib(memoryMib: number): number {
  if (!Number.isInteger(memoryMib) || memoryMib <= 0) throw new RangeError(`memory must be a positive whole number of MiB, got ${memoryMib}`);
  const quarter = memoryMib * 256; // (memoryMib * 1024) / 4
  return Math.min(TMPFS_MAX_KIB, Math.max(TMPFS_MIN_KIB, quarter));
}

/** The mount options the guest init uses for /tmp, and attestation expects to read back. */
export const TMPFS_REQUIRED_OPTIONS = ['rw', 'nosuid', 'nodev'] as const;
