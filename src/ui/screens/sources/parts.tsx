import type { ReactNode } from 'react';
import { Box, Text } from 'ink';
import { Banner } from '../../components/Banner.js';
import type { KeyHint } from '../../components/HelpBar.js';
import { Table } from '../../components/Table.js';
import type { Column } from '../../components/Table.js';
import { TextField } from '../../components/TextField.js';
import type { Resource } from '../../data/hooks.js';
import type { SnippetHit, SourceRow } from '../../data/types.js';
import { formatAgo, formatCount } from '../../format.js';
import { GLOBAL_KEYS, TEXT_GLOBAL_KEYS } from '../../keys.js';
import type { SourceFormErrors, SourceFormValues } from '../../source-form.js';
import { stateColor, theme } from '../../theme.js';

/** The Sources screen's pieces that only draw: its list, edit form, delete prompt, snippet list and help. */

export type Mode = 'list' | 'filter' | 'edit' | 'delete' | 'snippets' | 'snippet';
export type Notice = { kind: 'success' | 'error' | 'info'; message: string } | null;

export const SNIPPET_LIMIT = 200;
export const FIELDS: Array<{ name: keyof SourceFormValues; label: string; placeholder: string }> = [
  { name: 'name', label: 'Name', placeholder: '' },
  { name: 'version', label: 'Version', placeholder: '(unversioned)' },
  { name: 'urlPatterns', label: 'URL patterns', placeholder: 'comma-separated globs, e.g. /docs/*, /api/*' },
];

export function label(s: SourceRow): string {
  return s.version ? `${s.name} ${s.version}` : s.name;
}

const LIST_KEYS: KeyHint[] = [
  { key: '↑↓', label: 'select' },
  { key: '/', label: 'filter' },
  { key: 'enter', label: 'open' },
  { key: 'r', label: 'recrawl' },
  { key: 'e', label: 'edit' },
  { key: 'd', label: 'delete' },
  ...GLOBAL_KEYS,
];

const HELP: Record<Mode, KeyHint[]> = {
  list: LIST_KEYS,
  filter: [{ key: 'enter', label: 'keep filter' }, { key: 'esc', label: 'clear' }, ...TEXT_GLOBAL_KEYS],
  edit: [
    { key: 'tab/↑↓', label: 'field' },
    { key: 'enter', label: 'save' },
    { key: 'esc', label: 'cancel' },
  ],
  delete: [
    { key: 'y', label: 'delete' },
    { key: 'n/esc', label: 'keep' },
  ],
  snippets: [{ key: '↑↓', label: 'select' }, { key: 'enter', label: 'show' }, { key: 'esc', label: 'back' }, ...GLOBAL_KEYS],
  snippet: [{ key: '↑↓', label: 'scroll' }, { key: 'esc', label: 'back' }, ...GLOBAL_KEYS],
};

export function sourcesHelp(mode: Mode): KeyHint[] {
  return HELP[mode];
}

function sourceColumns(now: number): Column<SourceRow>[] {
  return [
    { header: 'name', value: (s) => s.name },
    { header: 'version', width: 10, value: (s) => s.version || '-' },
    { header: 'snippets', width: 8, align: 'right', value: (s) => formatCount(s.snippets) },
    { header: 'pages', width: 6, align: 'right', value: (s) => formatCount(s.pages) },
    { header: 'last crawl', width: 10, value: (s) => formatAgo(s.lastCrawledAt, now) },
    { header: 'state', width: 10, value: (s) => s.state, color: (s) => stateColor(s.state) },
  ];
}

const SNIPPET_COLUMNS: Column<SnippetHit>[] = [
  { header: 'title', value: (s) => s.title || '(untitled)' },
  { header: 'language', width: 12, value: (s) => s.language },
  { header: 'page', value: (s) => s.url },
];

export interface SourceEditFormProps {
  source: SourceRow;
  form: SourceFormValues;
  errors: SourceFormErrors;
  field: number;
  saving: boolean;
  loading: boolean;
  width: number;
}

export function SourceEditForm({ source, form, errors, field, saving, loading, width }: SourceEditFormProps) {
  return (
    <Box flexDirection="column" borderStyle="round" borderColor={theme.border.focused} width={width} paddingX={1}>
      <Text bold>
        Edit {label(source)}
        {saving || loading ? <Text color={theme.text.secondary}>{saving ? ' saving…' : ' loading…'}</Text> : null}
      </Text>
      {FIELDS.map((f, i) => (
        <TextField key={f.name} label={f.label} value={form[f.name]} focused={i === field} width={width - 4} placeholder={f.placeholder} error={errors[f.name]} />
      ))}
    </Box>
  );
}

export function SourceDeletePrompt({ source }: { source: SourceRow }) {
  return (
    <Text color={theme.status.warning} bold wrap="truncate-end">
      Delete {label(source)} with its {formatCount(source.snippets)} snippets and {formatCount(source.pages)} pages? (y/N)
    </Text>
  );
}

export interface SourceListProps {
  sources: Resource<SourceRow[]>;
  rows: SourceRow[];
  index: number;
  filter: string;
  filtering: boolean;
  now: number;
  width: number;
  height: number;
  /** Drawn under the table: the edit form or the delete prompt. */
  children?: ReactNode;
}

export function SourceList({ sources, rows, index, filter, filtering, now, width, height, children }: SourceListProps) {
  return (
    <Box flexDirection="column">
      {filtering || filter ? (
        <TextField label="Filter" value={filter} focused={filtering} width={width} />
      ) : (
        <Text color={theme.text.secondary} wrap="truncate-end">
          {sources.data ? `${sources.data.length} sources` : sources.loading ? 'Loading sources…' : ''}
          {'  '}press / to filter
        </Text>
      )}
      {sources.error ? <Banner kind="error" message={`Could not load sources: ${sources.error}`} width={width} /> : null}
      <Table
        columns={sourceColumns(now)}
        rows={rows}
        rowKey={(s) => s.id}
        selected={rows.length ? index : -1}
        height={height}
        width={width}
        emptyText={filter ? `No source matches "${filter}".` : sources.loading ? 'Loading…' : 'No sources yet.'}
      />
      {children}
    </Box>
  );
}

export interface SourceSnippetsProps {
  source: SourceRow | undefined;
  snippets: Resource<SnippetHit[]>;
  selected: number;
  width: number;
  height: number;
}

export function SourceSnippets({ source, snippets, selected, width, height }: SourceSnippetsProps) {
  const rows = snippets.data ?? [];
  return (
    <Box flexDirection="column">
      <Text bold wrap="truncate-end">
        Snippets of {source ? label(source) : ''}
        <Text color={theme.text.secondary}>{snippets.loading && !snippets.data ? '  loading…' : `  ${rows.length}${rows.length === SNIPPET_LIMIT ? '+' : ''}`}</Text>
      </Text>
      {snippets.error ? <Banner kind="error" message={snippets.error} width={width} /> : null}
      <Table
        columns={SNIPPET_COLUMNS}
        rows={rows}
        rowKey={(s) => String(s.id)}
        selected={selected}
        height={height - 2}
        width={width}
        emptyText={snippets.loading ? 'Loading…' : 'This source has no snippets.'}
      />
    </Box>
  );
}
