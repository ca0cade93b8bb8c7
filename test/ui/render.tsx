import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { render as inkRender } from 'ink';
import type { ReactElement } from 'react';
import { DashboardProvider } from '../../src/ui/data/context.js';
import type { DashboardData } from '../../src/ui/data/types.js';
import { createFakeData } from './fixtures.js';

/** A terminal of a chosen size that records every frame; `resize()` behaves like a real SIGWINCH. */
class TestStdout extends EventEmitter {
  frames: string[] = [];
  constructor(
    public columns: number,
    public rows: number,
  ) {
    super();
  }
  // Ink waits for write callbacks before it reports the app as exited.
  write = (frame: string, callback?: unknown): boolean => {
    this.frames.push(frame);
    if (typeof callback === 'function') queueMicrotask(() => (callback as () => void)());
    return true;
  };
  resize(columns: number, rows: number): void {
    this.columns = columns;
    this.rows = rows;
    this.emit('resize');
  }
}

class TestStdin extends EventEmitter {
  isTTY = true;
  private chunk: string | null = null;
  setEncoding(): void {}
  setRawMode(): void {}
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read = (): string | null => {
    const c = this.chunk;
    this.chunk = null;
    return c;
  };
  write(data: string): void {
    this.chunk = data;
    this.emit('readable');
    this.emit('data', data);
  }
}

export const KEYS = {
  up: '\u001B[A',
  down: '\u001B[B',
  right: '\u001B[C',
  left: '\u001B[D',
  enter: '\r',
  escape: '\u001B',
  tab: '\t',
  backspace: '\u007F',
  ctrlC: '\u0003',
  pageDown: '\u001B[6~',
} as const;

export interface RenderOptions {
  data?: DashboardData;
  columns?: number;
  rows?: number;
  now?: () => number;
  retry?: { baseMs: number; maxMs: number };
}

/**
 * Renders a component the way the dashboard does (inside DashboardProvider, at a terminal size) and returns
 * the last frame plus ways to type and resize. Without `data`, fixtures stand in for the database.
 */
export function renderWithProviders(node: ReactElement, options: RenderOptions = {}) {
  const stdout = new TestStdout(options.columns ?? 80, options.rows ?? 24);
  const stdin = new TestStdin();
  const stderr = new TestStdout(80, 24);
  const data = options.data ?? createFakeData();
  const instance = inkRender(
    <DashboardProvider data={data} now={options.now ?? (() => FIXED_NOW)} retry={options.retry ?? { baseMs: 20, maxMs: 50 }}>
      {node}
    </DashboardProvider>,
    {
      stdout: stdout as unknown as NodeJS.WriteStream,
      stdin: stdin as unknown as NodeJS.ReadStream,
      stderr: stderr as unknown as NodeJS.WriteStream,
      debug: true,
      exitOnCtrlC: false,
      patchConsole: false,
      interactive: false,
    },
  );
  const rawFrame = (): string => stdout.frames.at(-1) ?? '';
  // Assertions read the text; colour and inverse are checked on rawFrame() where they matter.
  const lastFrame = (): string => stripVTControlCharacters(rawFrame());
  return {
    lastFrame,
    rawFrame,
    frames: stdout.frames,
    /** Types keys one chunk at a time, letting the UI re-render in between like a person typing. */
    async type(...chunks: string[]): Promise<void> {
      for (const chunk of chunks) {
        stdin.write(chunk);
        await tick();
      }
    },
    resize: (columns: number, rows: number) => stdout.resize(columns, rows),
    unmount: () => instance.unmount(),
    instance,
    data,
  };
}

export const FIXED_NOW = Date.parse('2025-06-01T12:00:00Z');

export function tick(ms = 15): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Lines of a frame with trailing spaces removed, for exact assertions. */
export function lines(frame: string): string[] {
  return frame.split('\n').map((l) => l.trimEnd());
}
