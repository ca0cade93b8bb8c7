import { afterAll, beforeAll, expect, it } from 'vitest';
import { RenderError } from '../../src/core/render/render.js';
import type { RenderRequest, Subrequest } from '../../src/core/render/render.js';
import { Renderer } from '../../src/core/render/renderer.js';
import { chromiumPath, describeWithBrowser } from '../helpers/browser.js';

/**
 * The renderer's thread with a real Chromium: a page's requests come back to the caller's fetchSubresource on
 * this thread, an aborted render rejects with its signal's reason, and closing fails what is in flight.
 */

const SHELL = `<!doctype html><html><head><title>Shell</title></head><body><div id="root"></div><script>
fetch('/data.txt').then((r) => r.text()).then((t) => { document.getElementById('root').textContent = 'drawn: ' + t; });
</script></body></html>`;

function request(overrides: Partial<RenderRequest> = {}): RenderRequest {
  return {
    url: 'http://docs.test/page',
    document: { status: 200, contentType: 'text/html', body: Buffer.from(SHELL) },
    fetchSubresource: async () => ({ status: 200, contentType: 'text/plain', body: Buffer.from('from the caller') }),
    userAgent: 'docdex-test',
    timeoutMs: 60_000,
    maxHtmlBytes: 1_000_000,
    ...overrides,
  };
}

describeWithBrowser('the render thread', () => {
  let renderer: Renderer;

  beforeAll(() => {
    renderer = new Renderer({ executable: chromiumPath!, maxPages: 2, launchTimeoutMs: 60_000 });
  });

  afterAll(async () => {
    await renderer?.close();
  });

  it("answers a page's requests through the caller's fetchSubresource", async () => {
    const asked: Subrequest[] = [];
    const page = await renderer.render(
      request({
        fetchSubresource: async (sub) => {
          asked.push(sub);
          return { status: 200, contentType: 'text/plain', body: Buffer.from('from the caller') };
        },
      }),
    );
    expect(page.html.toString()).toContain('drawn: from the caller');
    expect(asked).toEqual([{ url: 'http://docs.test/data.txt', topNavigation: false }]);
  }, 120_000);

  it("an aborted render rejects with its signal's reason, and the next one renders", async () => {
    const controller = new AbortController();
    const reason = new Error('worker stopping');
    const rendering = renderer.render(
      request({
        signal: controller.signal,
        // The page's data never comes: the render waits for it until the abort.
        fetchSubresource: (_sub, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true })),
      }),
    );
    setTimeout(() => controller.abort(reason), 500);
    await expect(rendering).rejects.toBe(reason);
    expect((await renderer.render(request())).html.toString()).toContain('drawn: from the caller');
  }, 120_000);

  it('closing fails the renders in flight and ends the thread; a later render starts a new one', async () => {
    const rendering = renderer.render(request({ fetchSubresource: () => new Promise(() => undefined) }));
    const failed = expect(rendering).rejects.toBeInstanceOf(RenderError);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await renderer.close();
    await failed;
    expect((await renderer.render(request())).html.toString()).toContain('drawn: from the caller');
  }, 120_000);
});
