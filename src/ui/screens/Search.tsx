import { useEffect, useState } from 'react';
import { Box, Text, useInput } from 'ink';
import type { Key } from 'ink';
import { Banner } from '../components/Banner.js';
import { HelpBar } from '../components/HelpBar.js';
import { SnippetDetail, maxSnippetOffset } from '../components/SnippetDetail.js';
import { Table } from '../components/Table.js';
import type { Column } from '../components/Table.js';
import { TextField, editText } from '../components/TextField.js';
import { useDashboard, useKeyMode } from '../data/context.js';
import { useDebouncedValue, useLatestState, useResource } from '../data/hooks.js';
import type { Resource } from '../data/hooks.js';
import type { SearchHits, SnippetHit } from '../data/types.js';
import { GLOBAL_KEYS, TEXT_GLOBAL_KEYS } from '../keys.js';
import { theme } from '../theme.js';
import type { ScreenProps } from './types.js';

const LIMIT = 50;
const FIELDS = [
  { name: 'query', label: 'Search' },
  { name: 'source', label: 'source' },
  { name: 'language', label: 'language' },
] as const;
type FieldName = (typeof FIELDS)[number]['name'];

export interface SearchProps extends ScreenProps {
  /** Quiet time after the last key before the query runs. */
  debounceMs?: number;
}

type Fields = Record<FieldName, string>;
type Request = { query: string; source: string; language: string };

