import { describe, expect, it } from 'vitest';
import { TMPFS_MAX_KIB, TMPFS_MIN_KIB, tmpfsSizeKib } from '../../src/core/sandbox/tmpfs.js';

describe('the /tmp size formula (a quarter of VM memory, clamped to 1-512 MiB)', () => {
  it('is a quarter of memory between the clamps', () => {
    expect(tmpfsSizeKib(256)).toBe(64 * 1024);
    expect(tmpfsSizeKib(1024)).toBe(256 * 1024);
    expect(tmpfsSizeKib(6)).toBe(1536); // exact quarter, not rounded to whole MiB
  });

  it('clamps at 1 MiB below 4 MiB of memory', () => {
    expect(tmpfsSizeKib(1)).toBe(TMPFS_MIN_KIB);
    expect(tmpfsSizeKib(3)).toBe(TMPFS_MIN_KIB);
    expect(tmpfsSizeKib(4)).toBe(1024);
    expect(tmpfsSizeKib(5)).toBe(1280);
  });

  it('clamps at 512 MiB from 2 GiB of memory up', () => {
    expect(tmpfsSizeKib(2047)).toBe(2047 * 256);
    expect(tmpfsSizeKib(2048)).toBe(TMPFS_MAX_KIB);
    expect(tmpfsSizeKib(2049)).toBe(TMPFS_MAX_KIB);
    expect(tmpfsSizeKib(65536)).toBe(TMPFS_MAX_KIB);
  });

  it('always yields a multiple of 4 KiB pages, so the kernel reports the size back unchanged', () => {
    for (let m = 1; m <= 4096; m++) expect(tmpfsSizeKib(m) % 4).toBe(0);
  });

  it('rejects memory that is not a positive whole number of MiB', () => {
    expect(() => tmpfsSizeKib(0)).toThrow(RangeError);
    expect(() => tmpfsSizeKib(-1)).toThrow(RangeError);
    expect(() => tmpfsSizeKib(1.5)).toThrow(RangeError);
  });
});
