import path from 'node:path';
import { EVAL_SITES, indexEvalSites, siteFingerprint } from '../../bench/harness/corpus.js';
import type { IndexedSite } from '../../bench/harness/corpus.js';
import { folderFingerprint, indexRealworld, REALWORLD_LIBRARIES } from '../../bench/harness/realworld.js';
import type { IndexedRepository } from '../../bench/harness/realworld.js';
import { startCrawl, startCrawlWorkers, waitForJob } from '../../src/core/crawl/index.js';
import { extractDocument } from '../../src/core/extract/index.js';
import { addLibraries } from '../../src/core/library/add.js';
import { documentStages } from '../../src/core/pipeline/stages.js';
import { settleSearchIndexes } from '../../src/core/search/settle.js';
import { storePage } from '../../src/core/store/pages.js';
import { startUploadWorkers } from '../../src/core/upload/worker.js';
import { waitForUpload } from '../../src/core/upload/job-rows.js';
import { sharedCorpusDatabase } from './corpus-db.js';
import type { CorpusDatabase } from './corpus-db.js';

/** The two corpora the relevance and round-trip tests read, each built once per test run (corpus-db.ts). */

const SITE_PARTS = { startCrawl, startCrawlWorkers, waitForJob, extractDocument, storePage, settleSearchIndexes };

/** The python, postgres and node HTML sites, loaded through extractDocument and storePage. */
export function sharedDebianCorpus(corpusDir: string): Promise<CorpusDatabase<IndexedSite[]>> {
  const input = EVAL_SITES.map((site) => `${site}:${siteFingerprint(path.join(corpusDir, site), site)}`).join(',');
  return sharedCorpusDatabase('debian', input, (db) => indexEvalSites(SITE_PARTS, { pool: db.pool, info: db.info }, db.config, { corpusDir, sites: EVAL_SITES, mode: 'direct' }));
}

export interface RealworldCorpus {
  python: IndexedSite;
  repositories: IndexedRepository[];
}

/**
 * The peer benchmark's corpus: python's HTML site, and react.dev, vite and fastapi through `docdex add
 * file://…@tag --path <docs>` (addLibraries with the CLI's permission, run by upload workers).
 */
export function sharedRealworldCorpus(corpusDir: string, realworldDir: string): Promise<CorpusDatabase<RealworldCorpus>> {
  const input = [`python:${siteFingerprint(path.join(corpusDir, 'python'), 'python')}`, ...REALWORLD_LIBRARIES.map((l) => `${l.folder}:${folderFingerprint(path.join(realworldDir, l.folder))}`)].join(
    ',',
  );
  return sharedCorpusDatabase('realworld', input, async (db) => {
    const ref = { pool: db.pool, info: db.info };
    const [python] = await indexEvalSites(SITE_PARTS, ref, db.config, { corpusDir, sites: ['python'], mode: 'direct' });
    const repositories = await indexRealworld({ addLibraries, startUploadWorkers, waitForUpload, documentStages }, ref, db.config, { corpusDir: realworldDir });
    return { python: python!, repositories };
  });
}
