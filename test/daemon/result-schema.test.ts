import { describe, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import type { MoreFromPage, SearchResult } from '../../src/core/search/search.js';
import type { SearchResultSchema } from '../../src/daemon/routes/search.js';

// One definition of a search result: REST's schema (and so OpenAPI) is checked against core's type by the type
// check (`npm run typecheck`), so a field added to one and not the other fails the build, not a client.
describe('the REST search result schema', () => {
  it('is exactly core’s SearchResult, its folded units included', () => {
    expectTypeOf<z.output<typeof SearchResultSchema>>().toEqualTypeOf<SearchResult>();
    expectTypeOf<NonNullable<z.output<typeof SearchResultSchema>['more']>[number]>().toEqualTypeOf<MoreFromPage>();
  });
});
