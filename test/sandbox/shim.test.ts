import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FORWARDED_ENV_NAMES } from '../../src/core/sandbox/credentials.js';
import { UserError } from '../../src/core/errors.js';
import { SHIM_NAME, renderShim, shellQuote, writeShim } from '../../src/core/sandbox/shim.js';

/**
 * The generated shim against a fake runner and a fake host shell that record their exact argv (NUL-separated)
 * and environment. The command is handed over from a file through a tiny wrapper, because Node cannot put
 * invalid UTF-8 into an argv itself.
 */

const RECORDER = `#!/bin/sh
out="$FAKE_OUT/$(basename "$0")"
: > "$out.argv"
for a in "$@"; do printf '%s\\0' "$a" >> "$out.argv"; done
env -0 > "$out.env"
exit 42
`;

/** Quotes, a newline, shell syntax that must not be evaluated, invalid UTF-8 and a trailing newline. */
const PAYLOAD = Buffer.concat([
  Buffer.from(`echo "it's \\"quoted\\"" '$HOME' \`id\` $(id) \\ ; a=1\n`, 'utf8'),
  Buffer.from([0xff, 0xfe, 0x80, 0x20, 0xc3, 0x28]),
  Buffer.from('\n', 'utf8'),
]);

let dir: string;
let shim: string;
let out: string;

function splitNul(buf: Buffer): Buffer[] {
  const parts: Buffer[] = [];
  let start = 0;
  for (let i = 0; i < buf.length; i++) {
    if (buf[i] === 0) {
      parts.push(buf.subarray(start, i));
      start = i + 1;
    }
  }
  return parts;
}

async function recorded(name: string): Promise<{ argv: Buffer[]; env: Map<string, string> } | undefined> {
  const argv = await readFile(path.join(out, `${name}.argv`)).catch(() => undefined);
  if (!argv) return undefined;
  const env = new Map<string, string>();
  for (const entry of splitNul(await readFile(path.join(out, `${name}.env`)))) {
    const s = entry.toString('utf8');
    env.set(s.slice(0, s.indexOf('=')), s.slice(s.indexOf('=') + 1));
  }
  return { argv: splitNul(argv), env };
}

/** Runs: SHIM <args...> -c <PAYLOAD bytes> [extra...] with exactly the given environment. */
function runShim(env: Record<string, string>, extra: string[] = [], flags: string[] = []): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    // Command substitution strips trailing newlines; the X sentinel keeps them.
    const script = `cmd=$(cat "$1"; printf X); cmd=\${cmd%X}; shim=$2; shift 2; exec "$shim" ${flags.map(shellQuote).join(' ')} -c "$cmd" "$@"`;
    execFile('/bin/sh', ['-c', script, 'wrap', path.join(dir, 'payload'), shim, ...extra], { env: { PATH: '/usr/bin:/bin', FAKE_OUT: out, ...env } }, (error, _stdout, stderr) => {
      resolve({ code: error ? ((error as { code?: number }).code ?? -1) : 0, stderr: String(stderr) });
    });
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-shim-'));
  for (const name of ['fake-runner', 'fake-shell']) {
    await writeFile(path.join(dir, name), RECORDER);
    await chmod(path.join(dir, name), 0o755);
  }
  await writeFile(path.join(dir, 'payload'), PAYLOAD);
  shim = await writeShim(path.join(dir, 'plugins'), { runner: [path.join(dir, 'fake-runner'), 'pre arg'], hostShell: path.join(dir, 'fake-shell') });
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  out = await mkdtemp(path.join(dir, 'out-'));
});

