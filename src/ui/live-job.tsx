import type { JobProgressView } from './job-view.js';
import { renderJobProgress } from './render.js';

/**
 * A live progress block for `crawl start --wait` / `crawl resume --wait` in a terminal: the same JobProgress
 * the dashboard's Jobs screen shows, redrawn in place (see renderJobProgress, which this wraps for the
 * crawl commands' update/stop interface). Ink stays behind this function so commands never touch React.
 */
export interface LiveJobDisplay {
  update(view: JobProgressView): void;
  /** Draws the final state and releases the terminal; the frame is on screen when this returns. */
  stop(view?: JobProgressView): void;
}

export function renderLiveJob(view: JobProgressView, options: { stdout?: NodeJS.WriteStream; width?: number } = {}): LiveJobDisplay {
  const progress = renderJobProgress(view, options);
  return {
    update: (next) => progress.update(next),
    stop(last) {
      void progress.finish(last);
    },
  };
}
