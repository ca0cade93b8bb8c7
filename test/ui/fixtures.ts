import type { AgentSessions, DashboardData, DashboardStats, ToolCallRow, JobErrorRow, JobEvent, JobProgressView, SearchRequest, SnippetHit, SourceEdit, SourceRow } from '../../src/ui/data/types.js';

export const SOURCES: SourceRow[] = [
  { id: 's1', name: 'fastapi', version: '0.110', snippets: 1520, pages: 212, lastCrawledAt: '2025-06-01T11:57:00Z', state: 'completed', kind: 'crawl', baseUrl: 'https://fastapi.example/docs' },
  { id: 's2', name: 'react', version: '', snippets: 830, pages: 95, lastCrawledAt: '2025-05-31T12:00:00Z', state: 'running', kind: 'crawl', baseUrl: 'https://react.example' },
  { id: 's3', name: 'notes', version: '1', snippets: 12, pages: 3, lastCrawledAt: null, state: 'idle', kind: 'upload', baseUrl: null },
];

export function job(overrides: Partial<JobProgressView> & { id: string }): JobProgressView {
  return {
    kind: 'crawl',
    name: 'fastapi',
    status: 'running',
    done: 12,
    total: 30,
    crawled: 10,
    failed: 2,
    skipped: 0,
    snippets: 45,
    rate: 1.5,
    etaSeconds: 12,
    currentUrl: 'https://fastapi.example/docs/tutorial/',
    error: null,
    createdAt: '2025-06-01T11:59:00Z',
    ...overrides,
  };
}

export const JOBS: JobProgressView[] = [
  job({ id: 'j1' }),
  job({ id: 'j2', name: 'react', status: 'failed', done: 5, total: 9, crawled: 2, failed: 3, snippets: 4, rate: 0.4, etaSeconds: null, currentUrl: null, error: 'start URL returned 503' }),
  job({ id: 'j3', name: 'django', status: 'completed', done: 40, total: 40, crawled: 40, failed: 0, snippets: 310, rate: 3.2, etaSeconds: null, currentUrl: null }),
];

export const STATS: DashboardStats = {
  totals: { sources: 3, documents: 310, snippets: 2362, languages: 4 },
  languages: [
    { language: 'python', snippets: 1400 },
    { language: 'javascript', snippets: 700 },
    { language: 'bash', snippets: 200 },
    { language: 'sql', snippets: 62 },
  ],
  jobs: { crawl: { queued: 0, running: 1, completed: 5, failed: 1, cancelled: 2 }, upload: { queued: 0, processing: 0, completed: 1, failed: 0, cancelled: 0 } },
  recent_jobs: [
    { id: 'j1', kind: 'crawl', name: 'fastapi', status: 'running', pages: 10, failed: 0, snippets: 45, created_at: '2025-06-01T11:59:00Z', completed_at: null },
    { id: 'u1', kind: 'upload', name: 'notes', status: 'completed', pages: 3, failed: 1, snippets: 12, created_at: '2025-06-01T10:00:00Z', completed_at: '2025-06-01T10:00:05Z' },
  ],
  top_sources: [],
};

export const SNIPPETS: SnippetHit[] = [
  {
    id: 1,
    kind: 'snippet',
    title: 'Create an app',
    description: 'The smallest FastAPI application.',
    language: 'python',
    code: 'from fastapi import FastAPI\n\n# the app object\napp = FastAPI()\n\n@app.get("/")\ndef root():\n    return {"hello": 42}',
    url: 'https://fastapi.example/docs/first-steps/',
    sourceName: 'fastapi',
    sourceVersion: '0.110',
  },
  {
    id: 2,
    kind: 'snippet',
    title: 'useState hook',
    description: '',
    language: 'javascript',
    code: 'const [count, setCount] = useState(0);',
    url: 'https://react.example/reference/useState',
    sourceName: 'react',
    sourceVersion: '',
  },
];

/** A running agent server's sessions, for the screens' layout tests (the adapter's own tests use real opencode). */
export const AGENT_SESSIONS: AgentSessions = {
  running: true,
  sessions: [
    { id: 'ses_1', title: 'Fix the login bug', directory: '/workspace/repos/app', parentId: null, createdAt: Date.parse('2025-06-01T11:50:00Z'), updatedAt: Date.parse('2025-06-01T11:58:00Z') },
  ],
};

export const TOOL_CALLS: ToolCallRow[] = [
  { id: 'call_1', tool: 'bash', summary: 'npm test', status: 'completed', sandbox: true },
  { id: 'call_2', tool: 'read', summary: 'src/login.ts', status: 'completed', sandbox: false },
  { id: 'call_3', tool: 'bash', summary: 'hostname', status: 'completed', sandbox: false },
];

type Call = [string, ...unknown[]];

export interface FakeData extends DashboardData {
  calls: Call[];
  /** The fake event stream: delivers an event to every subscriber. */
  emit(event: Omit<JobEvent, 'timestamp'>): void;
  /** Simulates the database going away (every call rejects with ECONNREFUSED) and coming back. */
  setDown(down: boolean): void;
  /** Drops the LISTEN connection, as a server restart would. */
  dropEvents(): void;
  subscribers(): number;
  sourcesList: SourceRow[];
  jobsList: JobProgressView[];
  statsValue: DashboardStats;
  patterns: Record<string, string[]>;
  /** What recrawl and resume report about workers (null: one is running). */
  workerWarning: string | null;
}

