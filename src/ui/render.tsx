import { render, useWindowSize } from 'ink';
import { App } from './App.js';
import type { ScreenName } from './App.js';
import { JobProgress } from './components/JobProgress.js';
import type { JobErrorLine } from './components/JobProgress.js';
import { DashboardProvider } from './data/context.js';
import type { DashboardData, JobEvent } from './data/types.js';
import type { JobProgressView } from './job-view.js';
import { applyJobEvent } from './job-view.js';

/** Ink sits behind these functions: commands never import React or Ink themselves. */

export interface DashboardDeps {
  data: DashboardData;
  initialScreen?: ScreenName;
  stdout?: NodeJS.WriteStream;
  stdin?: NodeJS.ReadStream;
  stderr?: NodeJS.WriteStream;
  /**
   * Route stray console output above the frame (default true). Off only where console is not Node's own, as
   * in a test runner that replaced it.
   */
  patchConsole?: boolean;
}

/**
 * Runs the full-screen dashboard until the user quits (q, Ctrl-C) or the process is told to stop. The
 * alternate screen keeps the user's scrollback intact, and Ink restores the cursor and the terminal mode on
 * the way out, whichever way that is.
 */
export async function renderDashboard(deps: DashboardDeps): Promise<void> {
  const stdout = deps.stdout ?? process.stdout;
  const instance = render(
    <DashboardProvider data={deps.data}>
      <App {...(deps.initialScreen ? { initialScreen: deps.initialScreen } : {})} />
    </DashboardProvider>,
    {
      stdout,
      // Ink turns itself non-interactive when CI is set; a dashboard on a real terminal must still draw.
      interactive: Boolean(stdout.isTTY),
      stdin: deps.stdin ?? process.stdin,
      stderr: deps.stderr ?? process.stderr,
      // The App handles Ctrl-C itself so that quitting takes the same path as q.
      exitOnCtrlC: false,
      patchConsole: deps.patchConsole ?? true,
      alternateScreen: true,
      maxFps: 20,
    },
  );
  const stop = () => instance.unmount();
  const signals: NodeJS.Signals[] = ['SIGTERM', 'SIGHUP', 'SIGINT'];
  for (const signal of signals) process.on(signal, stop);
  try {
    await instance.waitUntilExit();
  } finally {
    for (const signal of signals) process.off(signal, stop);
    instance.cleanup();
  }
}

export interface JobProgressHandle {
  /** Replaces what is shown (e.g. after re-reading the job row). */
  update(job: JobProgressView): void;
  /** Folds a live event (crawl_progress, upload_progress, job_complete) into what is shown. */
  applyEvent(event: JobEvent): void;
  /** The last page errors to show under the job. */
  setErrors(errors: JobErrorLine[]): void;
  current(): JobProgressView;
  /**
   * Draws the final state, leaves it on screen and releases the terminal. The drawing is done when this
   * returns, so a summary line logged right after lands below it; the promise settles Ink's teardown.
   */
  finish(job?: JobProgressView): Promise<void>;
}

type ProgressState = { job: JobProgressView; errors: JobErrorLine[] };

function LiveJobProgress({ state, width }: { state: ProgressState; width?: number }) {
  const { columns } = useWindowSize();
  // One column short of the terminal: a line that fills it exactly makes some terminals wrap.
  return <JobProgress job={state.job} width={width ?? Math.max(40, Math.min(120, columns - 1))} errors={state.errors} />;
}

/**
 * The progress display of `crawl start --wait` and `upload --wait` in a terminal: the same JobProgress the
 * dashboard's Jobs screen shows, redrawn in place. It reads no keys, so Ctrl-C still reaches the command as
 * SIGINT. Without a TTY, commands should print plain lines instead.
 */
export function renderJobProgress(initial: JobProgressView, options: { stdout?: NodeJS.WriteStream; width?: number } = {}): JobProgressHandle {
  let state: ProgressState = { job: initial, errors: [] };
  const element = () => <LiveJobProgress state={state} {...(options.width === undefined ? {} : { width: options.width })} />;
  const stdout = options.stdout ?? process.stdout;
  const instance = render(element(), {
    stdout,
    // Redraw in place on a terminal even when CI is set; elsewhere Ink writes only the final frame.
    interactive: Boolean(stdout.isTTY),
    exitOnCtrlC: false,
    patchConsole: false,
    maxFps: 10,
  });
  let finished = false;
  // rerender() commits synchronously (legacy root), so the state shown is always the state set.
  const show = (next: ProgressState) => {
    state = next;
    if (!finished) instance.rerender(element());
  };
  return {
    update: (job) => show({ ...state, job }),
    applyEvent: (event) => show({ ...state, job: applyJobEvent(state.job, event) }),
    setErrors: (errors) => show({ ...state, errors }),
    current: () => state.job,
    finish(job) {
      if (!finished) {
        if (job) show({ ...state, job });
        finished = true;
        // Unmounting writes the last frame synchronously, throttling or not.
        instance.unmount();
      }
      return instance.waitUntilExit().then(
        () => undefined,
        () => undefined,
      );
    },
  };
}
