import { accessSync, constants } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { ERROR_CODES } from '../errors.js';

/**
 * The one headless Chromium of a process: found on this machine (nothing is downloaded), launched on first
 * need in the render thread (renderer.ts), closed when the workers stop, with a bounded number of pages open
 * at once.
 *
 * What escapes the page's request routing (render.ts fulfils every request from Node, through the crawler's
 * outbound policy) must not reach the network: every host name resolves to nothing (`--host-resolver-rules`)
 * and every connection goes to a proxy that is a local port closing each connection it accepts, loopback
 * included (`<-loopback>`). Chromium keeps its own sandbox: as root it runs inside a user namespace created for
 * it (`unshare --user`, where it is an ordinary user), never with `--no-sandbox`.
 */

/** Names of the Chromium binary on PATH, in the order they are tried. */
const CHROMIUM_NAMES = ['chromium', 'chromium-browser'];

/** The hint of every "no browser" message: how to get one. */
export const BROWSER_HINT = ERROR_CODES.browser_unavailable.hint;

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable named `name` on `searchPath`, or null. */
function onPath(name: string, searchPath: string): string | null {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/**
 * The Chromium to use: `configured` (DOCDEX_CHROMIUM) when given and executable, else chromium or
 * chromium-browser on PATH; null when there is none. A configured path that is not executable is not
 * replaced by another one: the operator asked for that one.
 */
export function findChromium(configured: string | undefined, searchPath = process.env.PATH ?? ''): string | null {
  if (configured) return isExecutable(configured) ? configured : null;
  for (const name of CHROMIUM_NAMES) {
    const found = onPath(name, searchPath);
    if (found) return found;
  }
  return null;
}

export interface BrowserSettings {
  /** The Chromium binary (findChromium). */
  executable: string;
  /** Pages rendered at once by this process. */
  maxPages: number;
  /** Launching the browser, at most. */
  launchTimeoutMs: number;
}

/** A local port that accepts connections and closes them at once: the proxy anything unrouted is sent to. */
async function openSinkPort(): Promise<net.Server> {
  const server = net.createServer((socket) => socket.destroy());
  server.unref();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  return server;
}

/** As root, a wrapper that starts Chromium in a new user namespace as an ordinary user, so its sandbox holds. */
async function rootlessLauncher(executable: string): Promise<{ file: string; dir: string } | null> {
  if (process.getuid?.() !== 0) return null;
  const unshare = onPath('unshare', process.env.PATH ?? '/usr/bin:/bin');
  if (!unshare) throw new Error('running as root needs unshare(1) to give Chromium a user namespace for its sandbox');
  const dir = await mkdtemp(path.join(tmpdir(), 'docdex-chromium-'));
  const file = path.join(dir, 'chromium');
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  await writeFile(file, `#!/bin/sh\nexec ${quote(unshare)} --user --map-user=1000 --map-group=1000 -- ${quote(executable)} "$@"\n`, { mode: 0o700 });
  await chmod(file, 0o700);
  return { file, dir };
}

/** Counts pages open at once; waiters are served in order. */
class PageSlots {
  private used = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {}

  async take(): Promise<() => void> {
    if (this.used >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.used++;
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.used--;
    };
  }
}

/** The process's browser: `browser()` launches it once; `close()` ends it and its launcher files. */
export class BrowserHost {
  private launching: Promise<Browser> | null = null;
  private sink: net.Server | null = null;
  private launcherDir: string | null = null;
  private readonly slots: PageSlots;

  constructor(readonly settings: BrowserSettings) {
    this.slots = new PageSlots(Math.max(1, settings.maxPages));
  }

  /** Waits for a free page slot; call the returned function when the page is closed. */
  takePageSlot(): Promise<() => void> {
    return this.slots.take();
  }

  /** The running browser, launched on first call; a failed launch is retried on the next call. */
  browser(): Promise<Browser> {
    this.launching ??= this.launch().catch((error: unknown) => {
      this.launching = null;
      throw error;
    });
    return this.launching;
  }

  private async launch(): Promise<Browser> {
    const { chromium } = await import('playwright-core');
    this.sink ??= await openSinkPort();
    const sinkPort = (this.sink.address() as net.AddressInfo).port;
    const launcher = await rootlessLauncher(this.settings.executable);
    if (launcher) this.launcherDir = launcher.dir;
    const browser = await chromium.launch({
      executablePath: launcher?.file ?? this.settings.executable,
      headless: true,
      chromiumSandbox: true,
      timeout: this.settings.launchTimeoutMs,
      proxy: { server: `http://127.0.0.1:${sinkPort}`, bypass: '<-loopback>' },
      args: ['--host-resolver-rules=MAP * ~NOTFOUND', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-dev-shm-usage'],
    });
    browser.on('disconnected', () => {
      this.launching = null;
    });
    return browser;
  }

  async close(): Promise<void> {
    const launching = this.launching;
    this.launching = null;
    if (launching) await launching.then((b) => b.close()).catch(() => undefined);
    this.sink?.close();
    this.sink = null;
    if (this.launcherDir) await rm(this.launcherDir, { recursive: true, force: true });
    this.launcherDir = null;
  }
}
