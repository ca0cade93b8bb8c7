import { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import type { Key } from 'ink';
import { Banner } from '../components/Banner.js';
import { HelpBar } from '../components/HelpBar.js';
import type { KeyHint } from '../components/HelpBar.js';
import { SnippetDetail, maxSnippetOffset } from '../components/SnippetDetail.js';
import { Table } from '../components/Table.js';
import type { Column } from '../components/Table.js';
import { TextField, editText } from '../components/TextField.js';
import { useDashboard, useKeyMode } from '../data/context.js';
import type { KeyMode } from '../data/context.js';
import { errorMessage } from '../data/connection.js';
import { useJobEvents, useLatestState, useResource, useThrottled } from '../data/hooks.js';
import type { JobStarted, SnippetHit, SourceRow } from '../data/types.js';
import { formatAgo, formatCount } from '../format.js';
import { GLOBAL_KEYS, TEXT_GLOBAL_KEYS } from '../keys.js';
import { validateSourceForm } from '../source-form.js';
import type { SourceFormErrors, SourceFormValues } from '../source-form.js';
import { stateColor, theme } from '../theme.js';
import type { ScreenProps } from './types.js';

const POLL_MS = 5000;
const SNIPPET_LIMIT = 200;
const FIELDS: Array<{ name: keyof SourceFormValues; label: string; placeholder: string }> = [
  { name: 'name', label: 'Name', placeholder: '' },
  { name: 'version', label: 'Version', placeholder: '(unversioned)' },
  { name: 'urlPatterns', label: 'URL patterns', placeholder: 'comma-separated globs, e.g. /docs/*, /api/*' },
];

type Mode = 'list' | 'filter' | 'edit' | 'delete' | 'snippets' | 'snippet';
type Notice = { kind: 'success' | 'error' | 'info'; message: string } | null;

const KEY_MODES: Record<Mode, KeyMode> = { list: 'navigate', filter: 'text', edit: 'modal', delete: 'modal', snippets: 'navigate', snippet: 'navigate' };

export function filterSources(sources: SourceRow[], filter: string): SourceRow[] {
  const f = filter.trim().toLowerCase();
  if (!f) return sources;
  return sources.filter((s) => s.name.toLowerCase().includes(f) || s.version.toLowerCase().includes(f));
}

function label(s: SourceRow): string {
  return s.version ? `${s.name} ${s.version}` : s.name;
}

function moveIndex(index: number, count: number, key: Key, input: string, page: number): number {
  if (key.upArrow || input === 'k') return Math.max(0, index - 1);
  if (key.downArrow || input === 'j') return Math.min(count - 1, index + 1);
  if (key.pageUp) return Math.max(0, index - page);
  if (key.pageDown) return Math.min(count - 1, index + page);
  if (key.home) return 0;
  if (key.end) return count - 1;
  return index;
}

export function Sources({ active, width, height }: ScreenProps) {
  const { data, now } = useDashboard();
  const sources = useResource(() => data.sources(), { intervalMs: POLL_MS, active });
  const reloadSoon = useThrottled(sources.reload, 1000);
  useJobEvents((event) => {
    if (event.event === 'job_complete') reloadSoon();
  });

  // Read by the key handler through their refs: keys that arrive together each see the one before.
  const [mode, setMode, modeRef] = useLatestState<Mode>('list');
  const [filter, setFilter, filterRef] = useLatestState('');
  const [selectedId, setSelectedId, selectedIdRef] = useLatestState<string | null>(null);
  const [notice, setNotice] = useState<Notice>(null);
  const [form, setForm, formRef] = useLatestState<SourceFormValues>({ name: '', version: '', urlPatterns: '' });
  const [formErrors, setFormErrors] = useState<SourceFormErrors>({});
  const [field, setField, fieldRef] = useLatestState(0);
  const [saving, setSaving] = useState(false);
  const [loadingForm, setLoadingForm] = useState(false);
  const [snippetIndex, setSnippetIndex, snippetIndexRef] = useLatestState(0);
  const [snippetOffset, setSnippetOffset] = useState(0);
  useKeyMode(KEY_MODES[mode], active);

  const rows = filterSources(sources.data ?? [], filter);
  const index = Math.max(0, rows.findIndex((s) => s.id === selectedId));
  const selected = rows[index];
  const openId = mode === 'snippets' || mode === 'snippet' ? selected?.id : undefined;
  const snippets = useResource<SnippetHit[]>(() => (openId ? data.sourceSnippets(openId, { limit: SNIPPET_LIMIT }) : Promise.resolve([])), {
    key: openId ?? '',
    active: active && Boolean(openId),
  });
  const snippetRows = snippets.data ?? [];
  const snippet = snippetRows[Math.min(snippetIndex, snippetRows.length - 1)];

  const tableHeight = Math.max(3, height - 2 - (notice ? 1 : 0) - (sources.error ? 1 : 0) - (mode === 'edit' ? 3 + FIELDS.length + Object.values(formErrors).filter(Boolean).length : mode === 'delete' ? 1 : 0));

  const act = (labelText: string, action: () => Promise<unknown>, onDone?: (result: unknown) => void) => {
    setNotice({ kind: 'info', message: `${labelText}…` });
    action().then(
      (result) => {
        onDone?.(result);
        sources.reload();
      },
      (error: unknown) => setNotice({ kind: 'error', message: `${labelText} failed: ${errorMessage(error)}` }),
    );
  };

  const save = (selected: SourceRow | undefined) => {
    if (!selected || saving || loadingForm) return;
    const result = validateSourceForm(formRef.current);
    if (!result.ok) {
      setFormErrors(result.errors);
      return;
    }
    setSaving(true);
    data.updateSource(selected.id, result.edit).then(
      () => {
        setSaving(false);
        setMode('list');
        setNotice({ kind: 'success', message: `Saved ${result.edit.name}.` });
        sources.reload();
      },
      (error: unknown) => {
        setSaving(false);
        // The form stays open with what was typed: a rejected save (name taken) is fixed in place.
        setFormErrors({ name: errorMessage(error) });
      },
    );
  };

  /** The selection as of the last key, not the last render. */
  const current = () => {
    const rows = filterSources(sources.data ?? [], filterRef.current);
    const index = Math.max(0, rows.findIndex((s) => s.id === selectedIdRef.current));
    return { rows, index, selected: rows[index] };
  };

  const filterKey = (input: string, key: Key) => {
    const { rows, index } = current();
    if (key.return || key.escape) {
      if (key.escape) setFilter('');
      setMode('list');
    } else if (key.upArrow || key.downArrow) setSelectedId(rows[moveIndex(index, rows.length, key, '', 1)]?.id ?? null);
    else if (!key.tab) setFilter((f) => editText(f, input, key));
  };

  const editKey = (input: string, key: Key) => {
    if (key.escape) {
      setMode('list');
      setNotice(null);
    } else if (key.return) save(current().selected);
    else if (key.tab || key.downArrow || key.upArrow) setField((f) => (f + (key.shift || key.upArrow ? FIELDS.length - 1 : 1)) % FIELDS.length);
    else {
      const name = FIELDS[fieldRef.current]!.name;
      setForm((v) => ({ ...v, [name]: editText(v[name], input, key) }));
      setFormErrors((e) => ({ ...e, [name]: undefined }));
    }
  };

  const deleteKey = (input: string, key: Key) => {
    const { selected } = current();
    if (input === 'y' && selected) {
      const target = selected;
      setMode('list');
      act(`Delete ${label(target)}`, () => data.deleteSource(target.id), () => setNotice({ kind: 'success', message: `Deleted ${label(target)}.` }));
    } else if (input === 'n' || key.escape || key.return) {
      setMode('list');
      setNotice({ kind: 'info', message: 'Delete cancelled.' });
    }
  };

  const snippetKey = (input: string, key: Key) => {
    const max = snippet ? maxSnippetOffset(snippet, height - 1) : 0;
    const page = Math.max(1, height - 8);
    if (key.escape || key.backspace || key.delete) setMode('snippets');
    else if (key.downArrow || input === 'j') setSnippetOffset((o) => Math.min(max, o + 1));
    else if (key.upArrow || input === 'k') setSnippetOffset((o) => Math.max(0, o - 1));
    else if (key.pageDown || input === ' ') setSnippetOffset((o) => Math.min(max, o + page));
    else if (key.pageUp) setSnippetOffset((o) => Math.max(0, o - page));
  };

  const snippetsKey = (input: string, key: Key) => {
    if (key.escape || key.backspace || key.delete) setMode('list');
    else if (key.return && snippetRows[Math.min(snippetIndexRef.current, snippetRows.length - 1)]) {
      setSnippetOffset(0);
      setMode('snippet');
    } else setSnippetIndex((i) => Math.max(0, moveIndex(i, snippetRows.length, key, input, tableHeight - 1)));
  };

  const recrawl = (selected: SourceRow) => {
    if (selected.kind === 'upload') {
      setNotice({ kind: 'error', message: `${label(selected)} was uploaded, not crawled; upload it again to refresh it.` });
      return;
    }
    act(`Recrawl ${label(selected)}`, () => data.recrawlSource(selected.id), (result) => {
      const started = result as JobStarted;
      setNotice(
        started.warning
          ? { kind: 'info', message: `Recrawl of ${label(selected)} queued (job ${started.jobId.slice(0, 8)}). ${started.warning}` }
          : { kind: 'success', message: `Recrawl of ${label(selected)} queued (job ${started.jobId.slice(0, 8)}). See screen 3.` },
      );
    });
  };

  const openEdit = (target: SourceRow) => {
    setForm({ name: target.name, version: target.version, urlPatterns: '' });
    setFormErrors({});
    setField(0);
    setNotice(null);
    setLoadingForm(true);
    setMode('edit');
    // The patterns live in the stored crawl configuration, read fresh so the form edits what is saved.
    data.sourceEdit(target.id).then(
      (edit) => {
        setLoadingForm(false);
        setForm({ name: edit.name, version: edit.version, urlPatterns: edit.urlPatterns.join(', ') });
      },
      (error: unknown) => {
        setLoadingForm(false);
        setMode('list');
        setNotice({ kind: 'error', message: `Could not load ${label(target)}: ${errorMessage(error)}` });
      },
    );
  };

  const listKey = (input: string, key: Key) => {
    if (input === '/') {
      setMode('filter');
      return;
    }
    if (key.escape && filterRef.current) {
      setFilter('');
      return;
    }
    const { rows, index, selected } = current();
    if (!selected) return;
    const next = moveIndex(index, rows.length, key, input, tableHeight - 1);
    if (next !== index) setSelectedId(rows[next]?.id ?? null);
    else if (input === 'r') recrawl(selected);
    else if (input === 'e') openEdit(selected);
    else if (input === 'd') {
      setNotice(null);
      setMode('delete');
    } else if (key.return) {
      setSnippetIndex(0);
      setMode('snippets');
    }
  };

  const keyHandlers: Record<Mode, (input: string, key: Key) => void> = {
    list: listKey,
    filter: filterKey,
    edit: editKey,
    delete: deleteKey,
    snippets: snippetsKey,
    snippet: snippetKey,
  };

  useInput(
    (input, key) => keyHandlers[modeRef.current](input, key),
    { isActive: active },
  );

  const columns: Column<SourceRow>[] = [
    { header: 'name', value: (s) => s.name },
    { header: 'version', width: 10, value: (s) => s.version || '-' },
    { header: 'snippets', width: 8, align: 'right', value: (s) => formatCount(s.snippets) },
    { header: 'pages', width: 6, align: 'right', value: (s) => formatCount(s.pages) },
    { header: 'last crawl', width: 10, value: (s) => formatAgo(s.lastCrawledAt, now()) },
    { header: 'state', width: 10, value: (s) => s.state, color: (s) => stateColor(s.state) },
  ];

  const help: KeyHint[] =
    mode === 'filter'
      ? [{ key: 'enter', label: 'keep filter' }, { key: 'esc', label: 'clear' }, ...TEXT_GLOBAL_KEYS]
      : mode === 'edit'
        ? [{ key: 'tab/↑↓', label: 'field' }, { key: 'enter', label: 'save' }, { key: 'esc', label: 'cancel' }]
        : mode === 'delete'
          ? [{ key: 'y', label: 'delete' }, { key: 'n/esc', label: 'keep' }]
          : mode === 'snippets'
            ? [{ key: '↑↓', label: 'select' }, { key: 'enter', label: 'show' }, { key: 'esc', label: 'back' }, ...GLOBAL_KEYS]
            : mode === 'snippet'
              ? [{ key: '↑↓', label: 'scroll' }, { key: 'esc', label: 'back' }, ...GLOBAL_KEYS]
              : [
                  { key: '↑↓', label: 'select' },
                  { key: '/', label: 'filter' },
                  { key: 'enter', label: 'open' },
                  { key: 'r', label: 'recrawl' },
                  { key: 'e', label: 'edit' },
                  { key: 'd', label: 'delete' },
                  ...GLOBAL_KEYS,
                ];

  const snippetColumns: Column<SnippetHit>[] = [
    { header: 'title', value: (s) => s.title || '(untitled)' },
    { header: 'language', width: 12, value: (s) => s.language },
    { header: 'page', value: (s) => s.url },
  ];

  let body;
  if ((mode === 'snippet' && snippet) || mode === 'snippets') {
    body =
      mode === 'snippet' && snippet ? (
        <SnippetDetail snippet={snippet} width={width} height={height - 1} offset={snippetOffset} />
      ) : (
        <Box flexDirection="column">
          <Text bold wrap="truncate-end">
            Snippets of {selected ? label(selected) : ''}
            <Text color={theme.text.secondary}>{snippets.loading && !snippets.data ? '  loading…' : `  ${snippetRows.length}${snippetRows.length === SNIPPET_LIMIT ? '+' : ''}`}</Text>
          </Text>
          {snippets.error ? <Banner kind="error" message={snippets.error} width={width} /> : null}
          <Table columns={snippetColumns} rows={snippetRows} rowKey={(s) => String(s.id)} selected={Math.min(snippetIndex, snippetRows.length - 1)} height={height - 2} width={width} emptyText={snippets.loading ? 'Loading…' : 'This source has no snippets.'} />
        </Box>
      );
  } else {
    body = (
      <Box flexDirection="column">
        {mode === 'filter' || filter ? (
          <TextField label="Filter" value={filter} focused={mode === 'filter'} width={width} />
        ) : (
          <Text color={theme.text.secondary} wrap="truncate-end">
            {sources.data ? `${sources.data.length} sources` : sources.loading ? 'Loading sources…' : ''}
            {'  '}press / to filter
          </Text>
        )}
        {sources.error ? <Banner kind="error" message={`Could not load sources: ${sources.error}`} width={width} /> : null}
        <Table columns={columns} rows={rows} rowKey={(s) => s.id} selected={rows.length ? index : -1} height={tableHeight} width={width} emptyText={filter ? `No source matches "${filter}".` : sources.loading ? 'Loading…' : 'No sources yet.'} />
        {mode === 'edit' && selected ? (
          <Box flexDirection="column" borderStyle="round" borderColor={theme.border.focused} width={width} paddingX={1}>
            <Text bold>Edit {label(selected)}{saving || loadingForm ? <Text color={theme.text.secondary}>{saving ? ' saving…' : ' loading…'}</Text> : null}</Text>
            {FIELDS.map((f, i) => (
              <TextField key={f.name} label={f.label} value={form[f.name]} focused={i === field} width={width - 4} placeholder={f.placeholder} error={formErrors[f.name]} />
            ))}
          </Box>
        ) : null}
        {mode === 'delete' && selected ? (
          <Text color={theme.status.warning} bold wrap="truncate-end">
            Delete {label(selected)} with its {formatCount(selected.snippets)} snippets and {formatCount(selected.pages)} pages? (y/N)
          </Text>
        ) : null}
      </Box>
    );
  }

  return (
    <Box flexDirection="column" width={width} height={height}>
      <Box flexDirection="column" flexGrow={1} overflow="hidden">
        {body}
      </Box>
      {notice ? <Banner kind={notice.kind} message={notice.message} width={width} /> : null}
      <HelpBar keys={help} width={width} />
    </Box>
  );
}
