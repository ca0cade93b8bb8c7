import { createContext, useCallback, useContext, useEffect, useMemo, useRef, useState } from 'react';
import type { ReactNode } from 'react';
import type { DashboardData, JobEvent } from './types.js';
import { errorMessage, isConnectionError, retryDelay } from './connection.js';

export interface ConnectionState {
  status: 'ok' | 'lost';
  /** Reconnection attempts so far in this outage. */
  attempt: number;
  /** When the next attempt runs (epoch ms), for the banner's countdown. */
  nextRetryAt: number | null;
  message: string | null;
}

/**
 * Which keys the App may take for itself: 'navigate' (q quits, digits switch screens), 'text' (a text field
 * has the keys; only Tab and Ctrl-C are global), 'modal' (a form or a confirmation owns every key but Ctrl-C).
 */
export type KeyMode = 'navigate' | 'text' | 'modal';

interface DashboardContextValue {
  data: DashboardData;
  connection: ConnectionState;
  /** Bumped after a reconnect so every resource reloads and the event stream is re-established. */
  generation: number;
  reportError(error: unknown): void;
  onJobEvent(listener: (event: JobEvent) => void): () => void;
  now(): number;
  keyMode: { current: KeyMode };
}

const DashboardContext = createContext<DashboardContextValue | null>(null);

export interface DashboardProviderProps {
  data: DashboardData;
  children: ReactNode;
  retry?: { baseMs: number; maxMs: number };
  now?: () => number;
}

/**
 * One LISTEN connection for the whole dashboard, fanned out to the screens: returns how a screen listens.
 * Subscribed while the connection is ok, again after each reconnect (`generation`).
 */
function useJobEventStream(data: DashboardData, generation: number, status: ConnectionState['status'], reportError: (error: unknown) => void) {
  const listeners = useRef(new Set<(event: JobEvent) => void>());
  useEffect(() => {
    if (status !== 'ok') return;
    let closed = false;
    let subscription: { close(): Promise<void> } | undefined;
    const dispatch = (event: JobEvent) => {
      for (const listener of listeners.current) listener(event);
    };
    const fail = (error: unknown) => {
      if (closed) return;
      // A dropped LISTEN connection is a lost connection: the retry loop re-subscribes after the next ping.
      reportError(isConnectionError(error) ? error : Object.assign(new Error(errorMessage(error)), { code: '08006' }));
    };
    data.subscribe(dispatch, fail).then((s) => {
      if (closed) void s.close();
      else subscription = s;
    }, fail);
    return () => {
      closed = true;
      void subscription?.close();
    };
    // The status, not the whole connection object: the countdown must not re-subscribe.
  }, [data, generation, status, reportError]);

  const onJobEvent = useCallback((listener: (event: JobEvent) => void) => {
    listeners.current.add(listener);
    return () => {
      listeners.current.delete(listener);
    };
  }, []);

  return onJobEvent;
}

export function DashboardProvider({ data, children, retry = { baseMs: 1000, maxMs: 10_000 }, now = Date.now }: DashboardProviderProps) {
  const [connection, setConnection] = useState<ConnectionState>({ status: 'ok', attempt: 0, nextRetryAt: null, message: null });
  const [generation, setGeneration] = useState(0);
  const keyMode = useRef<KeyMode>('navigate');
  const mounted = useRef(true);
  useEffect(() => {
    mounted.current = true;
    return () => {
      mounted.current = false;
    };
  }, []);

  const reportError = useCallback(
    (error: unknown) => {
      if (!mounted.current || !isConnectionError(error)) return;
      setConnection((c) => (c.status === 'lost' ? c : { status: 'lost', attempt: 1, nextRetryAt: now() + retryDelay(1, retry.baseMs, retry.maxMs), message: errorMessage(error) }));
    },
    [now, retry.baseMs, retry.maxMs],
  );

  // The retry loop: ping until the server answers, then reload everything.
  useEffect(() => {
    if (connection.status !== 'lost') return;
    const delay = Math.max(0, (connection.nextRetryAt ?? now()) - now());
    const timer = setTimeout(() => {
      data.ping().then(
        () => {
          if (!mounted.current) return;
          setConnection({ status: 'ok', attempt: 0, nextRetryAt: null, message: null });
          setGeneration((g) => g + 1);
        },
        (error: unknown) => {
          if (!mounted.current) return;
          setConnection((c) => ({
            status: 'lost',
            attempt: c.attempt + 1,
            nextRetryAt: now() + retryDelay(c.attempt + 1, retry.baseMs, retry.maxMs),
            message: errorMessage(error),
          }));
        },
      );
    }, delay);
    return () => clearTimeout(timer);
  }, [connection, data, now, retry.baseMs, retry.maxMs]);

  const onJobEvent = useJobEventStream(data, generation, connection.status, reportError);

  const value = useMemo<DashboardContextValue>(() => ({ data, connection, generation, reportError, onJobEvent, now, keyMode }), [data, connection, generation, reportError, onJobEvent, now]);
  return <DashboardContext.Provider value={value}>{children}</DashboardContext.Provider>;
}

export function useDashboard(): DashboardContextValue {
  const value = useContext(DashboardContext);
  if (!value) throw new Error('useDashboard() outside <DashboardProvider>');
  return value;
}

/** Claims the keyboard for the calling screen while `mode` holds (and `active`). */
export function useKeyMode(mode: KeyMode, active = true): void {
  const { keyMode } = useDashboard();
  // Set during render too: a key that arrives before the effect runs must already see the new mode.
  if (active) keyMode.current = mode;
  useEffect(() => {
    if (!active) return;
    keyMode.current = mode;
    return () => {
      keyMode.current = 'navigate';
    };
  }, [active, mode, keyMode]);
}
