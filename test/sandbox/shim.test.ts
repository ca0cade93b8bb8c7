import { execFile, execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FORWARDED_ENV_NAMES } from '../../src/core/sandbox/credentials.js';
import { UserError } from '../../src/core/errors.js';
import { SHIM_CONFIG_NAME, SHIM_NAME, SHIM_SOURCE, UNPLANNED_MESSAGE, renderShimConfig, writeShim } from '../../src/core/sandbox/shim.js';

/** POSIX single-quoting, for the flags handed to the wrapper below. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * The installed shim against a fake runner and a fake host shell that record their exact argv (NUL-separated)
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
const PAYLOAD = Buffer.concat([Buffer.from(`echo "it's \\"quoted\\"" '$HOME' \`id\` $(id) \\ ; a=1\n`, 'utf8'), Buffer.from([0xff, 0xfe, 0x80, 0x20, 0xc3, 0x28]), Buffer.from('\n', 'utf8')]);

let dir: string;
let shim: string;
let out: string;
/** The start's nonce, as mgr-sandbox.js of the same start would put it on the spawns it saw. */
const NONCE = 'f00dfeed'.repeat(4);

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
  shim = await writeShim(path.join(dir, 'plugins'), { runner: [path.join(dir, 'fake-runner'), 'pre arg'], hostShell: path.join(dir, 'fake-shell'), nonce: NONCE });
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
    const result = await runShim({ MGR_INTERNAL_TOKEN: 'internal-secret', KEEP: 'me', MGR_SANDBOX_PLANNED: NONCE });
    expect(result.code).toBe(42);
    expect(await recorded('fake-runner')).toBeUndefined();
    const rec = (await recorded('fake-shell'))!;
    expect(rec.argv.map((b) => b.toString('hex'))).toEqual([Buffer.from('-c'), PAYLOAD].map((b) => b.toString('hex')));
    expect(rec.env.get('KEEP')).toBe('me');
    expect(rec.env.has('MGR_INTERNAL_TOKEN')).toBe(false);
    // The marker vouches for this spawn only; the host shell's children do not inherit it.
    expect(rec.env.has('MGR_SANDBOX_PLANNED')).toBe(false);
  });

  it('refuses without running anything when the planner refused', async () => {
    const message = 'Sandbox enforcement is on but the sandbox is unavailable: the working directory /x is outside the project roots /a and /b';
    const result = await runShim({ MGR_SANDBOX_REFUSE: message, MGR_SANDBOX_WORKDIR: '/w' });
    expect(result.code).toBe(125);
    expect(result.stderr).toBe(`${message}\n`);
    expect(await recorded('fake-runner')).toBeUndefined();
    expect(await recorded('fake-shell')).toBeUndefined();
  });

  describe('when the mgr-sandbox plugin did not plan the spawn (issue #12)', () => {
    async function expectRefused(env: Record<string, string>, flags: string[] = []): Promise<void> {
      const result = await runShim(env, [], flags);
      expect(result.code).toBe(125);
      expect(result.stderr).toBe(`${UNPLANNED_MESSAGE}\n`);
      expect(await recorded('fake-runner')).toBeUndefined();
      expect(await recorded('fake-shell')).toBeUndefined();
    }

    it('refuses a host spawn that carries no marker instead of running the host shell', async () => {
      expect(UNPLANNED_MESSAGE).toMatch(/^Sandbox enforcement is on but the sandbox is unavailable: the mgr-sandbox plugin did not plan this command/);
      // What an agent server whose plugin did not load hands the shim: its enforcement stamp and nothing else.
      await expectRefused({ MGR_SANDBOX_ENFORCED: 'true', MGR_INTERNAL_TOKEN: 'internal-secret' });
      // The shim only exists while enforcement is on, so the stamp is not what it trusts.
      await expectRefused({});
      await expectRefused({ MGR_SANDBOX_ENFORCED: 'false' }, ['-l']);
    });

    it('refuses markers that are empty or carry the nonce of another start', async () => {
      for (const value of ['', 'f00dfeed', `${NONCE}x`, 'deadbeef'.repeat(4)]) {
        await expectRefused({ MGR_SANDBOX_ENFORCED: 'true', MGR_SANDBOX_PLANNED: value });
        await expectRefused({ MGR_SANDBOX_ENFORCED: 'true', MGR_SANDBOX_HOOKED: value });
      }
    });

    it("passes a spawn opencode never offers to the hook (slash-command template) once the agent server's hook fired", async () => {
      const result = await runShim({ MGR_SANDBOX_ENFORCED: 'true', MGR_SANDBOX_HOOKED: NONCE });
      expect(result.code).toBe(42);
      const rec = (await recorded('fake-shell'))!;
      expect(rec.argv.map((b) => b.toString('hex'))).toEqual([Buffer.from('-c'), PAYLOAD].map((b) => b.toString('hex')));
      expect(rec.env.has('MGR_SANDBOX_HOOKED')).toBe(false);
      expect(await recorded('fake-runner')).toBeUndefined();
    });

    it('still refuses a planner refusal that carries the marker, and keeps markers out of the runner', async () => {
      const message = 'Sandbox enforcement is on but the sandbox is unavailable: the VM did not boot';
      const refused = await runShim({ MGR_SANDBOX_REFUSE: message, MGR_SANDBOX_PLANNED: NONCE, MGR_SANDBOX_HOOKED: NONCE });
      expect(refused).toEqual({ code: 125, stderr: `${message}\n` });
      expect(await recorded('fake-shell')).toBeUndefined();
      const result = await runShim({ MGR_SANDBOX_WORKDIR: '/w', MGR_SANDBOX_PLANNED: NONCE, MGR_SANDBOX_HOOKED: NONCE });
      expect(result.code).toBe(42);
      const rec = (await recorded('fake-runner'))!;
      expect(rec.env.has('MGR_SANDBOX_PLANNED')).toBe(false);
      expect(rec.env.has('MGR_SANDBOX_HOOKED')).toBe(false);
    });
  });

  it('fails closed on arguments it cannot run faithfully', async () => {
    const result = await runShim({ MGR_SANDBOX_WORKDIR: '/w' }, [], ['-x']);
    expect(result.code).toBe(125);
    expect(result.stderr).toMatch(/^Sandbox enforcement is on but the sandbox is unavailable: the shell shim expects -c COMMAND/);
    expect(await recorded('fake-runner')).toBeUndefined();
    expect(await recorded('fake-shell')).toBeUndefined();
  });
});

