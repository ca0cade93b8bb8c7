/** The real npm registry, as `add` finds it (npm's own configuration). Null when reachable, else why not: tests skip only then. */
export async function npmRegistryReachable(): Promise<string | null> {
  try {
    const response = await fetch('https://registry.npmjs.org/is-number', { signal: AbortSignal.timeout(15_000) });
    await response.body?.cancel();
    return response.ok ? null : `it answered HTTP ${response.status}`;
  } catch (error) {
    return (error as Error).message;
  }
}