describe('the shell shim', () => {
  it('is written executable next to the plugins', async () => {
    expect(path.basename(shim)).toBe(SHIM_NAME);
    expect((await stat(shim)).mode & 0o777).toBe(0o755);
  });

  it('runs the runner with the exact argv: -w, allow-listed -e pairs, then sh -c and the command as one argument', async () => {
    const result = await runShim({
      MGR_SANDBOX_WORKDIR: '/workspace/repos/my app',
      MGR_SANDBOX_ENV_GH_TOKEN: 'tok',
      MGR_SANDBOX_ENV_GIT_AUTHOR_NAME: "Ann\nO'Neil $x",
      MGR_SANDBOX_ENV_NOT_ALLOWED: 'nope',
      MGR_INTERNAL_TOKEN: 'internal-secret',
      MGR_SANDBOX_ENV_MGR_INTERNAL_TOKEN: 'internal-secret',
    });
    expect(result.code).toBe(42);
    const rec = await recorded('fake-runner');
    expect(rec).toBeDefined();
    const expected = [
      Buffer.from('pre arg'),
      Buffer.from('sandbox'),
      Buffer.from('exec'),
      Buffer.from('-w'),
      Buffer.from('/workspace/repos/my app'),
      Buffer.from('-e'),
      Buffer.from("GIT_AUTHOR_NAME=Ann\nO'Neil $x"),
      Buffer.from('-e'),
      Buffer.from('GH_TOKEN=tok'),
      Buffer.from('--'),
      Buffer.from('sh'),
      Buffer.from('-c'),
      PAYLOAD,
    ];
    expect(rec!.argv.map((b) => b.toString('hex'))).toEqual(expected.map((b) => b.toString('hex')));
    // the internal token is neither an argument nor in the runner's environment
    expect(Buffer.concat(rec!.argv).includes('internal-secret')).toBe(false);
    expect(rec!.env.has('MGR_INTERNAL_TOKEN')).toBe(false);
    expect(await recorded('fake-shell')).toBeUndefined();
  });

  it('keeps sh -c positional parameters after the command and drops login flags', async () => {
    const result = await runShim({ MGR_SANDBOX_WORKDIR: '/w' }, ['name', 'a b'], ['-l']);
    expect(result.code).toBe(42);
    const argv = (await recorded('fake-runner'))!.argv;
    expect(argv.slice(-5).map(String)).toEqual(['sh', '-c', PAYLOAD.toString(), 'name', 'a b']);
    expect(argv.slice(1, 5).map(String)).toEqual(['sandbox', 'exec', '-w', '/w']);
  });

  it('passes through to the remembered host shell with the same args when MGR_SANDBOX_WORKDIR is unset', async () => {
    const result = await runShim({ MGR_INTERNAL_TOKEN: 'internal-secret', KEEP: 'me' });
    expect(result.code).toBe(42);
    expect(await recorded('fake-runner')).toBeUndefined();
    const rec = (await recorded('fake-shell'))!;
    expect(rec.argv.map((b) => b.toString('hex'))).toEqual([Buffer.from('-c'), PAYLOAD].map((b) => b.toString('hex')));
    expect(rec.env.get('KEEP')).toBe('me');
    expect(rec.env.has('MGR_INTERNAL_TOKEN')).toBe(false);
  });

  it('refuses without running anything when the planner refused', async () => {
    const message = 'Sandbox enforcement is on but the sandbox is unavailable: the working directory /x is outside the project roots /a and /b';
    const result = await runShim({ MGR_SANDBOX_REFUSE: message, MGR_SANDBOX_WORKDIR: '/w' });
    expect(result.code).toBe(125);
    expect(result.stderr).toBe(`${message}\n`);
    expect(await recorded('fake-runner')).toBeUndefined();
    expect(await recorded('fake-shell')).toBeUndefined();
  });

  it('fails closed on arguments it cannot run faithfully', async () => {
    const result = await runShim({ MGR_SANDBOX_WORKDIR: '/w' }, [], ['-x']);
    expect(result.code).toBe(125);
    expect(result.stderr).toMatch(/^Sandbox enforcement is on but the sandbox is unavailable: the shell shim expects -c COMMAND/);
    expect(await recorded('fake-runner')).toBeUndefined();
    expect(await recorded('fake-shell')).toBeUndefined();
  });
});

describe('renderShim and writeShim', () => {
  const template = 'R=@RUNNER@ S=@HOST_SHELL@ N=@ENV_NAMES@';

  it('quotes the runner words and the host shell, and lists the allow-list', () => {
    expect(renderShim(template, { runner: ["/opt/it's/node", 'run.js'], hostShell: '/bin/bash', envNames: ['A', 'B_1'] })).toBe(
      `R='/opt/it'\\''s/node' 'run.js' S='/bin/bash' N=A B_1`,
    );
    expect(renderShim(template, { runner: ['x'], hostShell: '/bin/sh' })).toContain(`N=${FORWARDED_ENV_NAMES.join(' ')}`);
  });

  it('refuses names that are not plain variables, and the internal token', () => {
    expect(() => renderShim(template, { runner: ['x'], hostShell: '/bin/sh', envNames: ['A;rm -rf /'] })).toThrow();
    expect(() => renderShim(template, { runner: ['x'], hostShell: '/bin/sh', envNames: ['MGR_INTERNAL_TOKEN'] })).toThrow();
    expect(() => renderShim(template, { runner: ['x'], hostShell: 'sh' })).toThrow(/absolute/);
  });

  it('throws a UserError when the shim cannot be written', async () => {
    const blocker = path.join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    await expect(writeShim(blocker, { runner: ['x'], hostShell: '/bin/sh' })).rejects.toBeInstanceOf(UserError);
    await expect(writeShim(blocker, { runner: ['x'], hostShell: '/bin/sh' })).rejects.toThrow(/Cannot write the sandbox shell shim/);
  });
});
