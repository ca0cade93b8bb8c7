import { useCallback, useEffect, useRef, useState } from 'react';
import { useDashboard } from './context.js';
import { errorMessage } from './connection.js';
import type { JobEvent } from './types.js';

export interface Resource<T> {
  /** The last value loaded; kept while a reload runs or fails, so the screen never goes blank. */
  data: T | undefined;
  error: string | null;
  loading: boolean;
  reload(): void;
}

/**
 * Loads `load()` in the background, never in render: on mount, when `key` changes, after a reconnect, on
 * `reload()`, and every `intervalMs` while `active` and connected. A slow answer to an old key is dropped.
 */
export function useResource<T>(load: () => Promise<T>, options: { key?: string; intervalMs?: number; active?: boolean } = {}): Resource<T> {
  const { generation, connection, reportError } = useDashboard();
  const { key = '', intervalMs, active = true } = options;
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const loader = useRef(load);
  loader.current = load;
  const sequence = useRef(0);
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const run = useCallback(() => {
    const ticket = ++sequence.current;
    setState((s) => (s.loading ? s : { ...s, loading: true }));
    loader.current().then(
      (data) => {
        if (mounted.current && ticket === sequence.current) setState({ data, error: null, loading: false });
      },
      (error: unknown) => {
        if (!mounted.current || ticket !== sequence.current) return;
        reportError(error);
        setState((s) => ({ data: s.data, error: errorMessage(error), loading: false }));
      },
    );
  }, [reportError]);

  const connected = connection.status === 'ok';
  useEffect(() => {
    if (active && connected) run();
  }, [run, key, generation, active, connected]);

  useEffect(() => {
    if (!intervalMs || !active || !connected) return;
    const timer = setInterval(run, intervalMs);
    return () => clearInterval(timer);
  }, [run, intervalMs, active, connected]);

  return { ...state, reload: run };
}

/** The value, once it has stopped changing for `ms`: search runs as you type without a query per key. */
export function useDebouncedValue<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

export function useJobEvents(listener: (event: JobEvent) => void): void {
  const { onJobEvent } = useDashboard();
  const current = useRef(listener);
  current.current = listener;
  useEffect(() => onJobEvent((event) => current.current(event)), [onJobEvent]);
}

/** Calls `fn` at most once per `ms`, trailing: a burst of progress events becomes one reload. */
export function useThrottled(fn: () => void, ms: number): () => void {
  const current = useRef(fn);
  current.current = fn;
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(
    () => () => {
      if (timer.current) clearTimeout(timer.current);
    },
    [],
  );
  return useCallback(() => {
    if (timer.current) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      current.current();
    }, ms);
  }, [ms]);
}

export type LatestSetter<T> = (next: T | ((current: T) => T)) => void;

/**
 * useState whose newest value can also be read at once, through the returned ref. Keys that arrive together
 * (a fast typist, a paste, a slow terminal) reach an input handler one after another before React renders
 * again, so a handler that reads render-time state sees the value from before the previous key: `Down Down`
 * would move one row and `Down Enter` open the row above. Handlers read `ref.current`; the setter updates it
 * at once (functional updates see the newest value too) and re-renders.
 */
export function useLatestState<T>(initial: T): [T, LatestSetter<T>, { readonly current: T }] {
  const [value, setValue] = useState(initial);
  const ref = useRef(value);
  const set = useCallback<LatestSetter<T>>((next) => {
    const resolved = typeof next === 'function' ? (next as (current: T) => T)(ref.current) : next;
    ref.current = resolved;
    setValue(() => resolved);
  }, []);
  return [value, set, ref];
}
