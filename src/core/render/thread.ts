// The render thread (renderer.ts): the process's one browser, loaded and driven here, off the thread that
// answers requests. Each page's requests are asked back to the main thread, which fetches them under the
// crawl's outbound policy; a page the main thread gives up on is aborted here. From the TypeScript sources
// (vitest) it loads them through module hooks first (core/threads.ts).
import { parentPort, workerData } from 'node:worker_threads';
import type { BrowserSettings } from './browser.js';
import type { Resource, Subrequest } from './render.js';
import type { FromRenderThread, ThreadRenderRequest, ToRenderThread } from './renderer.js';
import type * as Threads from '../threads.js';

if (import.meta.url.endsWith('.ts')) {
  const threads: string = '../threads.ts';
  ((await import(threads)) as typeof Threads).loadSourcesInThread();
}

const { BrowserHost } = await import('./browser.js');
const { RenderError, renderPage } = await import('./render.js');
const { asBuffer } = await import('./renderer.js');

const port = parentPort!;
const host = new BrowserHost(workerData as BrowserSettings);
const renders = new Map<number, AbortController>();
const asks = new Map<number, (resource: Resource | null) => void>();
let nextAsk = 0;

function send(message: FromRenderThread): void {
  port.postMessage(message);
}

/** One request of page `id`, answered by the main thread; null when refused, failed or no longer wanted. */
function ask(id: number, request: Subrequest, signal: AbortSignal): Promise<Resource | null> {
  if (signal.aborted) return Promise.resolve(null);
  const n = nextAsk++;
  return new Promise((resolve) => {
    const onAbort = () => {
      asks.delete(n);
      send({ type: 'cancel-fetch', ask: n });
      resolve(null);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    asks.set(n, (resource) => {
      signal.removeEventListener('abort', onAbort);
      asks.delete(n);
      resolve(resource && { ...resource, body: asBuffer(resource.body) });
    });
    send({ type: 'fetch', id, ask: n, request });
  });
}

async function render(id: number, request: ThreadRenderRequest): Promise<void> {
  const controller = new AbortController();
  renders.set(id, controller);
  try {
    const document = { ...request.document, body: asBuffer(request.document.body) };
    const page = await renderPage(host, { ...request, document, fetchSubresource: (sub, signal) => ask(id, sub, signal), signal: controller.signal });
    send({ type: 'rendered', id, html: page.html, hashRoutes: page.hashRoutes });
  } catch (error) {
    const kind = controller.signal.aborted ? 'aborted' : error instanceof RenderError ? 'render' : 'error';
    send({ type: 'failed', id, kind, message: error instanceof Error ? error.message : String(error) });
  } finally {
    renders.delete(id);
  }
}

port.on('message', (message: ToRenderThread) => {
  switch (message.type) {
    case 'render':
      void render(message.id, message.request);
      break;
    case 'abort':
      renders.get(message.id)?.abort(new Error('render aborted'));
      break;
    case 'answer':
      asks.get(message.ask)?.(message.resource);
      break;
    case 'close':
      for (const controller of renders.values()) controller.abort(new Error('renderer closing'));
      // The main thread ends this thread once told, whatever Playwright still holds open.
      void host.close().finally(() => send({ type: 'closed' }));
      break;
  }
});
