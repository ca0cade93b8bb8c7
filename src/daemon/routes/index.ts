import type { RouteModule } from '../deps.js';
import { registerCrawlRoutes } from './crawl.js';
import { registerHealthRoutes } from './health.js';
import { registerLibraryRoutes } from './libraries.js';
import { registerProjectRoutes } from './projects.js';
import { registerProjectSyncRoutes } from './project-sync.js';
import { registerPackRoutes } from './packs.js';
import { registerSearchRoutes } from './search.js';
import { registerSnippetRoutes } from './snippets.js';
import { registerSourceRoutes } from './sources.js';
import { registerStatsRoutes } from './stats.js';
import { registerUploadRoutes } from './uploads.js';

/** Every REST route module of the docs index, in documentation order. */
export const docsIndexRoutes: RouteModule[] = [
  registerHealthRoutes,
  registerSearchRoutes,
  registerSnippetRoutes,
  registerSourceRoutes,
  registerCrawlRoutes,
  registerLibraryRoutes,
  registerProjectRoutes,
  registerProjectSyncRoutes,
  registerUploadRoutes,
  registerPackRoutes,
  registerStatsRoutes,
];