describe('the shim script and its configuration', () => {
  it('is a valid POSIX shell script, copied unchanged', async () => {
    execFileSync('sh', ['-n', SHIM_SOURCE]);
    expect(await readFile(shim, 'utf8')).toBe(await readFile(SHIM_SOURCE, 'utf8'));
  });

  // shellcheck is an optional host tool: without it this check is skipped and says why, unless the run
  // requires the sandbox's tools (CI sets DOCDEX_REQUIRE_SANDBOX=1 and installs it), where its absence fails.
  const shellcheck = (() => {
    try {
      execFileSync('shellcheck', ['--version']);
      return true;
    } catch {
      return false;
    }
  })();
  if (!shellcheck && process.env.DOCDEX_REQUIRE_SANDBOX !== '1') console.log('skipping the shellcheck test: shellcheck is not installed (apt-get install shellcheck)');
  it.skipIf(!shellcheck && process.env.DOCDEX_REQUIRE_SANDBOX !== '1')('passes shellcheck', () => {
    execFileSync('shellcheck', ['--shell=sh', SHIM_SOURCE]);
  });

  it('writes the runner words, the host shell and the allow-list as one line each', () => {
    expect(
      renderShimConfig({ runner: ["/opt/it's/node", 'run.js'], hostShell: '/bin/bash', envNames: ['A', 'B_1'], nonce: NONCE })
        .split('\n')
        .slice(1),
    ).toEqual([`nonce=${NONCE}`, 'host_shell=/bin/bash', `unplanned=${UNPLANNED_MESSAGE}`, "runner=/opt/it's/node", 'runner=run.js', 'env_name=A', 'env_name=B_1', '']);
    expect(renderShimConfig({ runner: ['x'], hostShell: '/bin/sh' })).toContain(FORWARDED_ENV_NAMES.map((n) => `env_name=${n}`).join('\n'));
  });

  it('refuses names that are not plain variables, the internal token, and values that are not one line', () => {
    expect(() => renderShimConfig({ runner: ['x'], hostShell: '/bin/sh', envNames: ['A;rm -rf /'] })).toThrow();
    expect(() => renderShimConfig({ runner: ['x'], hostShell: '/bin/sh', envNames: ['MGR_INTERNAL_TOKEN'] })).toThrow();
    expect(() => renderShimConfig({ runner: ['x'], hostShell: 'sh' })).toThrow(/absolute/);
    expect(() => renderShimConfig({ runner: ['x\nnonce=0000000000000000'], hostShell: '/bin/sh' })).toThrow(/single line/);
    expect(() => renderShimConfig({ runner: ['x'], hostShell: '/bin/sh\nhost_shell=/tmp/evil' })).toThrow(/single line/);
    expect(() => renderShimConfig({ runner: [], hostShell: '/bin/sh' })).toThrow(/empty/);
  });

  it('refuses a nonce that is not plain letters and digits, and makes a random one by default', () => {
    for (const nonce of ['short', "abc'def0123456789", 'a'.repeat(129)]) expect(() => renderShimConfig({ runner: ['x'], hostShell: '/bin/sh', nonce })).toThrow(/nonce/);
    // Without a nonce a random one is written: no plugin knows it, so every host spawn is refused.
    const a = renderShimConfig({ runner: ['x'], hostShell: '/bin/sh' });
    const b = renderShimConfig({ runner: ['x'], hostShell: '/bin/sh' });
    expect(a).toMatch(/^nonce=[0-9a-f]{32}$/m);
    expect(a).not.toBe(b);
  });
});

