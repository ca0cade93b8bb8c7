// Turning a response body into text. Byte bodies are decoded with the charset the
// server declared, else a byte-order mark, else a <meta charset> / XML
// declaration near the top, else UTF-8. Decoding never fails: unknown labels fall
// back to UTF-8 and invalid bytes become U+FFFD (TextDecoder, fatal: false).
import { createHash } from 'node:crypto';

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
  const meta =
    /<meta[^>]+charset\s*=\s*["']?\s*([\w:.+-]+)/i.exec(head) ?? /<\?xml[^>]+encoding\s*=\s*["']([\w:.+-]+)/i.exec(head);
  return meta?.[1] ?? null;
}

function decodeWith(label: string, bytes: Uint8Array): string | null {
  // Buffer's UTF-8 decoder (simdutf) is several times faster than TextDecoder's
  // and also turns invalid sequences into U+FFFD.
  if (/^(?:utf-?8|unicode-1-1-utf-8)$/i.test(label.trim())) {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }
  try {
    return new TextDecoder(label, { fatal: false }).decode(bytes);
  } catch {
    return null;
  }
}

/** Text of the body, with NUL characters removed and lone surrogates repaired. */
export function decodeBody(body: string | Uint8Array, contentType?: string | null): string {
  let text: string;
  if (typeof body === 'string') {
    text = body;
  } else {
    const declared = charsetFromContentType(contentType);
    const sniffed = declared === null ? sniffCharset(body) : null;
    // UTF-16 declared in a <meta> of an ASCII-compatible document is a lie (HTML spec).
    const label = declared ?? (sniffed !== null && /^utf-?16/i.test(sniffed) && body[0] !== 0xfe && body[0] !== 0xff ? 'utf-8' : sniffed) ?? 'utf-8';
    text = decodeWith(label, body) ?? decodeWith('utf-8', body) ?? '';
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  // NUL cannot be stored in a PostgreSQL text column and means nothing in a document.
  if (text.includes('\0')) text = text.replace(/\0/g, '');
  const wf = text as unknown as WellFormed;
  if (!wf.isWellFormed()) text = wf.toWellFormed();
  return text;
}

export function md5Hex(data: string | Uint8Array): string {
  return createHash('md5').update(data).digest('hex');
}
