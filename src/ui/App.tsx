import { useEffect, useState } from 'react';
import { Box, Text, useApp, useInput, useWindowSize } from 'ink';
import { Banner } from './components/Banner.js';
import { TabBar } from './components/TabBar.js';
import { useDashboard } from './data/context.js';
import { Agent } from './screens/Agent.js';
import { Jobs } from './screens/Jobs.js';
import { Overview } from './screens/Overview.js';
import { Search } from './screens/Search.js';
import { Sources } from './screens/Sources.js';
import { theme } from './theme.js';

export const SCREENS = ['Overview', 'Sources', 'Jobs', 'Search', 'Agent'] as const;
export type ScreenName = (typeof SCREENS)[number];

// Below this the tables cannot show a useful row; say so instead of drawing garbage.
export const MIN_COLUMNS = 60;
export const MIN_ROWS = 16;

export interface AppProps {
  initialScreen?: ScreenName;
  /** Search debounce, shortened by tests. */
  searchDebounceMs?: number;
}

function ConnectionBanner({ width }: { width: number }) {
  const { connection, now } = useDashboard();
  const [, setTick] = useState(0);
  // Re-render once a second while disconnected so the countdown moves.
  useEffect(() => {
    if (connection.status !== 'lost') return;
    const timer = setInterval(() => setTick((t) => t + 1), 1000);
    return () => clearInterval(timer);
  }, [connection.status]);
  if (connection.status !== 'lost') return null;
  const seconds = Math.max(0, Math.ceil(((connection.nextRetryAt ?? now()) - now()) / 1000));
  return (
    <Banner
      kind="error"
      width={width}
      message={`Database connection lost (${connection.message ?? 'unknown error'}). ${seconds > 0 ? `Retrying in ${seconds}s` : 'Retrying now'}, attempt ${connection.attempt}. Showing the last data loaded.`}
    />
  );
}

/**
 * The dashboard: a tab bar, the connection banner, the five screens (kept mounted so each keeps its place)
 * and their help bars. Keys that belong to the whole app are handled here; the rest go to the active screen.
 */
export function App({ initialScreen = 'Overview', searchDebounceMs }: AppProps) {
  const { exit } = useApp();
  const { columns, rows } = useWindowSize();
  const { data, connection, keyMode } = useDashboard();
  const [screen, setScreen] = useState<number>(SCREENS.indexOf(initialScreen));

  useInput((input, key) => {
    if (key.ctrl && input === 'c') {
      exit();
      return;
    }
    const mode = keyMode.current;
    if (mode === 'modal') return;
    if (key.tab) {
      setScreen((s) => (s + (key.shift ? SCREENS.length - 1 : 1)) % SCREENS.length);
      return;
    }
    if (mode !== 'navigate') return;
    if (input === 'q') exit();
    else if (/^[1-5]$/.test(input)) setScreen(Number(input) - 1);
  });

  if (columns < MIN_COLUMNS || rows < MIN_ROWS) {
    return (
      <Box width={columns} height={rows} flexDirection="column">
        <Text color={theme.status.warning}>
          Terminal too small ({columns}×{rows}); docdex dashboard needs at least {MIN_COLUMNS}×{MIN_ROWS}.
        </Text>
        <Text color={theme.text.secondary}>Enlarge the window, or press q to quit.</Text>
      </Box>
    );
  }

  const bannerLines = connection.status === 'lost' ? 1 : 0;
  const bodyHeight = rows - 1 - bannerLines;
  return (
    <Box width={columns} height={rows} flexDirection="column" overflow="hidden">
      <TabBar title="docdex" tabs={[...SCREENS]} active={screen} right={data.display} width={columns} numbered={SCREENS[screen] !== 'Search'} />
      <ConnectionBanner width={columns} />
      <Box display={screen === 0 ? 'flex' : 'none'}>
        <Overview active={screen === 0} width={columns} height={bodyHeight} />
      </Box>
      <Box display={screen === 1 ? 'flex' : 'none'}>
        <Sources active={screen === 1} width={columns} height={bodyHeight} />
      </Box>
      <Box display={screen === 2 ? 'flex' : 'none'}>
        <Jobs active={screen === 2} width={columns} height={bodyHeight} />
      </Box>
      <Box display={screen === 3 ? 'flex' : 'none'}>
        <Search active={screen === 3} width={columns} height={bodyHeight} {...(searchDebounceMs === undefined ? {} : { debounceMs: searchDebounceMs })} />
      </Box>
      <Box display={screen === 4 ? 'flex' : 'none'}>
        <Agent active={screen === 4} width={columns} height={bodyHeight} />
      </Box>
    </Box>
  );
}
