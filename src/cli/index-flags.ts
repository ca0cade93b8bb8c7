import { Flags } from '@oclif/core';

/** Flags of the index commands (search, sources, upload). */
export const sourceFlag = Flags.string({ char: 's', description: 'Source name (matched fuzzily) or id.' });
export const versionFlag = Flags.string({ description: 'Library version (picks one version when a name has several).' });
export const languageFlag = Flags.string({ char: 'l', description: 'Snippet language, e.g. python, js, sql.' });
export const limitFlag = (defaultValue: number, max = 100) => Flags.integer({ char: 'n', description: `Results per page (1-${max}).`, default: defaultValue, min: 1, max });
export const offsetFlag = Flags.integer({ description: 'Skip this many results (paging).', default: 0, min: 0 });
