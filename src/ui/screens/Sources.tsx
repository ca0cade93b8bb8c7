import { useState } from 'react';
import { Box, useInput } from 'ink';
import { Banner } from '../components/Banner.js';
import { HelpBar } from '../components/HelpBar.js';
import { SnippetDetail } from '../components/SnippetDetail.js';
import { useDashboard, useKeyMode } from '../data/context.js';
import type { KeyMode } from '../data/context.js';
import { useJobEvents, useLatestState, useResource, useThrottled } from '../data/hooks.js';
import type { SourceRow } from '../data/types.js';
import { useSnippetBrowser, useSourceActions, useSourceForm } from './sources/hooks.js';
import { handleSourceKey } from './sources/keys.js';
import type { SourceKeyContext } from './sources/keys.js';
import { FIELDS, SourceDeletePrompt, SourceEditForm, SourceList, SourceSnippets, sourcesHelp } from './sources/parts.js';
import type { Mode, Notice } from './sources/parts.js';
import type { ScreenProps } from './types.js';

const POLL_MS = 5000;

const KEY_MODES: Record<Mode, KeyMode> = { list: 'navigate', filter: 'text', edit: 'modal', delete: 'modal', snippets: 'navigate', snippet: 'navigate' };

export function filterSources(sources: SourceRow[], filter: string): SourceRow[] {
  const f = filter.trim().toLowerCase();
  if (!f) return sources;
  return sources.filter((s) => s.name.toLowerCase().includes(f) || s.version.toLowerCase().includes(f));
}

/** The source list, polled and reloaded soon after any job completes. */
function useSourceRows(active: boolean) {
  const { data } = useDashboard();
  const sources = useResource(() => data.sources(), { intervalMs: POLL_MS, active });
  const reloadSoon = useThrottled(sources.reload, 1000);
  useJobEvents((event) => {
    if (event.event === 'job_complete') reloadSoon();
  });
  return sources;
}

export function Sources({ active, width, height }: ScreenProps) {
  const { data, now } = useDashboard();
  const sources = useSourceRows(active);
  // Read by the key handler through their refs: keys that arrive together each see the one before.
  const [mode, setMode, modeRef] = useLatestState<Mode>('list');
  const [filter, setFilter, filterRef] = useLatestState('');
  const [selectedId, setSelectedId, selectedIdRef] = useLatestState<string | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  useKeyMode(KEY_MODES[mode], active);

  const rows = filterSources(sources.data ?? [], filter);
  const index = Math.max(
    0,
    rows.findIndex((s) => s.id === selectedId),
  );
  const selected = rows[index];
  const browser = useSnippetBrowser(data, mode === 'snippets' || mode === 'snippet' ? selected?.id : undefined, active);
  const form = useSourceForm({ data, setMode, setNotice, reload: sources.reload });
  const actions = useSourceActions({ data, setNotice, reload: sources.reload });
  const formLines = mode === 'edit' ? 3 + FIELDS.length + Object.values(form.errors).filter(Boolean).length : mode === 'delete' ? 1 : 0;
  const tableHeight = Math.max(3, height - 2 - (notice ? 1 : 0) - (sources.error ? 1 : 0) - formLines);

  const keys: SourceKeyContext = {
    /** The selection as of the last key, not the last render. */
    current: () => {
      const rows = filterSources(sources.data ?? [], filterRef.current);
      const index = Math.max(
        0,
        rows.findIndex((s) => s.id === selectedIdRef.current),
      );
      return { rows, index, selected: rows[index] };
    },
    filterRef,
    setMode,
    setFilter,
    setSelectedId,
    setNotice,
    form,
    actions,
    browser,
    tableHeight,
    height,
  };
  useInput((input, key) => handleSourceKey(modeRef.current, keys, input, key), { isActive: active });

  let body;
  if (mode === 'snippet' && browser.snippet) body = <SnippetDetail snippet={browser.snippet} width={width} height={height - 1} offset={browser.offset} />;
  else if (mode === 'snippets' || mode === 'snippet') body = <SourceSnippets source={selected} snippets={browser.snippets} selected={browser.index} width={width} height={height} />;
  else {
    body = (
      <SourceList sources={sources} rows={rows} index={index} filter={filter} filtering={mode === 'filter'} now={now()} width={width} height={tableHeight}>
        {mode === 'edit' && selected ? <SourceEditForm source={selected} form={form.form} errors={form.errors} field={form.field} saving={form.saving} loading={form.loading} width={width} /> : null}
        {mode === 'delete' && selected ? <SourceDeletePrompt source={selected} /> : null}
      </SourceList>
    );
  }

  return (
    <Box flexDirection="column" width={width} height={height}>
      <Box flexDirection="column" flexGrow={1} overflow="hidden">
        {body}
      </Box>
      {notice ? <Banner kind={notice.kind} message={notice.message} width={width} /> : null}
      <HelpBar keys={sourcesHelp(mode)} width={width} />
    </Box>
  );
}
