// Turning a response body into text. Byte bodies are decoded with the charset the
// server declared, else a byte-order mark, else a <meta charset> / XML
// declaration near the top, else UTF-8. Decoding never fails: unknown labels fall
// back to UTF-8 and invalid bytes become U+FFFD (TextDecoder, fatal: false).
import { hash } from 'node:crypto';

const SNIFF_BYTES = 4096;

// ES2024 string methods (Node 20+); the project's lib setting is ES2023.
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

export function charsetFromContentType(contentType: string | null | undefined): string | null {
  if (!contentType) return null;
  const m = /charset\s*=\s*["']?([\w:.+-]+)/i.exec(contentType);
  return m?.[1] ?? null;
}

function sniffCharset(bytes: Uint8Array): string | null {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, SNIFF_BYTES)).toString('latin1');
  const meta = /<meta[^>]+charset\s*=\s*["']?\s*([\w:.+-]+)/i.exec(head) ?? /<\?xml[^>]+encoding\s*=\s*["']([\w:.+-]+)/i.exec(head);
  return meta?.[1] ?? null;
}

// WHATWG maps all these labels to windows-1252. Node's TextDecoder (24.x)
// decodes windows-1252 as ISO-8859-1, turning curly quotes into C1 controls,
// so we decode as latin1 and map the 0x80-0x9F range ourselves.
const WINDOWS_1252_LABELS = new Set([
  'windows-1252',
  'cp1252',
  'x-cp1252',
  'latin1',
  'iso-8859-1',
  'iso8859-1',
  'iso88591',
  'iso_8859-1',
  'iso_8859-1:1987',
  'l1',
  'ibm819',
  'cp819',
  'csisolatin1',
  'iso-ir-100',
  'ascii',
  'us-ascii',
  'ansi_x3.4-1968',
]);
const CP1252_HIGH = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122,
  0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function decodeWindows1252(bytes: Uint8Array): string {
  const latin = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return latin.replace(/[\x80-\x9f]/g, (c) => String.fromCharCode(CP1252_HIGH[c.charCodeAt(0) - 0x80] as number));
}

const UTF8_LABEL = /^(?:utf-?8|unicode-1-1-utf-8)$/i;

function decodeWith(label: string, bytes: Uint8Array): string | null {
  if (WINDOWS_1252_LABELS.has(label.trim().toLowerCase())) return decodeWindows1252(bytes);
  // Buffer's UTF-8 decoder (simdutf) is several times faster than TextDecoder's
  // and also turns invalid sequences into U+FFFD.
  if (UTF8_LABEL.test(label.trim())) {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }
  try {
    return new TextDecoder(label, { fatal: false }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Whether decodeWith(label) yields text that is well-formed by construction
 * and holds a NUL exactly where the bytes hold 0x00 (UTF-8 via Buffer,
 * windows-1252): the two scans over the whole text can then be skipped.
 */
function isByteFaithful(label: string): boolean {
  return WINDOWS_1252_LABELS.has(label.trim().toLowerCase()) || UTF8_LABEL.test(label.trim());
}

/** Text of the body, with NUL characters removed and lone surrogates repaired. */
export function decodeBody(body: string | Uint8Array, contentType?: string | null): string {
  let text: string;
  let faithful = false;
  if (typeof body === 'string') {
    text = body;
  } else {
    const declared = charsetFromContentType(contentType);
    const sniffed = declared === null ? sniffCharset(body) : null;
    // UTF-16 declared in a <meta> of an ASCII-compatible document is a lie (HTML spec).
    const label = declared ?? (sniffed !== null && /^utf-?16/i.test(sniffed) && body[0] !== 0xfe && body[0] !== 0xff ? 'utf-8' : sniffed) ?? 'utf-8';
    const decoded = decodeWith(label, body);
    if (decoded !== null) {
      text = decoded;
      faithful = isByteFaithful(label);
    } else {
      text = decodeWith('utf-8', body) ?? '';
      faithful = true;
    }
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // NUL cannot be stored in a PostgreSQL text column and means nothing in a document.
  if (faithful ? (body as Uint8Array).indexOf(0) !== -1 : text.includes('\0')) text = text.replace(/\0/g, '');
  if (!faithful) {
    const wf = text as unknown as WellFormed;
    if (!wf.isWellFormed()) text = wf.toWellFormed();
  }
  return text;
}

export function md5Hex(data: string | Uint8Array): string {
  // The one-shot crypto.hash (Node 21.7+) skips creating a Hash object per call:
  // a page with a hundred snippets hashes a hundred times.
  return hash('md5', data, 'hex');
}

/**
 * A copy of `s` that does not keep a larger string alive. V8 represents a slice
 * of 13+ characters as a view into its parent, so a slice cached across pages
 * (class names, tag names) would pin the whole page it came from.
 */
export function detach(s: string): string {
  return /[\u0100-\uffff]/.test(s) ? Buffer.from(s, 'utf16le').toString('utf16le') : Buffer.from(s, 'latin1').toString('latin1');
}