describe('the shim without a usable configuration', () => {
  it('fails closed without its configuration, or with an incomplete one: nothing runs, not even a planned host spawn', async () => {
    const conf = path.join(dir, 'plugins', SHIM_CONFIG_NAME);
    const saved = await readFile(conf);
    try {
      await rm(conf);
      let result = await runShim({ MGR_SANDBOX_PLANNED: NONCE });
      expect(result.code).toBe(125);
      expect(result.stderr).toMatch(/^Sandbox enforcement is on but the sandbox is unavailable: the shell shim has no configuration/);
      for (const broken of [saved.toString('utf8').replace(/^nonce=.*$/m, 'nonce='), saved.toString('utf8').replace(/^runner=.*$/gm, '')]) {
        await writeFile(conf, broken);
        result = await runShim({ MGR_SANDBOX_PLANNED: '' });
        expect(result.code).toBe(125);
        result = await runShim({ MGR_SANDBOX_WORKDIR: '/w' });
        expect(result.code).toBe(125);
        expect(result.stderr).toMatch(/configuration .* is incomplete/);
      }
      await writeFile(conf, `${saved.toString('utf8')}env_name=A;id\n`);
      result = await runShim({ MGR_SANDBOX_WORKDIR: '/w' });
      expect(result.code).toBe(125);
      expect(result.stderr).toMatch(/invalid variable/);
      expect(await recorded('fake-runner')).toBeUndefined();
      expect(await recorded('fake-shell')).toBeUndefined();
    } finally {
      await writeFile(conf, saved);
    }
  });

  it('throws a UserError when the shim cannot be written', async () => {
    const blocker = path.join(dir, 'not-a-dir');
    await writeFile(blocker, 'x');
    await expect(writeShim(blocker, { runner: ['x'], hostShell: '/bin/sh' })).rejects.toBeInstanceOf(UserError);
    await expect(writeShim(blocker, { runner: ['x'], hostShell: '/bin/sh' })).rejects.toThrow(/Cannot write the sandbox shell shim/);
  });
});
