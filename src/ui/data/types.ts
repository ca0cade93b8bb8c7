import type { AgentSession } from '../../core/agent-server/sessions.js';
import type { RunRecord, ScheduleRecord } from '../../core/agent/schedules.js';
import type { Skill } from '../../core/agent/skills.js';
import type { GitIdentity } from '../../core/agent/settings.js';
import type { JobEvent } from '../../core/events/notify.js';
import type { SandboxSwitchChange, SandboxSwitchState } from '../../core/sandbox/switch.js';
import type { DashboardStats } from '../../core/stats/dashboard.js';
import type { JobProgressView } from '../job-view.js';

export type { AgentSession, DashboardStats, GitIdentity, JobEvent, JobProgressView, RunRecord, SandboxSwitchChange, SandboxSwitchState, ScheduleRecord, Skill };

/** A row of the Sources screen. */
export interface SourceRow {
  id: string;
  name: string;
  version: string;
  snippets: number;
  pages: number;
  lastCrawledAt: string | null;
  /** The latest job's status ('running', 'failed', ...) or 'idle' when the source never ran a job. */
  state: string;
  kind: 'crawl' | 'upload' | 'git';
  baseUrl: string | null;
}

export interface SourceEdit {
  name: string;
  version: string;
  urlPatterns: string[];
}

export interface SnippetHit {
  id: number;
  /** 'section': a page section; its title is its breadcrumb and its code its markdown. */
  kind: 'snippet' | 'section';
  title: string;
  description: string;
  language: string;
  code: string;
  url: string;
  sourceName: string;
  sourceVersion: string;
  /** How many more matches its page has, folded under it (search results only). */
  more?: number;
}

export interface SearchHits {
  hits: SnippetHit[];
  /** Set when the source filter names no library exactly: the closest match, which was searched instead. */
  closest?: { requested: string; name: string; version: string };
}

export interface SearchRequest {
  query: string;
  source?: string;
  language?: string;
  limit: number;
}

export interface JobErrorRow {
  /** The page URL of a crawl, or the file path of an upload, that failed. */
  location: string;
  error: string;
}

/** What starting or resuming a job did; `warning` says why it may not move (no worker running). */
export interface JobStarted {
  jobId: string;
  warning: string | null;
}

/** A repository of the agent manager with the worktrees made from it. */
export interface AgentRepoRow {
  id: number;
  /** Its folder under repos/. */
  name: string;
  /** The URL or local path it came from; null for a worktree. */
  source: string | null;
  status: 'cloning' | 'ready' | 'error';
  error: string | null;
  branch: string | null;
  /** A local directory linked in, which the microVM cannot reach. */
  local: boolean;
  worktrees: AgentRepoRow[];
}

/** The agent server's sessions, or why there are none to show. */
export type AgentSessions = { running: true; sessions: AgentSession[] } | { running: false; message: string; hint: string | null };

/** One tool call of a session, as opencode recorded it. */
export interface ToolCallRow {
  id: string;
  tool: string;
  /** The command of a bash call, else the call's title or its input. */
  summary: string;
  status: string;
  /** The `sandbox` metadata marker that mgr-sandbox.js sets on a bash call planned into the microVM. */
  sandbox: boolean;
}

export interface AgentSchedules {
  schedules: ScheduleRecord[];
  /** The newest runs of every schedule. */
  runs: RunRecord[];
}

/** The agent manager's settings as the Settings section shows them; secrets never leave core unmasked. */
export interface AgentSettingsView {
  switches: SandboxSwitchState;
  /** The switches in sentences, as `docdex sandbox status` prints them. */
  summary: string[];
  credentials: Array<{ id: string; host: string; username: string | null; repoName: string | null; isDefault: boolean }>;
  /** The manager token with all but its last 4 characters masked; null before the first start. */
  maskedToken: string | null;
}

/** The answer to a settings change: what it means now, in sentences (the host check's notes included). */
export interface AgentSettingsChanged {
  lines: string[];
}

export interface EventSubscription {
  close(): Promise<void>;
}

/**
 * Everything the dashboard reads or changes, as one port. The PostgreSQL adapter (`postgres.ts`) calls the
 * core functions; tests pass fixtures. Every method may reject: the UI shows the error and keeps running.
 */
export interface DashboardData {
  /** Where the data lives, safe to print (host:port/database). */
  readonly display: string;
  /** A cheap round trip, used to notice that a lost connection is back. */
  ping(): Promise<void>;
  stats(): Promise<DashboardStats>;
  sources(): Promise<SourceRow[]>;
  /** The editable fields of a source as stored now (the form starts from these). */
  sourceEdit(id: string): Promise<SourceEdit>;
  updateSource(id: string, edit: SourceEdit): Promise<void>;
  deleteSource(id: string): Promise<void>;
  /** Starts a new crawl of the source with its stored configuration. */
  recrawlSource(id: string): Promise<JobStarted>;
  sourceSnippets(id: string, options: { limit: number }): Promise<SnippetHit[]>;
  /** The `limit` most recent crawl and upload jobs plus every active one: active first, then newest first. */
  jobs(options: { limit: number }): Promise<JobProgressView[]>;
  /** The latest failed pages (crawl) or files (upload) of a job, newest first. */
  jobErrors(job: Pick<JobProgressView, 'id' | 'kind'>, options: { limit: number }): Promise<JobErrorRow[]>;
  /** Crawl jobs only: the dashboard points to `docdex jobs cancel|resume` for upload jobs. */
  cancelCrawl(id: string): Promise<void>;
  resumeCrawl(id: string): Promise<JobStarted>;
  search(request: SearchRequest): Promise<SearchHits>;
  subscribe(onEvent: (event: JobEvent) => void, onError: (error: Error) => void): Promise<EventSubscription>;
  agentRepos(): Promise<AgentRepoRow[]>;
  agentSessions(options: { limit: number }): Promise<AgentSessions>;
  agentToolCalls(session: Pick<AgentSession, 'id' | 'directory'>): Promise<ToolCallRow[]>;
  agentSchedules(options: { runs: number }): Promise<AgentSchedules>;
  agentSkills(): Promise<Skill[]>;
  agentSettings(): Promise<AgentSettingsView>;
  /** Enabling checks the host first, as `docdex sandbox enable` does, and changes nothing when it cannot run the microVM. */
  setSandbox(change: SandboxSwitchChange): Promise<AgentSettingsChanged>;
  /** `null` clears it. */
  setGitIdentity(identity: GitIdentity | null): Promise<AgentSettingsChanged>;
}
