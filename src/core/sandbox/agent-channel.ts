import type { Readable, Writable } from 'node:stream';
import { FrameDecoder, FrameType, decodeExit, encodeExecPayload, encodeFrame, encodeSignal } from './protocol.js';
import type { ExecEnd, ExecRequest, Frame } from './protocol.js';

export interface ExecSink {
  onStarted?(pid: number): void;
  /** Return false when the receiver is saturated; the channel then stops reading until `resume(sink)`. */
  onStdout(chunk: Buffer): boolean | void;
  onStderr(chunk: Buffer): boolean | void;
}

export interface RunningExec {
  id: number;
  /** Delivers a signal to the command's process group in the guest. */
  signal(signal: number): void;
  done: Promise<ExecEnd>;
}

interface PendingExec {
  sink: ExecSink;
  resolve(end: ExecEnd): void;
  reject(error: Error): void;
}

interface PendingAttest {
  resolve(raw: unknown): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The host end of the guest agent's virtio-serial port (QEMU's stdio). Multiplexes any number of commands
 * and attestation requests by request id. When the port closes (QEMU exited), everything pending fails:
 * a command whose VM died must never look finished.
 */
export class AgentChannel {
  readonly hello: Promise<string>;
  private readonly decoder = new FrameDecoder();
  private readonly execs = new Map<number, PendingExec>();
  private readonly attests = new Map<number, PendingAttest>();
  private readonly saturated = new Set<ExecSink>();
  private nextId = 1;
  private closedError: Error | undefined;
  private resolveHello!: (version: string) => void;
  private rejectHello!: (error: Error) => void;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
  ) {
    this.hello = new Promise((resolve, reject) => {
      this.resolveHello = resolve;
      this.rejectHello = reject;
    });
    // The boot path awaits hello; anyone else only cares about the close.
    this.hello.catch(() => undefined);
    input.on('data', (chunk: Buffer) => this.onData(chunk));
    input.on('end', () => this.close(new Error('the agent port closed')));
    input.on('error', (error) => this.close(error));
    output.on('error', (error) => this.close(error));
  }

  get closed(): boolean {
    return this.closedError !== undefined;
  }

  get running(): number {
    return this.execs.size;
  }

  private allocateId(): number {
    for (;;) {
      const id = this.nextId;
      this.nextId = this.nextId >= 0xfffffff0 ? 1 : this.nextId + 1;
      if (!this.execs.has(id) && !this.attests.has(id)) return id;
    }
  }

  private send(type: number, id: number, payload?: Buffer): void {
    if (this.closedError) throw this.closedError;
    this.output.write(encodeFrame(type, id, payload));
  }

  private onData(chunk: Buffer): void {
    let frames: Frame[];
    try {
      frames = this.decoder.push(chunk);
    } catch (error) {
      this.close(error as Error);
      return;
    }
    for (const frame of frames) this.onFrame(frame);
  }

  private onFrame(frame: Frame): void {
    switch (frame.type) {
      case FrameType.hello:
        this.resolveHello(frame.payload.toString('utf8'));
        return;
      case FrameType.attestResult: {
        const pending = this.attests.get(frame.id);
        if (!pending) return;
        this.attests.delete(frame.id);
        clearTimeout(pending.timer);
        try {
          pending.resolve(JSON.parse(frame.payload.toString('utf8')));
        } catch (error) {
          pending.reject(new Error(`unreadable attestation: ${(error as Error).message}`));
        }
        return;
      }
      case FrameType.started:
        this.execs.get(frame.id)?.sink.onStarted?.(frame.payload.readUInt32LE(0));
        return;
      case FrameType.stdout:
      case FrameType.stderr: {
        const pending = this.execs.get(frame.id);
        if (!pending) return;
        const more = frame.type === FrameType.stdout ? pending.sink.onStdout(frame.payload) : pending.sink.onStderr(frame.payload);
        if (more === false) this.pause(pending.sink);
        return;
      }
      case FrameType.exit: {
        const pending = this.execs.get(frame.id);
        if (!pending) return;
        this.execs.delete(frame.id);
        this.resume(pending.sink);
        pending.resolve(decodeExit(frame.payload));
        return;
      }
      case FrameType.error: {
        const message = frame.payload.toString('utf8');
        const exec = this.execs.get(frame.id);
        if (exec) {
          this.execs.delete(frame.id);
          this.resume(exec.sink);
          exec.reject(new Error(`the guest agent rejected the command: ${message}`));
        }
        const attest = this.attests.get(frame.id);
        if (attest) {
          this.attests.delete(frame.id);
          clearTimeout(attest.timer);
          attest.reject(new Error(`the guest agent rejected attestation: ${message}`));
        }
        return;
      }
      default:
        return;
    }
  }

  /** Backpressure: one slow reader stalls the port, which is better than buffering without bound. */
  private pause(sink: ExecSink): void {
    this.saturated.add(sink);
    this.input.pause();
  }

  resume(sink: ExecSink): void {
    if (this.saturated.delete(sink) && this.saturated.size === 0 && !this.closedError) this.input.resume();
  }

  attest(timeoutMs = 10_000): Promise<unknown> {
    if (this.closedError) return Promise.reject(this.closedError);
    const id = this.allocateId();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.attests.delete(id);
        reject(new Error(`the guest agent did not answer attestation within ${timeoutMs} ms`));
      }, timeoutMs);
      this.attests.set(id, { resolve, reject, timer });
      try {
        this.send(FrameType.attest, id);
      } catch (error) {
        clearTimeout(timer);
        this.attests.delete(id);
        reject(error as Error);
      }
    });
  }

  exec(request: ExecRequest, sink: ExecSink): RunningExec {
    const id = this.allocateId();
    const done = new Promise<ExecEnd>((resolve, reject) => {
      this.execs.set(id, { sink, resolve, reject });
    });
    try {
      this.send(FrameType.exec, id, encodeExecPayload(request));
    } catch (error) {
      this.execs.get(id)?.reject(error as Error);
      this.execs.delete(id);
    }
    return {
      id,
      done,
      signal: (signal: number) => {
        if (this.execs.has(id) && !this.closedError) this.send(FrameType.signal, id, encodeSignal(signal));
      },
    };
  }

  close(error: Error): void {
    if (this.closedError) return;
    this.closedError = error;
    this.rejectHello(error);
    for (const pending of this.execs.values()) pending.reject(error);
    this.execs.clear();
    for (const pending of this.attests.values()) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
    this.attests.clear();
    this.saturated.clear();
  }
}
