import { useInput } from 'ink';
import { Box, Text } from 'ink';
import { Banner } from '../../components/Banner.js';
import { Table } from '../../components/Table.js';
import type { Column } from '../../components/Table.js';
import { useDashboard } from '../../data/context.js';
import { useLatestState, useResource } from '../../data/hooks.js';
import type { AgentRepoRow, RunRecord, ScheduleRecord, Skill } from '../../data/types.js';
import { formatAgo, formatIn } from '../../format.js';
import { stateColor, theme } from '../../theme.js';

/** The read-only sections of the Agent screen: repositories with their worktrees, schedules and runs, skills. */

export const POLL_MS = 5000;
const RUNS_SHOWN = 50;

export interface SectionProps {
  active: boolean;
  width: number;
  /** Lines for the section, its help bar excluded. */
  height: number;
}

const iso = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : new Date(ms).toISOString());

function repoColour(status: string): string | undefined {
  return status === 'ready' ? theme.status.success : status === 'cloning' ? theme.status.info : stateColor(status === 'error' ? 'failed' : status);
}

/** A worktree is drawn under its repository, indented: one table, the tree in its first column. */
type RepoLine = AgentRepoRow & { depth: number };

export function repoLines(repos: AgentRepoRow[]): RepoLine[] {
  return repos.flatMap((r) => [{ ...r, depth: 0 }, ...r.worktrees.map((w) => ({ ...w, depth: 1 }))]);
}

const REPO_COLUMNS: Column<RepoLine>[] = [
  { header: 'repository', value: (r) => (r.depth > 0 ? `└ ${r.name}` : r.name) },
  { header: 'clone', width: 8, value: (r) => r.status, color: (r) => repoColour(r.status) },
  { header: 'branch', width: 14, value: (r) => r.branch ?? '-' },
  {
    header: 'source / note',
    value: (r) => (r.error ? r.error : r.local ? `${r.source ?? ''} (local: outside the microVM)` : r.depth > 0 ? 'worktree' : (r.source ?? 'local')),
    color: (r) => (r.error ? theme.status.error : r.local ? theme.status.warning : theme.text.secondary),
  },
];

/** Up and down move a selection through `count` rows; returns the selected index. */
export function useRowSelection(active: boolean, count: number): number {
  const [index, setIndex, ref] = useLatestState(0);
  useInput(
    (_input, key) => {
      if (key.upArrow) setIndex(Math.max(0, ref.current - 1));
      else if (key.downArrow) setIndex(Math.min(Math.max(0, count - 1), ref.current + 1));
    },
    { isActive: active },
  );
  return Math.min(index, Math.max(0, count - 1));
}

export function AgentRepos({ active, width, height }: SectionProps) {
  const { data } = useDashboard();
  const repos = useResource(() => data.agentRepos(), { intervalMs: POLL_MS, active });
  const lines = repoLines(repos.data ?? []);
  const selected = useRowSelection(active, lines.length);
  return (
    <Box flexDirection="column" width={width} height={height}>
      {repos.error ? <Banner kind="error" message={`Could not load repositories: ${repos.error}`} width={width} /> : null}
      <Table
        columns={REPO_COLUMNS}
        rows={lines}
        rowKey={(r) => String(r.id)}
        selected={selected}
        width={width}
        height={height - (repos.error ? 1 : 0)}
        emptyText={repos.loading && !repos.data ? 'Loading repositories…' : 'No repositories: add one with `docdex repos add <url>`.'}
      />
    </Box>
  );
}

function scheduleColumns(now: number): Column<ScheduleRecord>[] {
  return [
    { header: 'schedule', value: (s) => s.name },
    { header: 'repository', width: 16, value: (s) => s.repoName },
    { header: 'every', width: 14, value: (s) => s.cron ?? `${s.intervalMinutes} min` },
    { header: 'on', width: 3, value: (s) => (s.enabled ? 'yes' : 'no'), color: (s) => (s.enabled ? theme.status.success : theme.status.muted) },
    { header: 'last run', width: 10, value: (s) => formatAgo(iso(s.lastRunAt), now) },
    { header: 'next run', width: 10, value: (s) => formatIn(iso(s.nextRunAt), now) },
  ];
}

function runColumns(now: number, names: Map<number, string>): Column<RunRecord>[] {
  return [
    { header: 'run', width: 5, align: 'right', value: (r) => String(r.id) },
    { header: 'schedule', value: (r) => names.get(r.scheduleId) ?? String(r.scheduleId) },
    { header: 'status', width: 10, value: (r) => r.status, color: (r) => stateColor(r.status) },
    { header: 'trigger', width: 8, value: (r) => r.trigger },
    { header: 'started', width: 10, value: (r) => formatAgo(iso(r.startedAt ?? r.createdAt), now) },
    { header: 'session', value: (r) => r.sessionId ?? r.error ?? '-' },
  ];
}

export function AgentSchedules({ active, width, height }: SectionProps) {
  const { data, now } = useDashboard();
  const schedules = useResource(() => data.agentSchedules({ runs: RUNS_SHOWN }), { intervalMs: POLL_MS, active });
  const list = schedules.data?.schedules ?? [];
  const runs = schedules.data?.runs ?? [];
  const names = new Map(list.map((s) => [s.id, s.name]));
  const body = height - (schedules.error ? 1 : 0) - 2;
  const scheduleHeight = Math.max(2, Math.min(list.length + 1, Math.floor(body / 2)));
  const loading = schedules.loading && !schedules.data;
  return (
    <Box flexDirection="column" width={width} height={height}>
      {schedules.error ? <Banner kind="error" message={`Could not load schedules: ${schedules.error}`} width={width} /> : null}
      <Text bold>Schedules</Text>
      <Table
        columns={scheduleColumns(now())}
        rows={list}
        rowKey={(s) => String(s.id)}
        selected={-1}
        width={width}
        height={scheduleHeight}
        emptyText={loading ? 'Loading schedules…' : 'No schedules.'}
      />
      <Text bold>Runs</Text>
      <Table
        columns={runColumns(now(), names)}
        rows={runs}
        rowKey={(r) => String(r.id)}
        selected={-1}
        width={width}
        height={Math.max(2, body - scheduleHeight)}
        emptyText={loading ? '' : 'No runs yet.'}
      />
    </Box>
  );
}

const SKILL_COLUMNS: Column<Skill>[] = [
  { header: 'skill', width: 24, value: (s) => s.name },
  { header: 'scope', width: 8, value: (s) => s.scope },
  { header: 'repository', width: 16, value: (s) => s.repoName ?? '-' },
  { header: 'description', value: (s) => s.description },
];

export function AgentSkills({ active, width, height }: SectionProps) {
  const { data } = useDashboard();
  const skills = useResource(() => data.agentSkills(), { intervalMs: POLL_MS, active });
  const rows = skills.data ?? [];
  const selected = useRowSelection(active, rows.length);
  return (
    <Box flexDirection="column" width={width} height={height}>
      {skills.error ? <Banner kind="error" message={`Could not load skills: ${skills.error}`} width={width} /> : null}
      <Table
        columns={SKILL_COLUMNS}
        rows={rows}
        rowKey={(s) => `${s.scope}-${s.repoId ?? ''}-${s.name}`}
        selected={selected}
        width={width}
        height={height - (skills.error ? 1 : 0)}
        emptyText={skills.loading && !skills.data ? 'Loading skills…' : 'No skills.'}
      />
    </Box>
  );
}
