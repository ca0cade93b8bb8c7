// Worker threads started by path (the extraction pool's, the renderer's). Built (dist/), a thread's entry and
// what it loads are JavaScript. Run from the TypeScript sources (tests import src/ through vitest, whose
// transforms a worker thread does not get), Node loads the entry by stripping its types, and the entry calls
// `loadSourcesInThread` first, so that `./x.js` imports resolve to `./x.ts` and .ts files are transformed (the
// sources use TypeScript-only syntax that type stripping alone refuses). This file imports only node:
// modules, so a thread can load it before the hooks exist.
import { readFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The entry file `name` (without extension) next to the module at `metaUrl`: thread.js from dist/, thread.ts from the sources. */
export function threadEntry(metaUrl: string, name: string): string {
  return fileURLToPath(new URL(metaUrl.endsWith('.ts') ? `./${name}.ts` : `./${name}.js`, metaUrl));
}

/** In a thread started from the TypeScript sources: lets it import them. */
export function loadSourcesInThread(): void {
  registerHooks({
    resolve(specifier, context, nextResolve) {
      try {
        return nextResolve(specifier, context);
      } catch (error) {
        if (!specifier.startsWith('.') || !specifier.endsWith('.js') || !context.parentURL?.endsWith('.ts')) throw error;
        return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
      }
    },
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
      const source = stripTypeScriptTypes(readFileSync(fileURLToPath(url), 'utf8'), { mode: 'transform' });
      return { format: 'module', source, shortCircuit: true };
    },
  });
}
