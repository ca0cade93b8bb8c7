import type { Key } from 'ink';
import { maxSnippetOffset } from '../../components/SnippetDetail.js';
import { editText } from '../../components/TextField.js';
import type { LatestSetter } from '../../data/hooks.js';
import type { SourceRow } from '../../data/types.js';
import type { SnippetBrowser, SourceForm, useSourceActions } from './hooks.js';
import type { Mode, Notice } from './parts.js';

/**
 * The Sources screen's keys, one handler per mode. Handlers read the selection through `current()` (refs, as
 * of the last key), never render-time state: keys that arrive together each see the one before.
 */
export interface SourceKeyContext {
  current(): { rows: SourceRow[]; index: number; selected: SourceRow | undefined };
  filterRef: { readonly current: string };
  setMode: LatestSetter<Mode>;
  setFilter: LatestSetter<string>;
  setSelectedId: LatestSetter<string | null>;
  setNotice: (notice: Notice) => void;
  form: SourceForm;
  actions: ReturnType<typeof useSourceActions>;
  browser: SnippetBrowser;
  tableHeight: number;
  height: number;
}

type Handler = (ctx: SourceKeyContext, input: string, key: Key) => void;

export function moveIndex(index: number, count: number, key: Key, input: string, page: number): number {
  if (key.upArrow || input === 'k') return Math.max(0, index - 1);
  if (key.downArrow || input === 'j') return Math.min(count - 1, index + 1);
  if (key.pageUp) return Math.max(0, index - page);
  if (key.pageDown) return Math.min(count - 1, index + page);
  if (key.home) return 0;
  if (key.end) return count - 1;
  return index;
}

const filterKey: Handler = (ctx, input, key) => {
  const { rows, index } = ctx.current();
  if (key.return || key.escape) {
    if (key.escape) ctx.setFilter('');
    ctx.setMode('list');
  } else if (key.upArrow || key.downArrow) ctx.setSelectedId(rows[moveIndex(index, rows.length, key, '', 1)]?.id ?? null);
  else if (!key.tab) ctx.setFilter((f) => editText(f, input, key));
};

const deleteKey: Handler = (ctx, input, key) => {
  const { selected } = ctx.current();
  if (input === 'y' && selected) {
    ctx.setMode('list');
    ctx.actions.remove(selected);
  } else if (input === 'n' || key.escape || key.return) {
    ctx.setMode('list');
    ctx.setNotice({ kind: 'info', message: 'Delete cancelled.' });
  }
};

const snippetKey: Handler = ({ browser, height, setMode }, input, key) => {
  const max = browser.snippet ? maxSnippetOffset(browser.snippet, height - 1) : 0;
  const page = Math.max(1, height - 8);
  if (key.escape || key.backspace || key.delete) setMode('snippets');
  else if (key.downArrow || input === 'j') browser.setOffset((o) => Math.min(max, o + 1));
  else if (key.upArrow || input === 'k') browser.setOffset((o) => Math.max(0, o - 1));
  else if (key.pageDown || input === ' ') browser.setOffset((o) => Math.min(max, o + page));
  else if (key.pageUp) browser.setOffset((o) => Math.max(0, o - page));
};

const snippetsKey: Handler = ({ browser, tableHeight, setMode }, input, key) => {
  if (key.escape || key.backspace || key.delete) setMode('list');
  else if (key.return && browser.rows[browser.clamp(browser.indexRef.current)]) {
    browser.setOffset(0);
    setMode('snippet');
  } else browser.setIndex((i) => Math.max(0, moveIndex(i, browser.rows.length, key, input, tableHeight - 1)));
};

const listKey: Handler = (ctx, input, key) => {
  if (input === '/') {
    ctx.setMode('filter');
    return;
  }
  if (key.escape && ctx.filterRef.current) {
    ctx.setFilter('');
    return;
  }
  const { rows, index, selected } = ctx.current();
  if (!selected) return;
  const next = moveIndex(index, rows.length, key, input, ctx.tableHeight - 1);
  if (next !== index) ctx.setSelectedId(rows[next]?.id ?? null);
  else if (input === 'r') ctx.actions.recrawl(selected);
  else if (input === 'e') ctx.form.open(selected);
  else if (input === 'd') {
    ctx.setNotice(null);
    ctx.setMode('delete');
  } else if (key.return) {
    ctx.browser.setIndex(0);
    ctx.setMode('snippets');
  }
};

const HANDLERS: Record<Mode, Handler> = {
  list: listKey,
  filter: filterKey,
  edit: (ctx, input, key) => ctx.form.key(input, key, ctx.current().selected),
  delete: deleteKey,
  snippets: snippetsKey,
  snippet: snippetKey,
};

export function handleSourceKey(mode: Mode, ctx: SourceKeyContext, input: string, key: Key): void {
  HANDLERS[mode](ctx, input, key);
}
