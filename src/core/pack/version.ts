import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** docdex's own version, for the manifest. src/core/pack and dist/core/pack are three levels below package.json. */
export function docdexVersion(): string {
  cached ??= (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  return cached;
}
