export { MAX_PAGE_SIZE, deleteSource, getSource, listSources, updateSource } from './manage.js';
export type { CrawlSettings, DeleteResult, Page, SourceDetails, SourceJob, SourceSummary, SourceUpdate } from './manage.js';
export { isUuid, resolveSource, resolveSources } from './resolve.js';
export type { SourceRef } from './resolve.js';
