import { useEffect, useRef, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { Banner } from '../components/Banner.js';
import { HelpBar } from '../components/HelpBar.js';
import type { KeyHint } from '../components/HelpBar.js';
import { JobProgress } from '../components/JobProgress.js';
import { scrollOffset } from '../components/Table.js';
import { useDashboard } from '../data/context.js';
import { errorMessage } from '../data/connection.js';
import { useJobEvents, useLatestState, useResource, useThrottled } from '../data/hooks.js';
import type { JobProgressView, JobStarted } from '../data/types.js';
import { applyJobEvent, isActive } from '../job-view.js';
import { GLOBAL_KEYS } from '../keys.js';
import { theme } from '../theme.js';
import type { ScreenProps } from './types.js';

const POLL_MS = 3000;
const JOB_LIMIT = 50;
const ERROR_LINES = 3;
const LINES_PER_JOB = 3;

type Notice = { kind: 'success' | 'error' | 'info'; message: string } | null;

/** Running jobs first, then by age: what is moving is what the user came to see. */
function order(jobs: JobProgressView[]): JobProgressView[] {
  return [...jobs].sort((a, b) => Number(isActive(b)) - Number(isActive(a)) || (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
}

/** Said instead of acting: core has no way to stop or restart an upload once its files are queued. */
function uploadRefusal(job: JobProgressView): string {
  return `${job.name} is an upload; from a shell: docdex jobs cancel ${job.id.slice(0, 8)} (or jobs resume).`;
}

/** The jobs, polled and ordered; progress events move the bars at once, and an unseen or finished job reloads. */
function useLiveJobs(active: boolean) {
  const { data } = useDashboard();
  const resource = useResource(() => data.jobs({ limit: JOB_LIMIT }), { intervalMs: POLL_MS, active });
  const [jobs, setJobs] = useState<JobProgressView[]>([]);
  const reloadSoon = useThrottled(resource.reload, 500);

  useEffect(() => {
    if (resource.data) setJobs(order(resource.data));
  }, [resource.data]);

  // Progress events move the bars at once; a job we have not seen yet, or a finished one, triggers a reload.
  const jobsRef = useRef(jobs);
  jobsRef.current = jobs;
  useJobEvents((event) => {
    // LLM enhancement events are about pages of a job, not a job of their own.
    if (event.kind !== 'crawl' && event.kind !== 'upload') return;
    const matches = (j: JobProgressView) => j.id === event.jobId && j.kind === event.kind;
    const known = jobsRef.current.some(matches);
    if (known) setJobs((current) => current.map((j) => (matches(j) ? applyJobEvent(j, event) : j)));
    if (!known || event.event === 'job_complete') reloadSoon();
  });
  return { resource, jobs, jobsRef };
}

/** The keys that work now; on an upload, c and r only explain why not, so they are not listed. */
function jobsHelp(selected: JobProgressView | undefined): KeyHint[] {
  return [
    { key: '↑↓', label: 'select' },
    ...(selected?.kind === 'upload'
      ? []
      : [
          { key: 'c', label: 'cancel' },
          { key: 'r', label: 'resume' },
        ]),
    { key: 'g', label: 'refresh' },
    ...GLOBAL_KEYS,
  ];
}

/** Crawl and upload jobs, followed live; crawls can be cancelled and resumed. */
export function Jobs({ active, width, height }: ScreenProps) {
  const { data } = useDashboard();
  const { resource, jobs, jobsRef } = useLiveJobs(active);
  // Read by the key handler through its ref: keys that arrive together each see the one before.
  const [selectedId, setSelectedId, selectedIdRef] = useLatestState<string | null>(null);
  const [notice, setNotice] = useState<Notice>(null);

  const index = Math.max(
    0,
    jobs.findIndex((j) => j.id === selectedId),
  );
  const selected = jobs[index];
  const showErrors = Boolean(selected && (selected.failed > 0 || selected.status === 'failed'));
  const errors = useResource(() => (selected ? data.jobErrors(selected, { limit: ERROR_LINES }) : Promise.resolve([])), {
    key: `${selected?.kind}:${selected?.id}:${selected?.failed}:${selected?.status}`,
    active: active && showErrors,
  });

  const run = (label: string, action: () => Promise<unknown>) => {
    setNotice({ kind: 'info', message: `${label}…` });
    action().then(
      (result) => {
        const warning = (result as Partial<JobStarted> | undefined)?.warning;
        setNotice(warning ? { kind: 'info', message: `${label}: queued. ${warning}` } : { kind: 'success', message: `${label}: done.` });
        resource.reload();
      },
      (error: unknown) => setNotice({ kind: 'error', message: `${label} failed: ${errorMessage(error)}` }),
    );
  };

  useInput(
    (input, key) => {
      // The selection as of the last key, not the last render.
      const jobs = jobsRef.current;
      const index = Math.max(
        0,
        jobs.findIndex((j) => j.id === selectedIdRef.current),
      );
      const selected = jobs[index];
      if (key.upArrow || input === 'k') setSelectedId(jobs[Math.max(0, index - 1)]?.id ?? null);
      else if (key.downArrow || input === 'j') setSelectedId(jobs[Math.min(jobs.length - 1, index + 1)]?.id ?? null);
      else if ((input === 'c' || input === 'r') && selected?.kind === 'upload') setNotice({ kind: 'error', message: uploadRefusal(selected) });
      else if (input === 'c' && selected) {
        if (isActive(selected)) run(`Cancel ${selected.name}`, () => data.cancelCrawl(selected.id));
        else setNotice({ kind: 'error', message: `${selected.name} is ${selected.status}; only queued or running jobs can be cancelled.` });
      } else if (input === 'r' && selected) {
        if (selected.status === 'failed' || selected.status === 'cancelled') run(`Resume ${selected.name}`, () => data.resumeCrawl(selected.id));
        else setNotice({ kind: 'error', message: `${selected.name} is ${selected.status}; only failed or cancelled jobs can be resumed.` });
      } else if (input === 'g') resource.reload();
    },
    { isActive: active },
  );

  const errorRows = showErrors ? (errors.data ?? []) : [];
  const reserved = 1 + (notice ? 1 : 0) + (resource.error ? 1 : 0) + (errorRows.length > 0 ? errorRows.length + 1 : 0);
  const visible = Math.max(1, Math.floor((height - reserved) / LINES_PER_JOB));
  const offset = scrollOffset(index, jobs.length, visible);
  const shown = jobs.slice(offset, offset + visible);

  return (
    <Box flexDirection="column" width={width} height={height}>
      {resource.error ? <Banner kind="error" message={`Could not load jobs: ${resource.error}`} width={width} /> : null}
      <Box flexDirection="column" flexGrow={1} overflow="hidden">
        {jobs.length === 0 ? (
          <Text color={theme.text.secondary}>{resource.loading && !resource.data ? 'Loading jobs…' : 'No jobs yet. Run `docdex crawl start <url>` or `docdex upload <path>`.'}</Text>
        ) : (
          shown.map((j) => <JobProgress key={j.id} job={j} width={width} selected={j.id === selected?.id} errors={j.id === selected?.id ? errorRows : undefined} />)
        )}
      </Box>
      {notice ? <Banner kind={notice.kind} message={notice.message} width={width} /> : null}
      <HelpBar keys={jobsHelp(selected)} width={width} />
    </Box>
  );
}