export function createFakeData(
  options: {
    sources?: SourceRow[];
    jobs?: JobProgressView[];
    stats?: DashboardStats;
    snippets?: SnippetHit[];
    errors?: Record<string, JobErrorRow[]>;
    searchDelayMs?: number;
    rejectUpdate?: string;
  } = {},
): FakeData {
  let down = false;
  const listeners = new Set<{ onEvent: (e: JobEvent) => void; onError: (e: Error) => void }>();
  const calls: Call[] = [];
  const snippets = options.snippets ?? SNIPPETS;
  const errors = options.errors ?? { j2: [{ location: 'https://react.example/a', error: 'HTTP 503' }] };
  const fake: FakeData = {
    display: '127.0.0.1:5432/docdex',
    calls,
    sourcesList: structuredClone(options.sources ?? SOURCES),
    jobsList: structuredClone(options.jobs ?? JOBS),
    statsValue: structuredClone(options.stats ?? STATS),
    patterns: { s1: ['/docs/*'] },
    workerWarning: null,
    async ping() {
      calls.push(['ping']);
      guard();
    },
    async stats() {
      guard();
      calls.push(['stats']);
      return structuredClone(fake.statsValue);
    },
    async sources() {
      guard();
      calls.push(['sources']);
      return structuredClone(fake.sourcesList);
    },
    async sourceEdit(id: string) {
      guard();
      calls.push(['sourceEdit', id]);
      const s = fake.sourcesList.find((x) => x.id === id);
      if (!s) throw new Error(`Source ${id} not found.`);
      return { name: s.name, version: s.version, urlPatterns: fake.patterns[id] ?? [] };
    },
    async updateSource(id: string, edit: SourceEdit) {
      guard();
      calls.push(['updateSource', id, edit]);
      if (options.rejectUpdate) throw new Error(options.rejectUpdate);
      const s = fake.sourcesList.find((x) => x.id === id);
      if (s) Object.assign(s, { name: edit.name, version: edit.version });
      fake.patterns[id] = edit.urlPatterns;
    },
    async deleteSource(id: string) {
      guard();
      calls.push(['deleteSource', id]);
      fake.sourcesList = fake.sourcesList.filter((s) => s.id !== id);
    },
    async recrawlSource(id: string) {
      guard();
      calls.push(['recrawlSource', id]);
      return { jobId: 'j-new', warning: fake.workerWarning };
    },
    async sourceSnippets(id: string) {
      guard();
      calls.push(['sourceSnippets', id]);
      const name = fake.sourcesList.find((s) => s.id === id)?.name;
      return snippets.filter((s) => s.sourceName === name);
    },
    async jobs() {
      guard();
      calls.push(['jobs']);
      return structuredClone(fake.jobsList);
    },
    async jobErrors(target: Pick<JobProgressView, 'id' | 'kind'>) {
      guard();
      calls.push(['jobErrors', target.id, target.kind]);
      return errors[target.id] ?? [];
    },
    async cancelCrawl(id: string) {
      guard();
      calls.push(['cancelCrawl', id]);
      const j = fake.jobsList.find((x) => x.id === id);
      if (j) j.status = 'cancelled';
    },
    async resumeCrawl(id: string) {
      guard();
      calls.push(['resumeCrawl', id]);
      const j = fake.jobsList.find((x) => x.id === id);
      if (j) j.status = 'queued';
      return { jobId: id, warning: fake.workerWarning };
    },
    async search(request: SearchRequest) {
      guard();
      calls.push(['search', request]);
      if (options.searchDelayMs) await new Promise((r) => setTimeout(r, options.searchDelayMs));
      const q = request.query.toLowerCase();
      const hits = snippets.filter(
        (s) =>
          (s.title.toLowerCase().includes(q) || s.code.toLowerCase().includes(q)) &&
          (!request.source || s.sourceName.startsWith(request.source)) &&
          (!request.language || s.language === request.language),
      );
      // A source filter that is only the start of a name stands for the closest match, as the real search says.
      const library = request.source ? hits.find((s) => s.sourceName !== request.source) : undefined;
      return library ? { hits, closest: { requested: request.source!, name: library.sourceName, version: library.sourceVersion } } : { hits };
    },
    async subscribe(onEvent, onError) {
      guard();
      const entry = { onEvent, onError };
      listeners.add(entry);
      return {
        async close() {
          listeners.delete(entry);
        },
      };
    },
    emit(event) {
      for (const l of listeners) l.onEvent({ ...event, timestamp: new Date().toISOString() });
    },
    setDown(value: boolean) {
      down = value;
    },
    dropEvents() {
      for (const l of [...listeners]) {
        listeners.delete(l);
        l.onError(new Error('event connection closed'));
      }
    },
    subscribers: () => listeners.size,
    agentRepos: async () => (guard(), []),
    agentSessions: async () => (guard(), structuredClone(AGENT_SESSIONS)),
    agentToolCalls: async () => (guard(), structuredClone(TOOL_CALLS)),
    agentSchedules: async () => (guard(), { schedules: [], runs: [] }),
    agentSkills: async () => (guard(), []),
    agentSettings: () => Promise.reject(new Error('agent settings are not in the fixtures')),
    setSandbox: () => Promise.reject(new Error('agent settings are not in the fixtures')),
    setGitIdentity: () => Promise.reject(new Error('agent settings are not in the fixtures')),
  };
  function guard() {
    if (down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  }
  return fake;
}
