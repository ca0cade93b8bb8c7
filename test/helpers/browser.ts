import { describe, it } from 'vitest';
import { findChromium } from '../../src/core/render/browser.js';

/** The Chromium the browser tests use: DOCDEX_CHROMIUM, else chromium or chromium-browser on PATH. */
export const chromiumPath = findChromium(process.env.DOCDEX_CHROMIUM || undefined);

/**
 * `describe` for tests that need a real Chromium. Without one they are skipped, saying why, unless
 * DOCDEX_REQUIRE_BROWSER=1 (CI), where the missing browser is a failure.
 */
export function describeWithBrowser(name: string, body: () => void): void {
  if (chromiumPath) {
    describe(name, body);
    return;
  }
  if (process.env.DOCDEX_REQUIRE_BROWSER === '1') {
    describe(name, () => {
      it('has a Chromium to render with', () => {
        throw new Error('DOCDEX_REQUIRE_BROWSER=1 but no Chromium was found: install the chromium package or set DOCDEX_CHROMIUM.');
      });
    });
    return;
  }
  console.warn(`Skipping "${name}": no Chromium found (install the chromium package or set DOCDEX_CHROMIUM; DOCDEX_REQUIRE_BROWSER=1 makes this a failure).`);
  describe.skip(name, body);
}
