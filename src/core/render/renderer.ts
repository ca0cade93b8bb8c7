import { Worker } from 'node:worker_threads';
import { threadEntry } from '../threads.js';
import type { BrowserSettings } from './browser.js';
import { RenderError } from './render.js';
import type { RenderedPage, RenderRequest, Resource, Subrequest } from './render.js';

/**
 * The process's renderer: the browser lives in a worker thread of its own (thread.ts), started on the first
 * render. Loading Playwright compiles megabytes of JavaScript, and driving a browser parses every protocol
 * message; on the thread that answers requests that held `docdex serve`'s /health for seconds (issue 48). The
 * thread asks back here for every request a page makes, so what a page may reach is still decided by the
 * caller's `fetchSubresource`, through the crawler's one fetcher and outbound policy.
 */

/** A render as the thread gets it: everything but the callbacks, which stay here. */
export type ThreadRenderRequest = Omit<RenderRequest, 'fetchSubresource' | 'signal'>;

/** Messages to the render thread. */
export type ToRenderThread =
  { type: 'render'; id: number; request: ThreadRenderRequest } | { type: 'abort'; id: number } | { type: 'answer'; ask: number; resource: Resource | null } | { type: 'close' };

/** Messages from the render thread. */
export type FromRenderThread =
  | { type: 'fetch'; id: number; ask: number; request: Subrequest }
  | { type: 'cancel-fetch'; ask: number }
  | { type: 'rendered'; id: number; html: Uint8Array; hashRoutes: string[] }
  | { type: 'failed'; id: number; message: string; kind: 'render' | 'aborted' | 'error' }
  | { type: 'closed' };

/** A Buffer that crossed a thread arrives as a Uint8Array: the same bytes as a Buffer again, without a copy. */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

interface PendingRender {
  /** The thread rendering it. */
  worker: Worker;
  request: RenderRequest;
  resolve(page: RenderedPage): void;
  reject(error: unknown): void;
  /** The page's requests being fetched here, by the thread's number for them. */
  fetches: Map<number, AbortController>;
}

/** How long a closing thread may take to close its browser before it is terminated. */
const CLOSE_GRACE_MS = 10_000;

export class Renderer {
  private worker: Worker | null = null;
  private readonly renders = new Map<number, PendingRender>();
  private nextId = 0;

  constructor(readonly settings: BrowserSettings) {}

  /** Renders `request.url` in the thread; rejects like renderPage (RenderError, or the signal's reason when it aborts). */
  render(request: RenderRequest): Promise<RenderedPage> {
    request.signal?.throwIfAborted();
    const worker = this.started();
    const id = this.nextId++;
    const { fetchSubresource: _fetch, signal, ...rest } = request;
    return new Promise<RenderedPage>((resolve, reject) => {
      const onAbort = () => worker.postMessage({ type: 'abort', id } satisfies ToRenderThread);
      signal?.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        signal?.removeEventListener('abort', onAbort);
        for (const fetch of this.renders.get(id)?.fetches.values() ?? []) fetch.abort();
        this.renders.delete(id);
        // An idle thread does not keep the process alive; one rendering does.
        if (![...this.renders.values()].some((p) => p.worker === worker)) worker.unref();
      };
      this.renders.set(id, {
        worker,
        request,
        resolve(page) {
          settle();
          resolve(page);
        },
        reject(error) {
          settle();
          reject(error);
        },
        fetches: new Map(),
      });
      worker.ref();
      worker.postMessage({ type: 'render', id, request: rest } satisfies ToRenderThread);
    });
  }

  /** Closes the browser and ends the thread; renders in flight fail. */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    this.worker = null;
    this.failAll(worker, new RenderError('render failed: the renderer is closing'));
    worker.ref();
    // The thread closes its browser and says so; one that has not within the grace is ended all the same.
    await new Promise<void>((resolve) => {
      let grace: NodeJS.Timeout | undefined = undefined;
      const done = () => {
        clearTimeout(grace);
        resolve();
      };
      grace = setTimeout(done, CLOSE_GRACE_MS);
      worker.on('message', (message: FromRenderThread) => {
        if (message.type === 'closed') done();
      });
      worker.once('exit', done);
      worker.postMessage({ type: 'close' } satisfies ToRenderThread);
    });
    await worker.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(threadEntry(import.meta.url, 'thread'), { workerData: this.settings, stdout: false, stderr: false });
    worker.unref();
    worker.on('message', (message: FromRenderThread) => this.onMessage(worker, message));
    // A thread that dies fails its renders; the next render starts a new one.
    const lost = (reason: string) => {
      if (this.worker === worker) this.worker = null;
      this.failAll(worker, new RenderError(`render failed: ${reason}`));
    };
    worker.on('error', (error) => lost(`the browser thread failed: ${error.message.split('\n')[0]}`));
    worker.on('exit', () => lost('the browser thread stopped'));
    this.worker = worker;
    return worker;
  }

  private failAll(worker: Worker, error: Error): void {
    for (const pending of [...this.renders.values()]) if (pending.worker === worker) pending.reject(error);
  }

  private onMessage(worker: Worker, message: FromRenderThread): void {
    if (message.type === 'closed') return; // close() waits for it
    if (message.type === 'cancel-fetch') {
      for (const pending of this.renders.values()) pending.fetches.get(message.ask)?.abort();
      return;
    }
    const pending = this.renders.get(message.id);
    if (!pending) return;
    if (message.type === 'fetch') return void this.fetchFor(worker, pending, message.ask, message.request);
    if (message.type === 'rendered') return pending.resolve({ html: asBuffer(message.html), hashRoutes: message.hashRoutes });
    const signal = pending.request.signal;
    if (message.kind === 'aborted' && signal?.aborted) return pending.reject(signal.reason);
    pending.reject(message.kind === 'render' ? new RenderError(message.message) : new Error(message.message));
  }

  /** One request of a page, answered through the caller's fetchSubresource (null when it fails). */
  private async fetchFor(worker: Worker, pending: PendingRender, ask: number, request: Subrequest): Promise<void> {
    const controller = new AbortController();
    pending.fetches.set(ask, controller);
    const signal = pending.request.signal ? AbortSignal.any([pending.request.signal, controller.signal]) : controller.signal;
    const resource = await pending.request.fetchSubresource(request, signal).catch(() => null);
    pending.fetches.delete(ask);
    if (!controller.signal.aborted) worker.postMessage({ type: 'answer', ask, resource } satisfies ToRenderThread);
  }
}
