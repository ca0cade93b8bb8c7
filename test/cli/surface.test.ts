import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../helpers/cli.js';
import { createTestDatabase } from '../helpers/db.js';
import type { TestDatabase } from '../helpers/db.js';

/**
 * The CLI's public surface, pinned like the salesforce plugins' command-snapshot.json: every command's id,
 * flags and arguments (from the oclif manifest that `npm run build` writes) and the `--json` shape of a parse
 * error. Scripts depend on all of it, so a change must be deliberate: the test fails until the snapshot is
 * updated and committed with the change.
 */

const SNAPSHOT = path.join(ROOT, 'test', 'cli', 'command-snapshot.json');
const UPDATE = 'UPDATE_CLI_SNAPSHOT=1 npx vitest run test/cli/surface.test.ts';

interface ManifestFlag {
  type: 'boolean' | 'option';
  char?: string;
  required?: boolean;
  multiple?: boolean;
  allowNo?: boolean;
  options?: string[];
  default?: unknown;
}
interface ManifestCommand {
  id: string;
  strict?: boolean;
  flags: Record<string, ManifestFlag>;
  args: Record<string, { required?: boolean; options?: string[]; default?: unknown }>;
}

function flagSurface(flag: ManifestFlag): Record<string, unknown> {
  return {
    type: flag.type === 'boolean' ? (flag.allowNo ? 'boolean (--no-)' : 'boolean') : flag.multiple ? 'option (repeatable)' : 'option',
    ...(flag.char ? { char: flag.char } : {}),
    ...(flag.required ? { required: true } : {}),
    ...(flag.options ? { options: flag.options } : {}),
    ...(flag.default === undefined || flag.default === false ? {} : { default: flag.default }),
  };
}

function commandSurface(command: ManifestCommand): Record<string, unknown> {
  const sorted = <T>(record: Record<string, T>) =>
    Object.keys(record)
      .sort()
      .map((name) => [name, record[name]!] as const);
  return {
    flags: Object.fromEntries(sorted(command.flags).map(([name, flag]) => [name, flagSurface(flag)])),
    args: Object.fromEntries(
      Object.entries(command.args).map(([name, arg]) => [
        name,
        { required: Boolean(arg.required), ...(arg.options ? { options: arg.options } : {}), ...(arg.default === undefined ? {} : { default: arg.default }) },
      ]),
    ),
    ...(command.strict === false ? { variadic: true } : {}),
  };
}

function currentSurface(parseError: Record<string, unknown>, exitCode: number | undefined): Record<string, unknown> {
  const manifest = JSON.parse(readFileSync(path.join(ROOT, 'oclif.manifest.json'), 'utf8')) as { commands: Record<string, ManifestCommand> };
  const ids = Object.keys(manifest.commands).sort();
  return {
    commands: Object.fromEntries(ids.map((id) => [id.replaceAll(':', ' '), commandSurface(manifest.commands[id]!)])),
    jsonParseError: { exitCode, keys: Object.keys(parseError).sort(), code: parseError.code },
  };
}

describe('the CLI surface', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
  });
  afterAll(async () => {
    await db.drop();
  });

  it('matches the committed snapshot of every command, flag and argument, and the --json error shape', async () => {
    const failed = await runCli(['search', 'json', '--frobnicate', '--json'], { env: db.env });
    const parseError = JSON.parse(String(failed.stdout)) as Record<string, unknown>;
    const surface = currentSurface(parseError, failed.exitCode);
    if (process.env.UPDATE_CLI_SNAPSHOT === '1' || !existsSync(SNAPSHOT)) writeFileSync(SNAPSHOT, `${JSON.stringify(surface, null, 2)}\n`);
    const committed = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as unknown;
    expect(surface, `The CLI surface changed. If that is intended, run \`${UPDATE}\` and commit test/cli/command-snapshot.json.`).toEqual(committed);
  });
});
