import { UserError } from '../errors.js';
import { PACK_FORMAT, PACK_FORMAT_MAJOR, manifestSchema } from './format.js';
import type { PackManifest } from './format.js';

function invalid(message: string): UserError {
  return new UserError(message, { code: 'pack_invalid' });
}

/** The format version's major number, read before the rest of the manifest: a newer major may change its shape. */
function checkVersion(value: Record<string, unknown>): void {
  const version = typeof value.formatVersion === 'string' ? value.formatVersion : '';
  const match = /^([0-9]{1,4})\.([0-9]{1,4})$/.exec(version);
  if (!match) throw invalid('The pack manifest has no valid formatVersion.');
  if (Number(match[1]) > PACK_FORMAT_MAJOR) {
    throw new UserError(`This pack is format ${version}; this docdex reads format ${PACK_FORMAT_MAJOR}.x and older.`, { code: 'pack_version_unsupported' });
  }
}

/** manifest.json checked: its format, its version first, then its shape, folder order and total size. */
export function parseManifest(bytes: Buffer, maxBytes: number): PackManifest {
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid('The pack manifest is not JSON.');
  }
  if (typeof value !== 'object' || value === null || (value as Record<string, unknown>).format !== PACK_FORMAT) throw invalid('This is not a docdex pack: its manifest does not say docdex-pack.');
  checkVersion(value as Record<string, unknown>);
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw invalid(`The pack manifest is invalid: ${issue.path.map(String).join('.') || '(manifest)'}: ${issue.message}.`);
  }
  const manifest = parsed.data;
  let total = 0;
  for (const [index, library] of manifest.libraries.entries()) {
    if (library.folder !== `libraries/${index}`) throw invalid(`The pack manifest lists library ${index} in ${library.folder}, expected libraries/${index}.`);
    total += Object.values(library.parts).reduce((sum, part) => sum + part.bytes, 0);
  }
  if (total > maxBytes) throw new UserError(`The pack's parts add up to ${total} bytes, over the limit of ${maxBytes}.`, { code: 'pack_too_large' });
  return manifest;
}
