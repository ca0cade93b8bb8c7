import { Command, Flags } from '@oclif/core';
import type { Interfaces } from '@oclif/core';
import { loadConfig } from '../core/config.js';
import { onSchemaUpdate } from '../core/db/schema-update.js';
import type { Config } from '../core/config.js';
import { isUserError } from '../core/errors.js';
import { renderUserError, toUsageError } from './errors.js';
import { jsonOutput } from './json-keys.js';

export type CommandFlags<T extends typeof Command> = Interfaces.InferredFlags<(typeof BaseCommand)['baseFlags'] & T['flags']>;
export type CommandArgs<T extends typeof Command> = Interfaces.InferredArgs<T['args']>;

/**
 * Every docdex command extends this. It parses flags once, loads the configuration, and is the one place that
 * turns errors into output: a UserError prints its message and hint with no stack (exit code from the
 * error), anything else is a bug and keeps its stack. `run()` returns a typed result, which oclif prints as the
 * `--json` output, with snake_case keys (json-keys.ts).
 */
export abstract class BaseCommand<T extends typeof Command> extends Command {
  static override enableJsonFlag = true;

  static override baseFlags = {
    'no-color': Flags.boolean({ description: 'Disable colour output (also NO_COLOR=1).', helpGroup: 'GLOBAL' }),
  };

  protected flags!: CommandFlags<T>;
  protected args!: CommandArgs<T>;
  private configCache: Config | undefined;

  public override async init(): Promise<void> {
    await super.init();
    const { flags, args } = await this.parse({
      flags: this.ctor.flags,
      baseFlags: (super.ctor as typeof BaseCommand).baseFlags,
      enableJsonFlag: this.ctor.enableJsonFlag,
      args: this.ctor.args,
      strict: this.ctor.strict,
    }).catch((error: unknown) => {
      // Everything init's parse throws is about the command line (oclif's errors, a flag's own parse).
      const flagNames = Object.keys({ ...this.ctor.flags, ...(super.ctor as typeof BaseCommand).baseFlags, ...(this.ctor.enableJsonFlag ? { json: true } : {}) });
      throw error instanceof Error ? toUsageError(error, this.id, flagNames) : error;
    });
    this.flags = flags as CommandFlags<T>;
    this.args = args as CommandArgs<T>;
    if (this.flags['no-color']) process.env.NO_COLOR = '1';
    // On stderr, so that --json output and an MCP client's stdout stay clean.
    onSchemaUpdate(({ pending }) => {
      process.stderr.write(`Updating the database schema (${pending.join(', ')}); on a large index this can take a minute.\n`);
    });
  }

  /** The environment configuration, validated on first use (an invalid variable exits with code 2). */
  protected get settings(): Config {
    this.configCache ??= loadConfig();
    return this.configCache;
  }

  protected get isTty(): boolean {
    return Boolean(process.stdout.isTTY) && !this.jsonEnabled();
  }

  /** Every command's `--json` output goes through here: one key convention, snake_case. */
  protected override toSuccessJson(result: unknown): unknown {
    return jsonOutput(result);
  }

  protected override async catch(error: Error & { exitCode?: number; oclif?: { exit?: number } }): Promise<unknown> {
    if (isUserError(error)) {
      renderUserError(error, { json: this.jsonEnabled() });
      this.exit(error.exitCode);
    }
    return super.catch(error);
  }
}
