import { Box, Text } from 'ink';
import { jobStatusText } from '../../core/jobs/status-text.js';
import { formatCount, formatDuration, formatRate, truncate } from '../format.js';
import type { JobProgressView } from '../job-view.js';
import { isActive } from '../job-view.js';
import { stateColor, theme } from '../theme.js';
import { ProgressBar } from './ProgressBar.js';

export interface JobErrorLine {
  /** The page URL (crawl) or file path (upload) that failed. */
  location: string;
  error: string;
}

export interface JobProgressProps {
  job: JobProgressView;
  width: number;
  selected?: boolean;
  /** The last failed pages or files, shown under the job (newest first). */
  errors?: JobErrorLine[];
}

const STATUS_WIDTH = 10;

/**
 * One job: name, state and a progress bar; then counts, rate and ETA; then the URL being fetched or the file
 * being stored (or the error that ended the job). Used by the Jobs screen and by `crawl start --wait` /
 * `upload --wait`.
 */
export function JobProgress({ job, width, selected = false, errors }: JobProgressProps) {
  const unit = job.kind === 'crawl' ? 'pages' : 'files';
  const finished = job.status === 'completed';
  // A job that failed without storing anything did no work worth a bar or a rate, whatever it tried.
  const nothingDone = job.status === 'failed' && job.crawled === 0;
  // A finished job is 100% even if some found pages were never fetched (depth limit, cancelled peers).
  const ratio = finished ? 1 : nothingDone ? 0 : job.total > 0 ? job.done / job.total : 0;
  const nameWidth = Math.max(8, Math.min(40, Math.floor(width * 0.35)));
  const barWidth = Math.max(10, width - nameWidth - STATUS_WIDTH - 4);
  const active = isActive(job);
  // Completed with failed pages or files reads `partial`, as in `docdex jobs status` and `jobs list`.
  const status = jobStatusText(job.status, job.failed);
  const stats = [
    `${formatCount(job.crawled)}/${formatCount(job.total)} ${unit}`,
    `${formatCount(job.failed)} failed`,
    ...(job.skipped > 0 ? [`${formatCount(job.skipped)} skipped`] : []),
    `${formatCount(job.snippets)} ${job.snippets === 1 ? 'snippet' : 'snippets'}`,
    `${formatRate(nothingDone ? null : job.rate)} ${unit}/s`,
    `ETA ${active ? formatDuration(job.etaSeconds) : '-'}`,
  ].join(' · ');
  return (
    <Box flexDirection="column" width={width} flexShrink={0}>
      <Text wrap="truncate-end">
        <Text color={theme.text.accent}>{selected ? '› ' : '  '}</Text>
        <Text bold inverse={selected}>
          {truncate(job.name, nameWidth).padEnd(nameWidth)}
        </Text>{' '}
        <Text color={stateColor(status)}>{status.padEnd(STATUS_WIDTH)}</Text> <ProgressBar ratio={ratio} width={barWidth} />
      </Text>
      <Text color={theme.text.secondary} wrap="truncate-end">
        {'    '}
        {stats}
      </Text>
      {job.error ? (
        <Text color={theme.status.error} wrap="truncate-end">
          {'    '}error: {job.error}
        </Text>
      ) : active && job.currentUrl ? (
        <Text color={theme.text.link} wrap="truncate-end">
          {'    '}→ {job.currentUrl}
        </Text>
      ) : null}
      {errors && errors.length > 0 ? (
        <Box flexDirection="column">
          <Text color={theme.status.error}>{'    '}last errors:</Text>
          {errors.map((e, i) => (
            <Text key={`${e.location}-${i}`} wrap="truncate-end">
              {'      '}
              <Text color={theme.text.link}>{e.location}</Text> <Text color={theme.status.error}>{e.error}</Text>
            </Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}
