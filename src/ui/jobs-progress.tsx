import { Box, render, Text, useWindowSize } from 'ink';
import { JobProgress } from './components/JobProgress.js';
import type { JobProgressView } from './job-view.js';
import { isActive } from './job-view.js';
import { theme } from './theme.js';

/**
 * One progress view over several jobs (`docdex sync` in a terminal): a line of totals, then each job as the
 * Jobs screen draws it, redrawn in place. It reads no keys, so Ctrl-C still reaches the command.
 */

export interface JobsProgressHandle {
  update(jobs: JobProgressView[]): void;
  /** Draws the final state, leaves it on screen and releases the terminal. */
  finish(jobs?: JobProgressView[]): Promise<void>;
}

function JobsProgress({ jobs, width }: { jobs: JobProgressView[]; width?: number }) {
  const { columns } = useWindowSize();
  const w = width ?? Math.max(40, Math.min(120, columns - 1));
  const done = jobs.filter((j) => !isActive(j)).length;
  return (
    <Box flexDirection="column">
      <Text color={theme.text.secondary}>
        {done} of {jobs.length} {jobs.length === 1 ? 'job' : 'jobs'} done
      </Text>
      {jobs.map((job) => (
        <JobProgress key={job.id} job={job} width={w} />
      ))}
    </Box>
  );
}

export function renderJobsProgress(initial: JobProgressView[], options: { stdout?: NodeJS.WriteStream; width?: number } = {}): JobsProgressHandle {
  let jobs = initial;
  const element = () => <JobsProgress jobs={jobs} {...(options.width === undefined ? {} : { width: options.width })} />;
  const stdout = options.stdout ?? process.stdout;
  const instance = render(element(), { stdout, interactive: Boolean(stdout.isTTY), exitOnCtrlC: false, patchConsole: false, maxFps: 10 });
  let finished = false;
  const show = (next: JobProgressView[]) => {
    jobs = next;
    if (!finished) instance.rerender(element());
  };
  return {
    update: show,
    finish(last) {
      if (!finished) {
        if (last) show(last);
        finished = true;
        instance.unmount();
      }
      return instance.waitUntilExit().then(
        () => undefined,
        () => undefined,
      );
    },
  };
}
