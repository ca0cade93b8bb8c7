import { describe, expect, it } from 'vitest';
import { parseExecArgs, rawProcessArgs } from '../../src/core/sandbox/exec-args.js';
import { FrameDecoder, FrameType, decodeExecPayload, decodeExit, decodeRequest, encodeExecPayload, encodeExit, encodeFrame, encodeRequest, exitCodeOf } from '../../src/core/sandbox/protocol.js';
import type { ExecEnd } from '../../src/core/sandbox/protocol.js';

describe('framing', () => {
  it('round-trips frames split at every byte boundary', () => {
    const frames = [encodeFrame(FrameType.stdout, 7, Buffer.from([0, 1, 255, 10])), encodeFrame(FrameType.attest, 0xfffffff0), encodeFrame(FrameType.stderr, 1, Buffer.alloc(70_000, 0x61))];
    const wire = Buffer.concat(frames);
    for (const step of [1, 3, 9, 4096]) {
      const decoder = new FrameDecoder();
      const got = [];
      for (let i = 0; i < wire.length; i += step) got.push(...decoder.push(wire.subarray(i, i + step)));
      expect(got.map((f) => [f.type, f.id, f.payload.length])).toEqual([
        [FrameType.stdout, 7, 4],
        [FrameType.attest, 0xfffffff0, 0],
        [FrameType.stderr, 1, 70_000],
      ]);
      expect([...got[0]!.payload]).toEqual([0, 1, 255, 10]);
    }
  });

  it('refuses oversized frames', () => {
    const header = Buffer.alloc(9);
    header.writeUInt32LE(64 * 1024 * 1024, 0);
    expect(() => new FrameDecoder().push(header)).toThrow(/limit/);
  });

  it('encodes exec requests byte for byte', () => {
    const req = { cwd: Buffer.from('/w'), argv: [Buffer.from('sh'), Buffer.from('-c'), Buffer.from([0xff, 0x27, 0x0a])], env: [Buffer.from('A=\n\xfe', 'latin1')], timeoutMs: 1500 };
    expect(decodeExecPayload(encodeExecPayload(req))).toEqual(req);
    const wrapped = decodeRequest(encodeRequest({ op: 'exec' }, req));
    expect(wrapped.header).toEqual({ op: 'exec' });
    expect(wrapped.exec).toEqual(req);
    expect(decodeRequest(encodeRequest({ op: 'status' })).exec).toBeUndefined();
  });

  it('maps how a command ended to shell exit codes', () => {
    const ends: Array<[ExecEnd, number]> = [
      [{ kind: 'exited', code: 3 }, 3],
      [{ kind: 'signaled', signal: 9 }, 137],
      [{ kind: 'timeout', value: 15, message: 'command timed out' }, 124],
      [{ kind: 'spawn-failed', errno: 2, message: 'cannot execute x' }, 127],
    ];
    for (const [end, code] of ends) {
      expect(decodeExit(encodeExit(end))).toEqual(end);
      expect(exitCodeOf(end)).toBe(code);
    }
  });
});

describe('sandbox exec arguments', () => {
  const b = (...xs: string[]): Buffer[] => xs.map((x) => Buffer.from(x, 'latin1'));

  it('parses -w, repeated -e, --timeout and the command after --', () => {
    const parsed = parseExecArgs(b('-w', '/w/app', '-e', 'A=1', '-e', 'B=x=y', '--timeout', '500', '--', 'sh', '-c', 'echo -w'));
    expect(parsed.workdir.toString()).toBe('/w/app');
    expect(parsed.env.map(String)).toEqual(['A=1', 'B=x=y']);
    expect(parsed.timeoutMs).toBe(500);
    expect(parsed.argv.map(String)).toEqual(['sh', '-c', 'echo -w']);
  });

  it('rejects a missing workdir, a missing command, bad env entries and the internal token', () => {
    expect(() => parseExecArgs(b('--', 'true'))).toThrow(/-w DIR is required/);
    expect(() => parseExecArgs(b('-w', '/w'))).toThrow(/no command/);
    expect(() => parseExecArgs(b('-w', '/w', '-e', 'novalue', '--', 'true'))).toThrow(/NAME=VALUE/);
    expect(() => parseExecArgs(b('-w', '/w', '-e', 'MGR_INTERNAL_TOKEN=x', '--', 'true'))).toThrow(/never crosses/);
  });

  it('recovers raw argv bytes from /proc/self/cmdline, trusting them only when they match argv', () => {
    const cmdline = Buffer.concat([Buffer.from('node\0--flag\0/bin/run.js\0sandbox\0exec\0'), Buffer.from([0x61, 0xff, 0]), Buffer.from('x\0')]);
    const argv = ['node', '/bin/run.js', 'sandbox', 'exec', Buffer.from([0x61, 0xff]).toString('utf8'), 'x'];
    const raw = rawProcessArgs(argv, cmdline);
    expect(raw.map((r) => r.toString('hex'))).toEqual(['sandbox', 'exec', 'a\xff', 'x'].map((s) => Buffer.from(s, 'latin1').toString('hex')));
    // a rewritten process title does not match: fall back to argv
    const other = rawProcessArgs(['node', 'run.js', 'a', 'b'], Buffer.from('renamed\0'));
    expect(other.map(String)).toEqual(['a', 'b']);
  });
});
