/**
 * The binary framing shared by the guest agent (sandbox/agent/mgr-agent.c) and the host runner, on the
 * virtio-serial port and on the runner's unix socket alike:
 *
 *   u32 payload_length | u8 type | u32 request_id | payload        (little endian)
 *
 * Strings inside payloads are a u32 length and raw bytes, so commands, paths and environment values travel
 * byte for byte (newlines, quotes, invalid UTF-8), which a line protocol cannot promise.
 */

export const HEADER_BYTES = 9;
/** Mirrors MAX_FRAME in mgr-agent.c: a larger frame means a broken peer, not a big command. */
export const MAX_FRAME = 4 * 1024 * 1024;

export const FrameType = {
  // host -> guest agent
  exec: 0x01,
  signal: 0x02,
  attest: 0x03,
  // guest agent -> host (the runner forwards started/stdout/stderr/exit/error to its clients unchanged)
  hello: 0x40,
  started: 0x41,
  stdout: 0x42,
  stderr: 0x43,
  exit: 0x44,
  attestResult: 0x45,
  error: 0x46,
  // runner client <-> runner daemon
  request: 0x10,
  clientSignal: 0x11,
  result: 0x20,
} as const;

export interface Frame {
  type: number;
  id: number;
  payload: Buffer;
}

export function encodeFrame(type: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  if (payload.length > MAX_FRAME) throw new Error(`frame payload of ${payload.length} bytes exceeds ${MAX_FRAME}`);
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(payload.length, 0);
  header.writeUInt8(type, 4);
  header.writeUInt32LE(id >>> 0, 5);
  return Buffer.concat([header, payload]);
}

/** Incremental decoder: feed it chunks as they arrive, get whole frames back. */
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): Frame[] {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const frames: Frame[] = [];
    let offset = 0;
    while (this.buffer.length - offset >= HEADER_BYTES) {
      const length = this.buffer.readUInt32LE(offset);
      if (length > MAX_FRAME) throw new Error(`peer sent a frame of ${length} bytes (limit ${MAX_FRAME})`);
      if (this.buffer.length - offset < HEADER_BYTES + length) break;
      frames.push({
        type: this.buffer.readUInt8(offset + 4),
        id: this.buffer.readUInt32LE(offset + 5),
        payload: Buffer.from(this.buffer.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length)),
      });
      offset += HEADER_BYTES + length;
    }
    this.buffer = offset === 0 ? this.buffer : Buffer.from(this.buffer.subarray(offset));
    return frames;
  }
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0, 0);
  return b;
}

function str(value: Buffer): Buffer {
  return Buffer.concat([u32(value.length), value]);
}

export interface ExecRequest {
  /** Guest working directory. */
  cwd: Buffer;
  /** Program and arguments; argv[0] is looked up on the command's PATH. */
  argv: Buffer[];
  /** NAME=VALUE entries: the whole guest environment of the command. */
  env: Buffer[];
  /** 0 = no timeout. */
  timeoutMs: number;
}

export function encodeExecPayload(req: ExecRequest): Buffer {
  return Buffer.concat([u32(req.timeoutMs), u32(req.argv.length), u32(req.env.length), str(req.cwd), ...req.argv.map(str), ...req.env.map(str)]);
}

export function decodeExecPayload(payload: Buffer, offset = 0): ExecRequest {
  let at = offset;
  const readU32 = (): number => {
    if (at + 4 > payload.length) throw new Error('truncated exec request');
    const v = payload.readUInt32LE(at);
    at += 4;
    return v;
  };
  const readStr = (): Buffer => {
    const n = readU32();
    if (at + n > payload.length) throw new Error('truncated exec request');
    const v = Buffer.from(payload.subarray(at, at + n));
    at += n;
    return v;
  };
  const timeoutMs = readU32();
  const argc = readU32();
  const envc = readU32();
  const cwd = readStr();
  const argv = Array.from({ length: argc }, readStr);
  const env = Array.from({ length: envc }, readStr);
  return { cwd, argv, env, timeoutMs };
}

export type ExecEnd =
  { kind: 'exited'; code: number } | { kind: 'signaled'; signal: number } | { kind: 'timeout'; value: number; message: string } | { kind: 'spawn-failed'; errno: number; message: string };

export function encodeExit(end: ExecEnd): Buffer {
  const head = Buffer.alloc(5);
  const [kind, value, message] =
    end.kind === 'exited' ? [0, end.code, ''] : end.kind === 'signaled' ? [1, end.signal, ''] : end.kind === 'timeout' ? [2, end.value, end.message] : [3, end.errno, end.message];
  head.writeUInt8(kind, 0);
  head.writeInt32LE(value, 1);
  return Buffer.concat([head, Buffer.from(message)]);
}

export function decodeExit(payload: Buffer): ExecEnd {
  if (payload.length < 5) throw new Error('truncated exit frame');
  const kind = payload.readUInt8(0);
  const value = payload.readInt32LE(1);
  const message = payload.subarray(5).toString('utf8');
  switch (kind) {
    case 0:
      return { kind: 'exited', code: value };
    case 1:
      return { kind: 'signaled', signal: value };
    case 2:
      return { kind: 'timeout', value, message };
    default:
      return { kind: 'spawn-failed', errno: value, message };
  }
}

/** Shell conventions, so a caller sees the same codes as from a local shell: 128+n for a signal, 124 for a timeout (as timeout(1)), 127 when the program could not start. */
export function exitCodeOf(end: ExecEnd): number {
  switch (end.kind) {
    case 'exited':
      return end.code;
    case 'signaled':
      return 128 + end.signal;
    case 'timeout':
      return 124;
    case 'spawn-failed':
      return 127;
  }
}

export function encodeSignal(signal: number): Buffer {
  return u32(signal);
}

/** Runner socket request: a JSON header, then (for exec) the binary exec payload. */
export function encodeRequest(header: unknown, exec?: ExecRequest): Buffer {
  const json = Buffer.from(JSON.stringify(header));
  return Buffer.concat([u32(json.length), json, exec ? encodeExecPayload(exec) : Buffer.alloc(0)]);
}

export function decodeRequest(payload: Buffer): { header: unknown; exec?: ExecRequest } {
  if (payload.length < 4) throw new Error('truncated request');
  const n = payload.readUInt32LE(0);
  if (4 + n > payload.length) throw new Error('truncated request');
  const header: unknown = JSON.parse(payload.subarray(4, 4 + n).toString('utf8'));
  return 4 + n < payload.length ? { header, exec: decodeExecPayload(payload, 4 + n) } : { header };
}
