import { BaseSequencer } from 'vitest/node';
import type { TestSpecification } from 'vitest/node';

/**
 * The shared corpus indexes (test/helpers/corpus-db.ts) are built by the first file that asks; a file that asks
 * while another worker builds waits, and its core idles. So the two files that build them start first, one per
 * worker, and the files that only read them run last, when both are built. The rest keep vitest's own order.
 */
const BUILDERS = ['test/search/eval.test.ts', 'test/search/peer-eval.test.ts'];
const READERS = ['test/pack/corpus.test.ts', 'test/git/realworld.test.ts'];

function rank(spec: TestSpecification): number {
  const file = spec.moduleId.replaceAll('\\', '/');
  if (BUILDERS.some((b) => file.endsWith(b))) return 0;
  if (READERS.some((r) => file.endsWith(r))) return 2;
  return 1;
}

export default class CorpusFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return sorted
      .map((spec, index) => ({ spec, index }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.index - b.index)
      .map(({ spec }) => spec);
  }
}
