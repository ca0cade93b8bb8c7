import { Box, Text, useInput } from 'ink';
import { Banner } from '../../components/Banner.js';
import { Table } from '../../components/Table.js';
import type { Column } from '../../components/Table.js';
import { useDashboard } from '../../data/context.js';
import { useLatestState, useResource } from '../../data/hooks.js';
import type { AgentSession, ToolCallRow } from '../../data/types.js';
import { formatAgo, truncate } from '../../format.js';
import { stateColor, theme } from '../../theme.js';
import { POLL_MS, useRowSelection } from './lists.js';
import type { SectionProps } from './lists.js';

/** The Sessions section: the agent server's sessions, and one session's tool calls with the `sandbox` badge. */

const SESSIONS_SHOWN = 200;

const FOLDER_WIDTH = 40;

/** The end of a path is the part that tells folders apart: cut from the start. */
function pathTail(dir: string, width: number): string {
  return dir.length > width ? `…${dir.slice(-(width - 1))}` : dir;
}

function sessionColumns(now: number): Column<AgentSession>[] {
  return [
    { header: 'session', value: (s) => s.title || s.id },
    { header: 'folder', width: FOLDER_WIDTH, value: (s) => (s.directory === null ? '-' : pathTail(s.directory, FOLDER_WIDTH)) },
    { header: 'active', width: 10, value: (s) => formatAgo(s.updatedAt === null ? null : new Date(s.updatedAt).toISOString(), now) },
  ];
}

/** The badge: green, on exactly the calls the sandbox marked (spec: Sandboxing, Mechanism 5). */
export const TOOL_COLUMNS: Column<ToolCallRow>[] = [
  { header: 'tool', width: 10, value: (c) => c.tool },
  { header: 'call', value: (c) => c.summary },
  { header: 'status', width: 10, value: (c) => c.status, color: (c) => stateColor(c.status) },
  { header: '', width: 7, value: (c) => (c.sandbox ? 'sandbox' : ''), color: () => theme.status.success },
];

function ToolCalls({ session, active, width, height }: SectionProps & { session: AgentSession }) {
  const { data } = useDashboard();
  const calls = useResource(() => data.agentToolCalls(session), { key: session.id, intervalMs: POLL_MS, active });
  const rows = calls.data ?? [];
  const selected = useRowSelection(active, rows.length);
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Text bold wrap="truncate-end">
        Tool calls of {truncate(session.title || session.id, Math.max(10, width - 20))}
      </Text>
      {calls.error ? <Banner kind="error" message={`Could not load the session: ${calls.error}`} width={width} /> : null}
      <Table
        columns={TOOL_COLUMNS}
        rows={rows}
        rowKey={(c) => c.id}
        selected={selected}
        width={width}
        height={height - 1 - (calls.error ? 1 : 0)}
        emptyText={calls.loading && !calls.data ? 'Loading tool calls…' : 'No tool calls in this session.'}
      />
    </Box>
  );
}

/** Whether a session is open, for the help bar. */
export function AgentSessions({ active, width, height, onOpen }: SectionProps & { onOpen(open: boolean): void }) {
  const { data, now } = useDashboard();
  const [open, setOpen, openRef] = useLatestState<AgentSession | null>(null);
  const sessions = useResource(() => data.agentSessions({ limit: SESSIONS_SHOWN }), { intervalMs: POLL_MS, active: active && open === null });
  const rows = sessions.data?.running ? sessions.data.sessions : [];
  const selected = useRowSelection(active && open === null, rows.length);
  useInput(
    (_input, key) => {
      if (key.escape && openRef.current) {
        setOpen(null);
        onOpen(false);
      } else if (key.return && !openRef.current && rows[selected]) {
        setOpen(rows[selected]);
        onOpen(true);
      }
    },
    { isActive: active },
  );

  if (open) return <ToolCalls session={open} active={active} width={width} height={height} />;
  const down = sessions.data && !sessions.data.running ? sessions.data : undefined;
  return (
    <Box flexDirection="column" width={width} height={height}>
      {sessions.error ? <Banner kind="error" message={`Could not load sessions: ${sessions.error}`} width={width} /> : null}
      {down ? (
        <>
          <Banner kind="warning" message="Agent server not running: no sessions to show." width={width} />
          <Text wrap="wrap">{down.message}</Text>
          {down.hint ? <Text color={theme.text.secondary}>{down.hint}</Text> : null}
        </>
      ) : (
        <Table
          columns={sessionColumns(now())}
          rows={rows}
          rowKey={(s) => s.id}
          selected={selected}
          width={width}
          height={height - (sessions.error ? 1 : 0)}
          emptyText={sessions.loading && !sessions.data ? 'Loading sessions…' : 'No sessions yet.'}
        />
      )}
    </Box>
  );
}
