// The worker thread's side of the extraction pool: one document in, its extraction out.
//
// Built (dist/), this file and the extractor are JavaScript. Run from the TypeScript sources (tests
// import src/ through vitest, whose transforms a worker thread does not get), Node loads this file by
// stripping its types; the hooks below then let it load the extractor's sources too: `./x.js` imports
// resolve to `./x.ts`, and .ts files are transformed (the extractor uses TypeScript-only syntax that
// type stripping alone refuses).
import { readFileSync } from 'node:fs';
import { registerHooks, stripTypeScriptTypes } from 'node:module';
import { fileURLToPath } from 'node:url';

if (import.meta.url.endsWith('.ts')) {
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

const { extractDocument } = await import('../extract/index.js');

/** A task is an ExtractInput; `null` only loads the extractor (the pool warms a new thread with it). */
export default function extract(input: Parameters<typeof extractDocument>[0] | null): ReturnType<typeof extractDocument> | null {
  return input === null ? null : extractDocument(input);
}
