export { startGitSource, recrawlGitSource } from './source.js';
export type { GitSourceRequest } from './source.js';
export { listRemoteTags } from './tags.js';
