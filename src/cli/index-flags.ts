import { Flags } from '@oclif/core';

/** Flags of the index commands (search, sources, upload). */
export const sourceFlag = Flags.string({ char: 's', description: 'Library: name (matched fuzzily; its latest version), name@version (exact, 18 for the newest 18.x, ^18.2, ~18.2.1) or source id.' });
export const versionFlag = Flags.string({ description: 'Library version, as after name@ (exact, a major, or a semver range).' });
export const languageFlag = Flags.string({ char: 'l', description: 'Snippet language, e.g. python, js, sql.' });
export const limitFlag = (defaultValue: number, max = 100) => Flags.integer({ char: 'n', description: `Results per page (1-${max}).`, default: defaultValue, min: 1, max });
export const offsetFlag = Flags.integer({ description: 'Skip this many results (paging).', default: 0, min: 0 });
