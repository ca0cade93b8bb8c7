import { useState } from 'react';
import type { Key } from 'ink';
import { editText } from '../../components/TextField.js';
import { errorMessage } from '../../data/connection.js';
import { useLatestState, useResource } from '../../data/hooks.js';
import type { LatestSetter } from '../../data/hooks.js';
import type { DashboardData, JobStarted, SnippetHit, SourceRow } from '../../data/types.js';
import { validateSourceForm } from '../../source-form.js';
import type { SourceFormErrors, SourceFormValues } from '../../source-form.js';
import { FIELDS, SNIPPET_LIMIT, label } from './parts.js';
import type { Mode, Notice } from './parts.js';

/** The Sources screen's state machines: the edit form, the actions on a source, the snippet browser. */

interface ScreenControls {
  data: DashboardData;
  setMode: LatestSetter<Mode>;
  setNotice: (notice: Notice) => void;
  reload: () => void;
}

/** Recrawl and delete: a notice while they run, the list reloaded after. */
export function useSourceActions({ data, setNotice, reload }: Omit<ScreenControls, 'setMode'>) {
  const act = (labelText: string, action: () => Promise<unknown>, onDone?: (result: unknown) => void) => {
    setNotice({ kind: 'info', message: `${labelText}…` });
    action().then(
      (result) => {
        onDone?.(result);
        reload();
      },
      (error: unknown) => setNotice({ kind: 'error', message: `${labelText} failed: ${errorMessage(error)}` }),
    );
  };
  const recrawl = (selected: SourceRow) => {
    if (selected.kind === 'upload') {
      setNotice({ kind: 'error', message: `${label(selected)} was uploaded, not crawled; upload it again to refresh it.` });
      return;
    }
    act(
      `Recrawl ${label(selected)}`,
      () => data.recrawlSource(selected.id),
      (result) => {
        const started = result as JobStarted;
        setNotice(
          started.warning
            ? { kind: 'info', message: `Recrawl of ${label(selected)} queued (job ${started.jobId.slice(0, 8)}). ${started.warning}` }
            : { kind: 'success', message: `Recrawl of ${label(selected)} queued (job ${started.jobId.slice(0, 8)}). See screen 3.` },
        );
      },
    );
  };
  const remove = (target: SourceRow) =>
    act(
      `Delete ${label(target)}`,
      () => data.deleteSource(target.id),
      () => setNotice({ kind: 'success', message: `Deleted ${label(target)}.` }),
    );
  return { recrawl, remove };
}

/** The edit form: opened with the stored values, saved after validation, kept open when a save is refused. */
export function useSourceForm({ data, setMode, setNotice, reload }: ScreenControls) {
  const [form, setForm, formRef] = useLatestState<SourceFormValues>({ name: '', version: '', urlPatterns: '' });
  const [errors, setErrors] = useState<SourceFormErrors>({});
  const [field, setField, fieldRef] = useLatestState(0);
  const [saving, setSaving] = useState(false);
  const [loading, setLoading] = useState(false);

  const save = (selected: SourceRow | undefined) => {
    if (!selected || saving || loading) return;
    const result = validateSourceForm(formRef.current);
    if (!result.ok) {
      setErrors(result.errors);
      return;
    }
    setSaving(true);
    data.updateSource(selected.id, result.edit).then(
      () => {
        setSaving(false);
        setMode('list');
        setNotice({ kind: 'success', message: `Saved ${result.edit.name}.` });
        reload();
      },
      (error: unknown) => {
        setSaving(false);
        // The form stays open with what was typed: a rejected save (name taken) is fixed in place.
        setErrors({ name: errorMessage(error) });
      },
    );
  };

  const open = (target: SourceRow) => {
    setForm({ name: target.name, version: target.version, urlPatterns: '' });
    setErrors({});
    setField(0);
    setNotice(null);
    setLoading(true);
    setMode('edit');
    // The patterns live in the stored crawl configuration, read fresh so the form edits what is saved.
    data.sourceEdit(target.id).then(
      (edit) => {
        setLoading(false);
        setForm({ name: edit.name, version: edit.version, urlPatterns: edit.urlPatterns.join(', ') });
      },
      (error: unknown) => {
        setLoading(false);
        setMode('list');
        setNotice({ kind: 'error', message: `Could not load ${label(target)}: ${errorMessage(error)}` });
      },
    );
  };

  /** One key in the form; `selected` is the source as of this key. */
  const key = (input: string, k: Key, selected: SourceRow | undefined) => {
    if (k.escape) {
      setMode('list');
      setNotice(null);
    } else if (k.return) save(selected);
    else if (k.tab || k.downArrow || k.upArrow) setField((f) => (f + (k.shift || k.upArrow ? FIELDS.length - 1 : 1)) % FIELDS.length);
    else {
      const name = FIELDS[fieldRef.current]!.name;
      setForm((v) => ({ ...v, [name]: editText(v[name], input, k) }));
      setErrors((e) => ({ ...e, [name]: undefined }));
    }
  };

  return { form, errors, field, saving, loading, open, key };
}
export type SourceForm = ReturnType<typeof useSourceForm>;

/** The snippets of the open source: the list's selection and the detail view's scroll offset. */
export function useSnippetBrowser(data: DashboardData, openId: string | undefined, active: boolean) {
  const snippets = useResource<SnippetHit[]>(() => (openId ? data.sourceSnippets(openId, { limit: SNIPPET_LIMIT }) : Promise.resolve([])), {
    key: openId ?? '',
    active: active && Boolean(openId),
  });
  const [index, setIndex, indexRef] = useLatestState(0);
  const [offset, setOffset] = useState(0);
  const rows = snippets.data ?? [];
  const clamp = (i: number) => Math.min(i, rows.length - 1);
  return { snippets, rows, index: clamp(index), snippet: rows[clamp(index)], setIndex, indexRef, offset, setOffset, clamp };
}
export type SnippetBrowser = ReturnType<typeof useSnippetBrowser>;
