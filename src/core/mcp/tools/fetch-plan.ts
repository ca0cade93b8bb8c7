import { z } from 'zod';
import type { CrawlJob } from '../../crawl/jobs.js';

/**
 * What a writing tool's job will fetch, stated in its result (text and structured content) so that a client
 * asking its user to confirm can show it: the hosts, how links are followed, the depth and the page cap of a
 * crawl; the repository and ref of a checkout; a README already read from a package archive. Built from the
 * job as stored, not from the arguments, so defaults and ceilings are the ones that apply.
 */

export const fetchPlanOutput = z.object({
  job_id: z.string(),
  what: z.string().describe('What the job indexes: a docs site, a repository at a ref, a package README.'),
  hosts: z.array(z.string()).describe('Hosts the job fetches from ("*.example.com": any subdomain). Empty when nothing more is fetched.'),
  follows: z.string().describe('Which links are followed, in words.'),
  start_urls: z.array(z.string()).optional(),
  max_depth: z.number().int().optional(),
  max_pages: z.number().int().optional(),
  url_patterns: z.array(z.string()).optional(),
  exclude_patterns: z.array(z.string()).optional(),
  use_sitemap: z.boolean().optional(),
  render: z.string().optional(),
});
export type FetchPlan = z.output<typeof fetchPlanOutput>;

/** The hosts a crawl may fetch pages from: its domain filter's domain and subdomains, else its start URLs' hosts. */
function crawlHosts(job: Pick<CrawlJob, 'start_urls' | 'domain_filter'>): string[] {
  if (job.domain_filter) return [job.domain_filter, `*.${job.domain_filter}`];
  return [...new Set(job.start_urls.map((u) => new URL(u).host))];
}

function followRule(job: CrawlJob): string {
  const where = job.domain_filter ? `on ${job.domain_filter} and its subdomains` : 'on the start URLs\u2019 hosts';
  const only = job.url_patterns.length > 0 ? `, matching ${job.url_patterns.join(' or ')}` : '';
  const except = job.exclude_patterns.length > 0 ? `, except ${job.exclude_patterns.join(', ')}` : '';
  return `links ${where}${only}${except}, up to ${job.max_depth} ${job.max_depth === 1 ? 'link' : 'links'} from a start URL`;
}

/** A crawl job's plan, from the job as stored. */
export function crawlFetchPlan(job: CrawlJob, what = `docs site ${job.start_urls.join(', ')}`): FetchPlan {
  return {
    job_id: job.id,
    what,
    hosts: crawlHosts(job),
    follows: job.max_depth === 0 ? 'no links: only the start URLs' : followRule(job),
    start_urls: job.start_urls,
    max_depth: job.max_depth,
    max_pages: job.max_pages,
    url_patterns: job.url_patterns,
    exclude_patterns: job.exclude_patterns,
    use_sitemap: job.use_sitemap,
    render: job.render,
  };
}

/** The host of a URL-shaped remote or archive, or nothing for another form (never offered to MCP clients). */
function hostOf(url: string | undefined): string[] {
  if (url === undefined) return [];
  try {
    return [new URL(url).host];
  } catch {
    return [];
  }
}

/** A git checkout's plan: one repository, at the ref named in `what`. */
export function repositoryFetchPlan(jobId: string, what: string, remote: string | undefined): FetchPlan {
  return { job_id: jobId, what, hosts: hostOf(remote), follows: 'no links: the repository\u2019s documentation files at that ref' };
}

/** A README upload's plan: the archive was read while adding, so nothing more is fetched. */
export function readmeFetchPlan(jobId: string, what: string, archive: string | undefined): FetchPlan {
  const from = hostOf(archive)[0];
  return { job_id: jobId, what: from ? `${what} (already read from ${from})` : what, hosts: [], follows: 'nothing more is fetched' };
}

/** The plan in a few lines for the model and the user: what, where from, how far, how many pages. */
export function describeFetchPlan(plan: FetchPlan): string {
  const lines = [`Will fetch: ${plan.what}.`];
  if (plan.hosts.length > 0) lines.push(`  Hosts: ${plan.hosts.join(', ')}.`);
  lines.push(`  Follows: ${plan.follows}.`);
  if (plan.max_depth !== undefined) lines.push(`  Depth: ${plan.max_depth}. Page cap: ${plan.max_pages ?? 'none'} pages.${plan.use_sitemap ? ' Also seeded from the sitemap.' : ''}`);
  if (plan.render !== undefined && plan.render !== 'never') {
    lines.push(`  Rendering: ${plan.render}; a page rendered in headless Chromium may also load its scripts and styles from other public hosts.`);
  }
  return lines.join('\n');
}
