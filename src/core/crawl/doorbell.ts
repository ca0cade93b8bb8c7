/**
 * A promise-based doorbell: loops wait on it, anything may ring it. A ring while nobody waits is kept for the
 * next wait: a loop rung while it was busy (a new job announced during its last look at the queue) would
 * otherwise sleep its whole poll interval, and a crawl started right after its worker waited two seconds.
 */
export class Doorbell {
  private waiters: Array<() => void> = [];
  private rung = false;
  ring(): void {
    const w = this.waiters;
    this.waiters = [];
    this.rung = w.length === 0;
    for (const f of w) f();
  }
  wait(ms: number): Promise<void> {
    if (this.rung) {
      this.rung = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | null = null;
      const done = () => {
        if (timer) clearTimeout(timer);
        this.waiters = this.waiters.filter((f) => f !== done);
        resolve();
      };
      if (Number.isFinite(ms)) timer = setTimeout(done, ms);
      this.waiters.push(done);
    });
  }
}
