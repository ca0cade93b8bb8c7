import { Flags } from '@oclif/core';

/** Flags shared by several commands, each validated where it is parsed. */
export const forceFlag = Flags.boolean({ description: 'Do not ask for confirmation.', default: false });
