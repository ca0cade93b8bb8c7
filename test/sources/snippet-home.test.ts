import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCrawlWorkers } from '../../src/core/crawl/index.js';
import type { CrawlWorkers } from '../../src/core/crawl/index.js';
import { crawlToEnd, FAST_WORKER } from '../crawl/helpers/crawl.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';
import { docPage, serveSite } from '../helpers/site.js';
import type { TestSite } from '../helpers/site.js';

/**
 * A snippet shown on several pages lives on the most specific one (an anchored heading, then the smallest
 * page), whatever order the pages were crawled in: Node's all.html must not take the snippets of fs.html.
 */

let db: TestDatabase;
let workers: CrawlWorkers;
let site: TestSite;

const FS = [
  { heading: 'fs.readFile', prose: 'Reads the entire contents of a file.', code: "fs.readFile('/etc/passwd', (err, data) => {\n  if (err) throw err;\n});", lang: 'js' },
  { heading: 'fs.writeFile', prose: 'Writes data to a file.', code: "fs.writeFile('out.txt', 'hello', (err) => {});", lang: 'js' },
];
const PATH = [{ heading: 'path.join', prose: 'Joins path segments.', code: "path.join('/foo', 'bar', 'baz/asdf');", lang: 'js' }];

interface Home {
  code: string;
  title: string;
  description: string;
  source_url: string;
  page: string;
}

async function homes(sourceId: string | null): Promise<Home[]> {
  const { rows } = await db.pool.query<Home>(
    `SELECT s.code, s.title, s.description, s.source_url, d.url AS page FROM snippets s JOIN documents d ON d.id = s.document_id
      WHERE s.source_id = $1 AND s.kind = 'snippet' ORDER BY s.code`,
    [sourceId],
  );
  return rows.map((r) => ({ ...r, source_url: r.source_url.replace(site.base, ''), page: r.page.replace(site.base, '') }));
}

async function crawl(name: string, paths: string[][]): Promise<string> {
  let sourceId: string | null = null;
  for (const group of paths) {
    const job = await crawlToEnd(db, db.config, { name, start_urls: group.map((p) => `${site.base}${p}`), max_depth: 0, max_concurrent_crawls: 1 });
    expect(job.status).toBe('completed');
    sourceId = job.source_id;
  }
  return sourceId!;
}

beforeAll(async () => {
  db = await createTestDatabase();
  workers = await startCrawlWorkers(db, db.config, FAST_WORKER);
  site = await serveSite({
    '/api/all.html': docPage('All modules', [...FS, ...PATH, { heading: 'util.format', prose: 'Formats a string.', code: "util.format('%s:%s', 'foo', 'bar');", lang: 'js' }]),
    '/api/fs.html': docPage('File system', FS),
    '/api/path.html': docPage('Path', PATH),
  });
});

afterAll(async () => {
  await workers?.stop();
  await site?.close();
  await db?.drop();
});

describe("a snippet's home", () => {
  it('is the smallest page with an anchored heading, in either crawl order', async () => {
    const alone = await homes(await crawl('small pages only', [['/api/fs.html', '/api/path.html']]));
    const allFirst = await homes(await crawl('all first', [['/api/all.html'], ['/api/fs.html', '/api/path.html']]));
    const allLast = await homes(await crawl('all last', [['/api/fs.html', '/api/path.html'], ['/api/all.html']]));

    expect(alone.map((h) => h.source_url)).toEqual(['/api/fs.html#s0', '/api/fs.html#s1', '/api/path.html#s0']);
    // The code only all.html shows stays there; the rest has the small page's URL, title and description.
    for (const result of [allFirst, allLast]) {
      const shared = result.filter((h) => !h.code.startsWith('util.'));
      expect(shared).toEqual(alone);
      expect(result.find((h) => h.code.startsWith('util.'))).toMatchObject({ page: '/api/all.html', source_url: '/api/all.html#s3' });
    }
  });

  it('comes back to its page when that page is re-stored', async () => {
    const sourceId = await crawl('restored', [['/api/fs.html', '/api/path.html', '/api/all.html']]);
    // Re-storing fs.html (changed) detaches its snippets, then takes them back.
    const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM documents WHERE source_id = $1 AND url LIKE $2', [sourceId, '%/fs.html']);
    await db.pool.query("UPDATE documents SET content_hash = 'changed' WHERE id = $1", [rows[0]!.id]);
    await db.pool.query("UPDATE crawl_pages SET content_hash = 'changed', etag = NULL, last_modified = NULL WHERE source_id = $1", [sourceId]);
    await crawl('restored', [['/api/fs.html']]);
    expect((await homes(sourceId)).filter((h) => h.code.startsWith('fs.')).map((h) => h.source_url)).toEqual(['/api/fs.html#s0', '/api/fs.html#s1']);
  });
});
