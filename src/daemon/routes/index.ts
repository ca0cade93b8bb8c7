import type { RouteModule } from '../app.js';
import { registerHealthRoutes } from './health.js';
import { registerSnippetRoutes } from './snippets.js';
import { registerStatsRoutes } from './stats.js';

/** Every REST route module of the docs index, in documentation order. */
export const docsIndexRoutes: RouteModule[] = [registerHealthRoutes, registerSnippetRoutes, registerStatsRoutes];
