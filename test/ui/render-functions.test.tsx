import { EventEmitter } from 'node:events';
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { renderLiveJob } from '../../src/ui/live-job.js';
import { renderDashboard, renderJobProgress } from '../../src/ui/render.js';
import { createFakeData, job } from './fixtures.js';
import { tick } from './render.js';

/** A TTY-like stream that records what reaches the terminal. */
class FakeTerminal extends EventEmitter {
  isTTY = true;
  columns = 80;
  rows = 24;
  output = '';
  write(chunk: string, callback?: unknown): boolean {
    this.output += chunk;
    if (typeof callback === 'function') queueMicrotask(() => (callback as () => void)());
    return true;
  }
}

class FakeKeyboard extends EventEmitter {
  isTTY = true;
  isRaw = false;
  private pending: string | null = null;
  setEncoding(): void {}
  setRawMode(raw: boolean): void {
    this.isRaw = raw;
  }
  resume(): void {}
  pause(): void {}
  ref(): void {}
  unref(): void {}
  read = (): string | null => {
    const p = this.pending;
    this.pending = null;
    return p;
  };
  press(data: string): void {
    this.pending = data;
    this.emit('readable');
  }
}

const ALT_SCREEN_ON = '\u001B[?1049h';
const ALT_SCREEN_OFF = '\u001B[?1049l';
const SHOW_CURSOR = '\u001B[?25h';

describe('renderDashboard', () => {
  for (const [name, key] of [
    ['q', 'q'],
    ['Ctrl-C', '\u0003'],
  ] as const) {
    it(`runs on the alternate screen and restores the terminal on ${name}`, async () => {
      const stdout = new FakeTerminal();
      const stdin = new FakeKeyboard();
      const data = createFakeData();
      const running = renderDashboard({
        data,
        stdout: stdout as unknown as NodeJS.WriteStream,
        stdin: stdin as unknown as NodeJS.ReadStream,
        stderr: stdout as unknown as NodeJS.WriteStream,
        patchConsole: false,
      });
      for (let i = 0; i < 100 && !stripVTControlCharacters(stdout.output).includes('Totals'); i++) await tick(20);
      expect(stdout.output).toContain(ALT_SCREEN_ON);
      expect(stdin.isRaw).toBe(true);
      expect(data.subscribers()).toBe(1);
      stdin.press(key);
      await running;
      expect(stdout.output.lastIndexOf(ALT_SCREEN_OFF)).toBeGreaterThan(stdout.output.lastIndexOf(ALT_SCREEN_ON));
      expect(stdout.output).toContain(SHOW_CURSOR);
      expect(stdin.isRaw).toBe(false);
      // The LISTEN connection is closed with the UI.
      await tick(20);
      expect(data.subscribers()).toBe(0);
    });
  }
});

describe('renderJobProgress', () => {
  it('redraws one job in place from updates and events, and leaves the final state on screen', async () => {
    const stdout = new FakeTerminal();
    const progress = renderJobProgress(job({ id: 'j1', crawled: 0, failed: 0, done: 0, total: 1, snippets: 0 }), { stdout: stdout as unknown as NodeJS.WriteStream });
    await tick(50);
    expect(stripVTControlCharacters(stdout.output)).toContain('0/1 pages');
    progress.applyEvent({ event: 'crawl_progress', jobId: 'j1', kind: 'crawl', state: 'running', counters: { pages_crawled: 4, pages_found: 8, snippets_stored: 12 }, timestamp: '' });
    await tick(150);
    expect(stripVTControlCharacters(stdout.output)).toContain('4/8 pages · 0 failed · 12 snippets');
    expect(progress.current()).toMatchObject({ crawled: 4, total: 8 });
    progress.setErrors([{ location: 'https://x/a', error: 'HTTP 404' }]);
    const finished = progress.finish({ ...progress.current(), status: 'completed', crawled: 8 });
    // The final frame is written before finish() returns, so a summary printed next goes below it.
    const text = stripVTControlCharacters(stdout.output);
    expect(text).toMatch(/completed +█+ 100%/);
    expect(text).toContain('https://x/a HTTP 404');
    await finished;
    // finish() is idempotent.
    await progress.finish();
  });

  it("backs the crawl commands' renderLiveJob (update, stop)", async () => {
    const stdout = new FakeTerminal();
    const display = renderLiveJob(job({ id: 'j1', name: 'livejob', crawled: 1, total: 4 }), { stdout: stdout as unknown as NodeJS.WriteStream, width: 70 });
    display.update(job({ id: 'j1', name: 'livejob', crawled: 3, total: 4 }));
    display.stop(job({ id: 'j1', name: 'livejob', status: 'completed', crawled: 4, total: 4, done: 4, failed: 0 }));
    const text = stripVTControlCharacters(stdout.output);
    expect(text).toMatch(/livejob +completed +█+ 100%/);
    expect(text).toContain('4/4 pages · 0 failed');
    for (const line of text.split('\n')) expect([...line].length).toBeLessThanOrEqual(70);
  });
});

describe('renderJobsProgress', () => {
  it('draws every job of a sync under one view with a line of totals, and leaves the final state on screen', async () => {
    const { renderJobsProgress } = await import('../../src/ui/jobs-progress.js');
    const stdout = new FakeTerminal();
    const view = renderJobsProgress([job({ id: 'a', name: 'alpha@1.0.0', status: 'running', crawled: 1, total: 4 }), job({ id: 'b', name: 'beta@2.0.0', status: 'queued', crawled: 0, total: 1 })], {
      stdout: stdout as unknown as NodeJS.WriteStream,
      width: 70,
    });
    await tick(50);
    expect(stripVTControlCharacters(stdout.output)).toContain('0 of 2 jobs done');
    await view.finish([
      job({ id: 'a', name: 'alpha@1.0.0', status: 'completed', crawled: 4, total: 4, done: 4, failed: 0 }),
      // Completed with failed pages reads `partial`, as `docdex jobs status` says (issue #49).
      job({ id: 'b', name: 'beta@2.0.0', status: 'completed', crawled: 1, total: 2, done: 2, failed: 1 }),
    ]);
    const text = stripVTControlCharacters(stdout.output);
    expect(text).toContain('2 of 2 jobs done');
    expect(text).toMatch(/alpha@1\.0\.0 +completed/);
    expect(text).toMatch(/beta@2\.0\.0 +partial/);
  });
});
