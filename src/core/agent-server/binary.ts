import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { UserError } from '../errors.js';

/**
 * Finds the opencode binary. `opencode-ai` ships it in per-platform npm packages, and its postinstall
 * script copies the right one to `opencode-ai/bin/opencode.exe`; npm 11 can hold install scripts back, so
 * docdex picks the platform package itself, with the same preference order as that script (AVX2 or the
 * baseline build, glibc or musl). A clean `npm ci` is then enough.
 */

export interface OpencodeBinary {
  path: string;
  /** The npm package it came from, or `OPENCODE_BIN_PATH` / `opencode-ai` for the fallbacks. */
  source: string;
}

/** The version docdex is pinned to (package.json); `checkBinaryVersion` compares against it. */
export function pinnedOpencodeVersion(): string {
  const require = createRequire(import.meta.url);
  return (require('opencode-ai/package.json') as { version: string }).version;
}

function supportsAvx2(): boolean {
  if (process.arch !== 'x64') return false;
  if (process.platform === 'linux') {
    try {
      return /(^|\s)avx2(\s|$)/i.test(readFileSync('/proc/cpuinfo', 'utf8'));
    } catch {
      return false;
    }
  }
  if (process.platform === 'darwin') {
    try {
      return execFileSync('sysctl', ['-n', 'hw.optional.avx2_0'], { encoding: 'utf8', timeout: 1500 }).trim() === '1';
    } catch {
      return false;
    }
  }
  // Windows: the baseline build runs everywhere; the AVX2 one is only faster.
  return false;
}

function isMusl(): boolean {
  if (process.platform !== 'linux') return false;
  if (existsSync('/etc/alpine-release')) return true;
  const report = process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined;
  return report?.header?.glibcVersionRuntime === undefined;
}

/** Candidate package names, best first (the same order as opencode-ai's postinstall). */
export function platformPackageNames(platform: NodeJS.Platform = process.platform, arch: string = process.arch, avx2 = supportsAvx2(), musl = isMusl()): string[] {
  const os = platform === 'win32' ? 'windows' : platform;
  const base = `opencode-${os}-${arch}`;
  const baseline = arch === 'x64' && !avx2;
  if (os === 'linux') {
    if (musl) {
      if (arch === 'x64') return baseline ? [`${base}-baseline-musl`, `${base}-musl`, `${base}-baseline`, base] : [`${base}-musl`, `${base}-baseline-musl`, base, `${base}-baseline`];
      return [`${base}-musl`, base];
    }
    if (arch === 'x64') return baseline ? [`${base}-baseline`, base, `${base}-baseline-musl`, `${base}-musl`] : [base, `${base}-baseline`, `${base}-musl`, `${base}-baseline-musl`];
    return [base, `${base}-musl`];
  }
  if (arch === 'x64') return baseline ? [`${base}-baseline`, base] : [base, `${base}-baseline`];
  return [base];
}

function executable(file: string): boolean {
  try {
    accessSync(file, process.platform === 'win32' ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * The binary to run: `OPENCODE_BIN_PATH` when set (opencode's own override), else the best installed
 * platform package, else the copy opencode-ai's postinstall made.
 */
export function resolveOpencodeBinary(env: NodeJS.ProcessEnv = process.env): OpencodeBinary {
  const override = env.OPENCODE_BIN_PATH;
  if (override !== undefined && override !== '') {
    if (!executable(override)) throw new UserError(`OPENCODE_BIN_PATH=${override} is not an executable file.`, { code: 'agent_binary_missing', exitCode: 2 });
    return { path: override, source: 'OPENCODE_BIN_PATH' };
  }
  const require = createRequire(import.meta.url);
  const file = process.platform === 'win32' ? 'opencode.exe' : 'opencode';
  const tried: string[] = [];
  for (const name of platformPackageNames()) {
    let dir: string;
    try {
      dir = path.dirname(require.resolve(`${name}/package.json`));
    } catch {
      tried.push(name);
      continue;
    }
    const candidate = path.join(dir, 'bin', file);
    if (executable(candidate)) return { path: candidate, source: name };
    tried.push(name);
  }
  try {
    const copied = path.join(path.dirname(require.resolve('opencode-ai/package.json')), 'bin', 'opencode.exe');
    if (executable(copied)) return { path: copied, source: 'opencode-ai' };
  } catch {
    // opencode-ai itself is missing: reported below.
  }
  throw new UserError(`No opencode binary is installed for ${process.platform}-${process.arch} (looked for ${tried.join(', ')}).`, {
    code: 'agent_binary_missing',
    hint: 'Reinstall docdex with its optional dependencies (npm ci --include=optional), or set OPENCODE_BIN_PATH to an opencode binary.',
  });
}
