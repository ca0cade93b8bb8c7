export { DEFAULT_LIMIT, MAX_LIMIT, explainSearch, searchSnippets } from './search.js';
export { searchSnippetsShared, searchesBusy } from './shared.js';
export type { SearchOptions, SearchResponse, SearchResult } from './search.js';
export { correctWords, rebuildSearchTerms } from './typo.js';
export { parseQuery } from './query.js';
