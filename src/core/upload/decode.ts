// The text of an uploaded or checked-out file: UTF-8, no NUL bytes, within the size limit of one file.

// Documentation pages are kilobytes; 10 MB is far beyond any hand-written page and keeps a mistaken upload
// (a log, a data dump) from filling the database or a worker's memory.
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

/**
 * The text of a file body, or why it cannot be one. Binary is a NUL byte in the first 8 KB (what git and grep
 * use); invalid UTF-8 is reported with the byte offset so the user can find it.
 */
export function decodeUpload(bytes: Uint8Array): { text: string } | { error: string } {
  if (bytes.byteLength > MAX_FILE_BYTES) {
    return { error: `file is ${(bytes.byteLength / 1024 / 1024).toFixed(1)} MB; the limit is ${MAX_FILE_BYTES / 1024 / 1024} MB per file` };
  }
  const head = bytes.subarray(0, 8192);
  if (head.includes(0)) return { error: 'binary content (contains NUL bytes); upload text files only' };
  try {
    const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    if (text.includes('\u0000')) return { error: 'binary content (contains NUL bytes); upload text files only' };
    return { text };
  } catch {
    return { error: `not valid UTF-8 (first bad byte at offset ${firstInvalidUtf8(bytes)}); convert the file to UTF-8` };
  }
}

function firstInvalidUtf8(bytes: Uint8Array): number {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i]!;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : -1;
    if (need < 0) return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return i;
}
