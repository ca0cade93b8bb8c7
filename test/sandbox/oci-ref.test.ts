import fc from 'fast-check';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveImageRef } from '../../src/core/sandbox/images.js';
import { sandboxRoots } from '../../src/core/sandbox/settings.js';
import { checkSandboxHost } from '../../src/core/sandbox/switch.js';
import { checkRegistry, pullFailureReason } from '../../src/core/sandbox/oci-pull.js';
import { formatOciRef, parseOciRef } from '../../src/core/sandbox/oci-ref.js';
import type { OciRef } from '../../src/core/sandbox/oci-ref.js';

const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789'.split(''));
const lowerWord = fc.array(alnum, { minLength: 1, maxLength: 8 }).map((a) => a.join(''));
const pathComponent = fc
  .tuple(lowerWord, fc.array(fc.tuple(fc.constantFrom('.', '_', '__', '-', '--'), lowerWord), { maxLength: 2 }))
  .map(([head, rest]) => head + rest.map(([sep, w]) => sep + w).join(''));
const domainComponent = fc
  .tuple(fc.constantFrom(...'abcXYZ019'.split('')), fc.array(fc.constantFrom(...'ab-9Z'.split('')), { maxLength: 6 }), fc.constantFrom(...'az09'.split('')))
  .map(([a, mid, z]) => a + mid.join('') + z);
const registry = fc.oneof(
  fc.tuple(fc.array(domainComponent, { minLength: 2, maxLength: 3 }), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })).map(([parts, port]) => ({ host: parts.join('.'), port })),
  fc.tuple(fc.constant('localhost'), fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined })).map(([host, port]) => ({ host, port })),
  fc.tuple(fc.array(domainComponent, { minLength: 1, maxLength: 1 }), fc.integer({ min: 1, max: 65535 })).map(([parts, port]) => ({ host: parts[0]!, port })),
);
const tag = fc.tuple(fc.constantFrom(...'aZ9_'.split('')), fc.array(fc.constantFrom(...'aZ9_.-'.split('')), { maxLength: 20 })).map(([h, t]) => h + t.join(''));
const digest = fc.array(fc.constantFrom(...'0123456789abcdef'.split('')), { minLength: 64, maxLength: 64 }).map((h) => `sha256:${h.join('')}`);

const validRef = fc
  .record({ registry, path: fc.array(pathComponent, { minLength: 1, maxLength: 3 }), tag: fc.option(tag, { nil: undefined }), digest: fc.option(digest, { nil: undefined }) })
  .map((r): Omit<OciRef, 'ref'> => ({
    registry: r.registry.port === undefined ? r.registry.host : `${r.registry.host}:${r.registry.port}`,
    host: r.registry.host,
    ...(r.registry.port === undefined ? {} : { port: r.registry.port }),
    repository: r.path.join('/'),
    ...(r.tag === undefined ? {} : { tag: r.tag }),
    ...(r.digest === undefined ? {} : { digest: r.digest }),
  }));

/** What may reach a command line or a log unquoted: never an option, never whitespace or shell syntax. */
const SAFE = /^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/;

describe('parseOciRef (SANDBOX_IMAGE registry references)', () => {
  it('reads back every reference of the grammar it accepts', () => {
    fc.assert(
      fc.property(validRef, (r) => {
        const text = formatOciRef(r);
        expect(parseOciRef(text)).toEqual({ ...r, ref: text });
      }),
      { numRuns: 500 },
    );
  });

  it('never throws on arbitrary input, and what it accepts is safe on a command line', () => {
    const hostile = fc.oneof(
      fc.string({ maxLength: 300 }),
      fc.string({ unit: 'binary', maxLength: 100 }),
      fc.tuple(validRef.map(formatOciRef), fc.string({ maxLength: 10 }), fc.nat(400)).map(([ref, junk, at]) => ref.slice(0, at % (ref.length + 1)) + junk + ref.slice(at % (ref.length + 1))),
    );
    fc.assert(
      fc.property(hostile, (text) => {
        const parsed = parseOciRef(text);
        if (parsed === undefined) return;
        expect(parsed.ref).toBe(text);
        expect(text).toMatch(SAFE);
        expect(parsed.repository.split('/')).not.toContain('..');
        expect(parseOciRef(formatOciRef(parsed))).toEqual(parsed);
      }),
      { numRuns: 600 },
    );
  });

  it('refuses anything that would read as an option, or that carries a scheme, spaces or a second reference', () => {
    fc.assert(
      fc.property(validRef.map(formatOciRef), fc.constantFrom('-', '--', ' ', 'docker://', '\n'), (ref, prefix) => {
        expect(parseOciRef(prefix + ref)).toBeUndefined();
      }),
    );
    for (const bad of [
      '--src-creds=a:b',
      '-127.0.0.1:5000/x',
      '127.0.0.1:5000/x y',
      '127.0.0.1:5000/x:tag --dest-creds',
      '127.0.0.1:5000/../etc',
      '127.0.0.1:5000/x/./y',
      '127.0.0.1:5000/Upper',
      '127.0.0.1:0/x',
      '127.0.0.1:65536/x',
      'host.example/x@sha512:' + 'a'.repeat(128),
      'host.example/x@sha256:' + 'A'.repeat(64),
      'host.example/x:' + 'a'.repeat(129),
      'user@host.example/x',
      '[::1]:5000/x',
      'host.example/',
      'host.example//x',
    ]) {
      expect(parseOciRef(bad), bad).toBeUndefined();
    }
  });

  it('leaves names without a registry host to the local store', () => {
    for (const local of ['docdex-debian', 'busybox:latest', 'library/busybox', 'docdex-debian@sha256:' + 'a'.repeat(64)]) {
      expect(parseOciRef(local), local).toBeUndefined();
    }
    expect(parseOciRef('localhost/x')).toMatchObject({ host: 'localhost', repository: 'x' });
    expect(parseOciRef('127.0.0.1:5000/team/app:1.2@sha256:' + 'b'.repeat(64))).toMatchObject({
      registry: '127.0.0.1:5000',
      host: '127.0.0.1',
      port: 5000,
      repository: 'team/app',
      tag: '1.2',
      digest: 'sha256:' + 'b'.repeat(64),
    });
  });
});