const COLUMNS: Column<SnippetHit>[] = [
  { header: 'title', value: (s) => `${s.title || '(untitled)'}${s.more ? ` (+${s.more} on this page)` : ''}` },
  { header: 'kind', width: 8, value: (s) => s.kind },
  { header: 'language', width: 11, value: (s) => s.language },
  { header: 'source', width: 14, value: (s) => (s.sourceVersion ? `${s.sourceName} ${s.sourceVersion}` : s.sourceName) },
  { header: 'page', value: (s) => s.url.replace(/^https?:\/\//, '') },
];

/** The search as typed, run once typing pauses for `debounceMs`; `typing` until then. */
function useSearchResults(fields: Fields, debounceMs: number, active: boolean) {
  const { data } = useDashboard();
  // Debounced as a string: an object would be a new value every render and never settle.
  const typed = JSON.stringify({ query: fields.query.trim(), source: fields.source.trim(), language: fields.language.trim().toLowerCase() });
  const requestKey = useDebouncedValue(typed, debounceMs);
  const request = JSON.parse(requestKey) as Request;
  const results = useResource<SearchHits | null>(
    () =>
      request.query
        ? data.search({ query: request.query, limit: LIMIT, ...(request.source ? { source: request.source } : {}), ...(request.language ? { language: request.language } : {}) })
        : Promise.resolve(null),
    { key: requestKey, active },
  );
  return { request, requestKey, results, rows: results.data?.hits ?? [], typing: requestKey !== typed };
}

function searchStatus(request: Request, results: Resource<SearchHits | null>, rows: SnippetHit[], typing: boolean): string {
  if (!request.query) return 'Type to search snippets; ←→ moves between the query and the source / language filters.';
  if (results.loading || typing) return 'searching…';
  const count = `${rows.length}${rows.length === LIMIT ? '+' : ''} result${rows.length === 1 ? '' : 's'}`;
  const closest = results.data?.closest;
  // A filter that names no library exactly searched another one: say which, as the CLI and MCP do.
  return closest ? `${count} in ${closest.name}${closest.version ? `@${closest.version}` : ''}, the closest match to "${closest.requested}"` : count;
}

/** Scrolls an open snippet; any of Esc, Backspace, Delete or Enter closes it. */
function detailKey(input: string, key: Key, max: number, page: number, setOffset: (update: (o: number) => number) => void, close: () => void): void {
  if (key.escape || key.backspace || key.delete || key.return) close();
  else if (key.downArrow || input === 'j') setOffset((o) => Math.min(max, o + 1));
  else if (key.upArrow || input === 'k') setOffset((o) => Math.max(0, o - 1));
  else if (key.pageDown || input === ' ') setOffset((o) => Math.min(max, o + page));
  else if (key.pageUp) setOffset((o) => Math.max(0, o - page));
}

function SearchDetail({ detail, width, height, offset }: { detail: SnippetHit; width: number; height: number; offset: number }) {
  return (
    <Box flexDirection="column" width={width} height={height}>
      <Box flexGrow={1} overflow="hidden">
        <SnippetDetail snippet={detail} width={width} height={height - 1} offset={offset} />
      </Box>
      <HelpBar keys={[{ key: '↑↓', label: 'scroll' }, { key: 'esc', label: 'back to results' }, ...GLOBAL_KEYS]} width={width} />
    </Box>
  );
}

function SearchFields({ fields, focus, width }: { fields: Fields; focus: number; width: number }) {
  const queryWidth = Math.max(20, Math.floor(width * 0.5));
  const filterWidth = Math.max(12, Math.floor((width - queryWidth - 2) / 2));
  return (
    <Box>
      <Box width={queryWidth}>
        <TextField label={FIELDS[0].label} value={fields.query} focused={focus === 0} width={queryWidth} />
      </Box>
      <Box width={filterWidth} marginLeft={1}>
        <TextField label={FIELDS[1].label} value={fields.source} focused={focus === 1} width={filterWidth} placeholder="any" />
      </Box>
      <Box width={filterWidth} marginLeft={1}>
        <TextField label={FIELDS[2].label} value={fields.language} focused={focus === 2} width={filterWidth} placeholder="any" />
      </Box>
    </Box>
  );
}

export function Search({ active, width, height, debounceMs = 250 }: SearchProps) {
  const [fields, setFields] = useState<Fields>({ query: '', source: '', language: '' });
  // Read by the key handler through their refs: keys that arrive together each see the one before.
  const [focus, setFocus, focusRef] = useLatestState(0);
  const [selected, setSelected, selectedRef] = useLatestState(0);
  const [detail, setDetail, detailRef] = useLatestState<SnippetHit | null>(null);
  const [offset, setOffset] = useState(0);
  useKeyMode(detail ? 'navigate' : 'text', active);
  const { request, requestKey, results, rows, typing } = useSearchResults(fields, debounceMs, active);
  useEffect(() => setSelected(0), [requestKey]);

  useInput(
    (input, key) => {
      const detail = detailRef.current;
      const name = FIELDS[focusRef.current]!.name;
      if (detail) detailKey(input, key, maxSnippetOffset(detail, height - 1), Math.max(1, height - 8), setOffset, () => setDetail(null));
      else if (key.upArrow) setSelected((i) => Math.max(0, i - 1));
      else if (key.downArrow) setSelected((i) => Math.min(rows.length - 1, i + 1));
      else if (key.leftArrow) setFocus((f) => (f + FIELDS.length - 1) % FIELDS.length);
      else if (key.rightArrow) setFocus((f) => (f + 1) % FIELDS.length);
      else if (key.return) {
        const hit = rows[selectedRef.current];
        if (hit) {
          setOffset(0);
          setDetail(hit);
        }
      } else if (key.escape) setFields((f) => ({ ...f, [name]: '' }));
      else if (!key.tab) setFields((f) => ({ ...f, [name]: editText(f[name], input, key) }));
    },
    { isActive: active },
  );

  if (detail) return <SearchDetail detail={detail} width={width} height={height} offset={offset} />;
  return (
    <Box flexDirection="column" width={width} height={height}>
      <SearchFields fields={fields} focus={focus} width={width} />
      <Text color={theme.text.secondary} wrap="truncate-end">
        {searchStatus(request, results, rows, typing)}
      </Text>
      {results.error ? <Banner kind="error" message={`Search failed: ${results.error}`} width={width} /> : null}
      <Box flexGrow={1} overflow="hidden">
        {request.query ? (
          <Table
            columns={COLUMNS}
            rows={rows}
            rowKey={(s) => String(s.id)}
            selected={rows.length ? Math.min(selected, rows.length - 1) : -1}
            height={height - 3 - (results.error ? 1 : 0)}
            width={width}
            emptyText={results.loading ? 'Searching…' : 'No snippet matches.'}
          />
        ) : null}
      </Box>
      <HelpBar keys={[{ key: '↑↓', label: 'select' }, { key: 'enter', label: 'open' }, { key: '←→', label: 'filters' }, { key: 'esc', label: 'clear' }, ...TEXT_GLOBAL_KEYS]} width={width} />
    </Box>
  );
}
