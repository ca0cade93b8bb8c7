/**
 * What one MCP session remembers between calls: the snippets it has already returned in full, so a later
 * answer can name them in one line instead of repeating their code. One object per server instance
 * (`createDocdexMcpServer`): streamable HTTP and SSE create one per session, stdio one per process, so no
 * session ever sees another's state. Bounded: the oldest entries are forgotten first, and a forgotten
 * snippet is simply shown in full again.
 */
export interface McpSession {
  /** True when the snippet was returned in full earlier in this session. */
  hasShown(key: string): boolean;
  /** Records snippets returned in full by the answer being sent. */
  markShown(keys: Iterable<string>): void;
}

/** Enough for a long working session; each entry is a short key. */
export const DEFAULT_SESSION_ENTRIES = 5_000;

/** A session that remembers up to `maxEntries` snippets, least recently shown forgotten first. */
export function createMcpSession(maxEntries = DEFAULT_SESSION_ENTRIES): McpSession {
  const shown = new Set<string>();
  return {
    hasShown: (key) => shown.has(key),
    markShown(keys) {
      for (const key of keys) {
        // Re-inserting moves the key to the end of the Set's insertion order: the newest.
        shown.delete(key);
        shown.add(key);
      }
      for (const oldest of shown) {
        if (shown.size <= maxEntries) break;
        shown.delete(oldest);
      }
    },
  };
}

/**
 * For callers without sessions (the REST tool endpoint serves every client from one server): remembers
 * nothing, so no answer refers to a snippet another caller was shown.
 */
export function createSessionlessMcpSession(): McpSession {
  return { hasShown: () => false, markShown: () => undefined };
}

/** The session key of a snippet: ids are unique across libraries. */
export function snippetSessionKey(id: number | string): string {
  return `snippet:${id}`;
}
