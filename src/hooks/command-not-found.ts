import type { Hook } from '@oclif/core';
import { renderUserError, unknownCommandError, wantsJson } from '../cli/errors.js';

/**
 * An unknown command fails before any command class exists, so the base command's error handler never sees
 * it: this hook renders it in the same format, naming the closest commands as the user types them.
 */
const hook: Hook<'command_not_found'> = async function (options) {
  const argv = options.argv ?? [];
  const error = unknownCommandError([...options.id.split(':'), ...argv], options.config.commandIDs);
  renderUserError(error, { json: wantsJson(process.argv.slice(2)) });
  // Exits through oclif (an ExitError it does not print), so its own cleanup still runs.
  return this.exit(error.exitCode);
};

export default hook;
