import { Box, Text } from 'ink';
import { BarChart } from '../components/BarChart.js';
import { Banner } from '../components/Banner.js';
import { HelpBar } from '../components/HelpBar.js';
import { Table } from '../components/Table.js';
import type { Column } from '../components/Table.js';
import { useDashboard } from '../data/context.js';
import { useJobEvents, useResource, useThrottled } from '../data/hooks.js';
import type { DashboardStats } from '../data/types.js';
import { formatAgo, formatCount } from '../format.js';
import { GLOBAL_KEYS } from '../keys.js';
import { jobStatusText } from '../../core/jobs/status-text.js';
import { stateColor, theme } from '../theme.js';
import type { ScreenProps } from './types.js';

type RecentJob = DashboardStats['recent_jobs'][number];

// Polling is the fallback for changes that publish no event (a source edited elsewhere); events do the rest.
const POLL_MS = 5000;
const EVENT_RELOAD_MS = 1000;

function stateCounts(states: Record<string, number>): string {
  return Object.entries(states)
    .map(([state, n]) => `${state} ${n}`)
    .join('  ');
}

export function Overview({ active, width, height }: ScreenProps) {
  const { data, now } = useDashboard();
  const stats = useResource(() => data.stats(), { intervalMs: POLL_MS, active });
  const reloadSoon = useThrottled(stats.reload, EVENT_RELOAD_MS);
  useJobEvents(() => {
    if (active) reloadSoon();
  });

  const s = stats.data;
  const bodyHeight = height - 1 - (stats.error ? 1 : 0);
  const recentColumns: Column<RecentJob>[] = [
    { header: 'kind', width: 6, value: (j) => j.kind },
    { header: 'name', value: (j) => j.name },
    { header: 'state', width: 10, value: (j) => jobStatusText(j.status, j.failed), color: (j) => stateColor(jobStatusText(j.status, j.failed)) },
    { header: 'pages', width: 6, align: 'right', value: (j) => formatCount(j.pages) },
    { header: 'snippets', width: 8, align: 'right', value: (j) => formatCount(j.snippets) },
    { header: 'started', width: 10, value: (j) => formatAgo(j.created_at, now()) },
  ];
  // Fixed lines: totals, blank, "languages", blank, "jobs", crawl, upload, blank, "recent"; bars get what is left over the recent table.
  const maxBars = Math.max(2, Math.min(8, Math.floor((bodyHeight - 9) / 2)));
  const recentHeight = Math.max(2, bodyHeight - 9 - Math.min(maxBars, s?.languages.length || 1));

  return (
    <Box flexDirection="column" width={width} height={height}>
      {stats.error ? <Banner kind="error" message={`Could not load statistics: ${stats.error}`} width={width} /> : null}
      <Box flexDirection="column" height={bodyHeight} overflow="hidden">
        {!s ? (
          <Text color={theme.text.secondary}>{stats.loading ? 'Loading statistics…' : 'No statistics.'}</Text>
        ) : (
          <>
            <Text wrap="truncate-end">
              <Text bold>Totals </Text>
              sources <Text bold>{formatCount(s.totals.sources)}</Text>
              {'  '}documents <Text bold>{formatCount(s.totals.documents)}</Text>
              {'  '}snippets <Text bold>{formatCount(s.totals.snippets)}</Text>
              {'  '}languages <Text bold>{formatCount(s.totals.languages)}</Text>
            </Text>
            <Box marginTop={1} flexDirection="column" flexShrink={0}>
              <Text bold>Languages</Text>
              <BarChart items={s.languages.map((l) => ({ label: l.language, value: l.snippets }))} width={Math.min(width, 70)} maxBars={maxBars} emptyText="No snippets yet." />
            </Box>
            <Box marginTop={1} flexDirection="column" flexShrink={0}>
              <Text bold>Jobs</Text>
              <Text wrap="truncate-end">
                <Text color={theme.text.secondary}>{'crawl   '}</Text>
                {stateCounts(s.jobs.crawl)}
              </Text>
              <Text wrap="truncate-end">
                <Text color={theme.text.secondary}>{'upload  '}</Text>
                {stateCounts(s.jobs.upload)}
              </Text>
            </Box>
            <Box marginTop={1} flexDirection="column" flexShrink={0}>
              <Text bold>Recent jobs</Text>
              <Table columns={recentColumns} rows={s.recent_jobs} rowKey={(j) => `${j.kind}-${j.id}`} selected={-1} height={recentHeight} width={width} emptyText="No jobs yet." />
            </Box>
          </>
        )}
      </Box>
      <HelpBar keys={[{ key: '1-5', label: 'screens' }, ...GLOBAL_KEYS]} width={width} />
    </Box>
  );
}
