export { startGitSource, recrawlGitSource } from './source.js';
export type { GitSourceRequest, GitOrigin } from './source.js';
export { listRemoteTags } from './tags.js';
