/**
 * Polls `${base}/health` every 25 ms until `done()` (asked every fifth poll) says the work finished. Each
 * latency runs from the moment the poll was due, not from when it was sent: a blocked event loop (a test shares
 * the daemon's) delays the send, and that delay is what a client of a busy daemon sees. A poll that waited L ms
 * also stands for the polls that would have been sent every 25 ms meanwhile (latencies L - 25, L - 50, ...), as
 * latency recorders correct for a stalled sender; otherwise one 20 s stall would be one sample among many.
 */
export async function pollHealthUntil(base: string, done: () => Promise<boolean>): Promise<{ polls: number; latencies: number[] }> {
  const latencies: number[] = [];
  for (let i = 0; ; i++) {
    const due = performance.now() + 25;
    await new Promise((resolve) => setTimeout(resolve, 25));
    const res = await fetch(`${base}/health`);
    await res.arrayBuffer();
    const latency = performance.now() - due;
    for (let missed = latency; missed > 0; missed -= 25) latencies.push(missed);
    if (i % 5 === 4 && (await done())) return { polls: i + 1, latencies };
  }
}

export function percentile95(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.95) - 1)] as number;
}