describe('SANDBOX_IMAGE classification', () => {
  it('keeps a registry reference as given, with no network and no store lookup', async () => {
    const cache = await mkdtemp(path.join(os.tmpdir(), 'docdex-oci-'));
    await expect(resolveImageRef(cache, 'registry.example.com/team/img:1')).resolves.toMatchObject({ kind: 'registry', ref: 'registry.example.com/team/img:1' });
    await expect(resolveImageRef(cache, '-o/x')).rejects.toMatchObject({ code: 'sandbox_unavailable', message: expect.stringMatching(/nor a registry reference/) });
    await expect(resolveImageRef(cache, '-o/x')).rejects.toHaveProperty('options.hint', expect.stringMatching(/registry\.example\.com/));
  });
});

describe('docdex sandbox enable with a registry image', () => {
  it('says the image is pulled at the first boot, or that skopeo and umoci are missing to pull it', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'docdex-oci-host-'));
    const settings = {
      workspacePath: home,
      roots: sandboxRoots(home),
      image: 'registry.example.com/team/img@sha256:' + 'c'.repeat(64),
      accel: 'tcg' as const,
      execUser: undefined,
      startTimeoutMs: 120_000,
      memoryMib: 256,
      cpus: 1,
      cacheDir: path.join(home, 'sandbox'),
      stateDir: path.join(home, 'sandbox', 'run'),
    };
    const withTools = await checkSandboxHost(settings);
    expect(withTools.notes.join('\n')).toMatch(/is pulled from registry\.example\.com when the microVM first boots/);
    const without = await checkSandboxHost(settings, { searchPath: '/nonexistent' });
    expect(without.notes.join('\n')).toMatch(/lacks skopeo \(skopeo\), umoci \(umoci\) to pull it/);
  });
});

describe('the outbound policy for a registry pull', () => {
  const resolveTo = (address: string) => () => Promise.resolve([{ address, family: address.includes(':') ? 6 : 4 }]);
  const ref = (text: string): OciRef => parseOciRef(text)!;

  it('refuses a loopback or private registry unless CRAWL_ALLOW_HOSTS lists it', async () => {
    await expect(checkRegistry(ref('127.0.0.1:5000/x:1'), [])).rejects.toThrow(/not allowed by the outbound policy.*loopback/);
    await expect(checkRegistry(ref('localhost:5000/x:1'), [])).rejects.toThrow(/loopback/);
    await expect(checkRegistry(ref('reg.internal.example/x:1'), [], resolveTo('10.1.2.3'))).rejects.toThrow(/private address/);
    await expect(checkRegistry(ref('evil.example/x:1'), [], resolveTo('169.254.169.254'))).rejects.toThrow(/metadata/);
    await expect(checkRegistry(ref('127.0.0.1:5000/x:1'), [])).rejects.toHaveProperty('options.hint', expect.stringMatching(/CRAWL_ALLOW_HOSTS/));
  });

  it('speaks plain HTTP to a listed loopback registry only, and TLS everywhere else', async () => {
    await expect(checkRegistry(ref('127.0.0.1:5000/x:1'), ['127.0.0.1'])).resolves.toEqual({ plainHttp: true });
    await expect(checkRegistry(ref('reg.internal.example/x:1'), ['10.0.0.0/8'], resolveTo('10.1.2.3'))).resolves.toEqual({ plainHttp: false });
    await expect(checkRegistry(ref('registry.example.com/x:1'), [], resolveTo('93.184.216.34'))).resolves.toEqual({ plainHttp: false });
    // A listed name that resolves to loopback is still loopback: plain HTTP never leaves the machine.
    await expect(checkRegistry(ref('reg.example.com/x:1'), ['reg.example.com'], resolveTo('127.0.0.1'))).resolves.toEqual({ plainHttp: true });
  });
});

describe("pullFailureReason (skopeo and umoci output, partly the registry's words)", () => {
  it("keeps the tool's fatal message and drops the progress lines", () => {
    const output =
      'sandbox/scripts/pull-image.sh failed (exit 1): [sandbox-build] pulling 127.0.0.1:1/x:missing\n' +
      'time="2026-12-07T13:40:34Z" level=fatal msg="initializing source docker://127.0.0.1:1/x:missing: reading manifest missing in 127.0.0.1:1/x: manifest unknown: manifest \\"quoted\\""';
    expect(pullFailureReason(output)).toBe('initializing source docker://127.0.0.1:1/x:missing: reading manifest missing in 127.0.0.1:1/x: manifest unknown: manifest "quoted"');
    expect(pullFailureReason("sandbox/scripts/pull-image.sh failed (exit 1): [sandbox-build] error: missing host tool 'umoci' (apt-get install umoci)")).toBe(
      "missing host tool 'umoci' (apt-get install umoci)",
    );
  });

  it('never throws and always answers one line', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 400 }), (output) => {
        const reason = pullFailureReason(output);
        expect(reason.length).toBeGreaterThan(0);
        expect(reason).not.toContain('\n');
      }),
    );
  });
});
