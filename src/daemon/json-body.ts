import { StringDecoder } from 'node:string_decoder';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { z } from 'zod';
import { UserError, ValidationError } from '../core/errors.js';
import { OPEN_SHAPE, readBodySchema } from './body-shape.js';
import type { BodyShape } from './body-shape.js';
import { MAX_JSON_BYTES } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The keys each object of the route's JSON body may hold (body-shape.ts), set from its schema at registration. */
    bodyShape?: BodyShape;
  }
}

/**
 * JSON bodies nested deeper than this are refused with 400 before they are parsed. No docdex request nests
 * beyond a handful of levels; a body of ten thousand `[` parses, but every recursive walk over it later
 * (JSON.stringify of crawl metadata, validation, logging) overflowed the stack and answered 500.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Objects with more keys than this are refused before they are parsed, wherever the route's schema lets an
 * object hold any key (a record, metadata, an agent's configuration). No docdex request needs a tenth of it;
 * a megabyte of keys took a daemon's event loop for half a second to parse and validate.
 */
export const MAX_JSON_KEYS = 1000;

/**
 * Bytes a body may take beyond the most its schema allows: whitespace, for pretty-printed JSON. A route whose
 * schema bounds nothing (an upload's text) gets MAX_JSON_BYTES; one without a body schema gets this much.
 */
export const BODY_SLACK_BYTES = 16 * 1024;

/** Why a body was refused before it was parsed; null when it may be parsed. */
export type BodyProblem = { kind: 'too_deep' } | { kind: 'too_wide'; path: string[] } | { kind: 'unknown_key'; path: string[]; allowed: string[] };

interface Frame {
  /** The object's keys so far, or the array's index. */
  count: number;
  object: boolean;
  shape: BodyShape;
  /** Objects: the next string is a key. */
  expectKey: boolean;
  /** Objects: the last key read; the path segment of the value being scanned. */
  key: string;
  /** Objects: the shape of the value after `key`. */
  valueShape: BodyShape;
}

// Runs of characters that are neither a string's start nor structure: numbers, literals, whitespace, colons.
const PLAIN = /[^"{}[\],]+/y;
// Inside a string, what ends a run of its plain characters.
const STRING_STOP = /["\\]/g;
// The longest key text kept: keys a route names are far shorter, so a longer one is unknown to it.
const MAX_KEY_TEXT = 1024;

function pathOf(stack: readonly Frame[]): string[] {
  return stack.slice(0, -1).map((f) => (f.object ? f.key : String(f.count)));
}

/** A key as JSON.parse would read it, or undefined when its escapes are not JSON (the parser will say so). */
function keyText(raw: string): string | undefined {
  if (!raw.includes('\\')) return raw;
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * Reads a JSON text's structure, chunk by chunk as it arrives, without parsing it, and stops at the first object
 * nested past MAX_JSON_DEPTH, holding more than MAX_JSON_KEYS keys, or holding a key `shape` does not allow.
 * Linear, and most text is read in large steps (a string's plain run and everything else by one regex each).
 * What is not JSON is left for the parser to refuse.
 */
export class JsonScanner {
  private readonly stack: Frame[] = [];
  private inString = false;
  private escaped = false;
  /** Inside a key: its raw text so far (up to MAX_KEY_TEXT characters). */
  private key: string | undefined;
  private keyTooLong = false;
  /** The first problem found; nothing more is read after it. */
  problem: BodyProblem | null = null;

  constructor(private readonly shape: BodyShape = OPEN_SHAPE) {}

  /** Scans the next piece of the text; returns the problem once one is found. */
  write(text: string): BodyProblem | null {
    let i = 0;
    while (this.problem === null && i < text.length) i = this.inString ? this.stringPart(text, i) : this.structure(text, i);
    return this.problem;
  }

  private stringPart(text: string, from: number): number {
    let i = from;
    if (this.escaped) {
      this.escaped = false;
      this.keyPart(text, i, i + 1);
      return i + 1;
    }
    STRING_STOP.lastIndex = i;
    const stop = STRING_STOP.exec(text);
    const end = stop === null ? text.length : stop.index;
    this.keyPart(text, i, end);
    if (stop === null) return end;
    i = end;
    if (text.charCodeAt(i) === 0x5c) {
      this.keyPart(text, i, i + 1);
      this.escaped = true;
      return i + 1;
    }
    this.inString = false;
    if (this.key !== undefined) this.endKey();
    return i + 1;
  }

  private keyPart(text: string, from: number, to: number): void {
    if (this.key === undefined || to <= from) return;
    if (this.key.length + (to - from) > MAX_KEY_TEXT) this.keyTooLong = true;
    else this.key += text.slice(from, to);
  }

  private endKey(): void {
    const stack = this.stack;
    const top = stack[stack.length - 1]!;
    const raw = this.key!;
    this.key = undefined;
    const key = this.keyTooLong ? undefined : keyText(raw);
    top.expectKey = false;
    top.key = key ?? raw.slice(0, 100);
    if (++top.count > MAX_JSON_KEYS) {
      this.problem = { kind: 'too_wide', path: pathOf(stack) };
      return;
    }
    const known = top.shape.keys;
    if (known === undefined) {
      top.valueShape = top.shape.any ?? OPEN_SHAPE;
      return;
    }
    const allowed = key === undefined ? undefined : known.get(key);
    if (allowed === undefined) this.problem = { kind: 'unknown_key', path: [...pathOf(stack), top.key], allowed: [...known.keys()] };
    else top.valueShape = allowed;
  }

  private structure(text: string, from: number): number {
    PLAIN.lastIndex = from;
    const i = PLAIN.test(text) ? PLAIN.lastIndex : from;
    if (i >= text.length) return i;
    const c = text.charCodeAt(i);
    const stack = this.stack;
    const top = stack[stack.length - 1];
    if (c === 0x22) {
      this.inString = true;
      if (top !== undefined && top.object && top.expectKey) {
        this.key = '';
        this.keyTooLong = false;
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (stack.length >= MAX_JSON_DEPTH) {
        this.problem = { kind: 'too_deep' };
        return i;
      }
      const inner = top === undefined ? this.shape : top.object ? top.valueShape : (top.shape.any ?? OPEN_SHAPE);
      stack.push({ count: 0, object: c === 0x7b, shape: inner, expectKey: c === 0x7b, key: '', valueShape: OPEN_SHAPE });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (top !== undefined) {
      // A comma: the next key of an object, the next item of an array.
      if (top.object) top.expectKey = true;
      else top.count++;
    }
    return i + 1;
  }
}

/** A whole JSON text scanned at once (JsonScanner). */
export function scanJson(text: string, shape: BodyShape = OPEN_SHAPE): BodyProblem | null {
  return new JsonScanner(shape).write(text);
}

export function tooDeepError(): UserError {
  return new UserError(`The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, { code: 'bad_request', hint: 'Send a flatter document.' });
}

function pointer(path: readonly string[]): string {
  return path.map((p) => `/${p.replaceAll('~', '~0').replaceAll('/', '~1')}`).join('');
}

/** The error a refused body answers with: 400 for nesting and width, 422 naming an unknown field. */
export function bodyProblemError(problem: BodyProblem): UserError {
  switch (problem.kind) {
    case 'too_deep':
      return tooDeepError();
    case 'too_wide':
      return new UserError(`An object in the JSON body${problem.path.length > 0 ? ` (at ${pointer(problem.path)})` : ''} has more than ${MAX_JSON_KEYS} keys.`, {
        code: 'bad_request',
        hint: 'Send only the fields the route takes.',
      });
    case 'unknown_key': {
      const field = problem.path.join('.');
      const takes = problem.allowed.length === 0 ? 'no fields there' : `only ${problem.allowed.join(', ')}`;
      return new ValidationError(`Invalid request body: unknown field ${JSON.stringify(field)}; the route takes ${takes}.`, {
        details: [{ path: pointer(problem.path), message: 'unknown field', keyword: 'additionalProperties' }],
      });
    }
  }
}

/** A body over `limit` bytes: refused as it arrives, or from its Content-Length before any of it is read. */
function tooLargeError(limit: number): UserError {
  return new UserError(`The request body is larger than this route takes (at most ${limit} bytes).`, { code: 'payload_too_large' });
}

/**
 * A JSON body read from its stream as it arrives, each chunk scanned (JsonScanner) before the next is read, so a
 * body is refused at its first problem, or at the first byte past `limit`, without being read whole. Resolves
 * with the whole text for the parser; rejects with the refusal (and reads no more: Fastify then closes the
 * connection).
 */
export function readJsonBody(payload: NodeJS.ReadableStream, options: { limit: number; contentLength: string | undefined; shape: BodyShape | undefined }): Promise<string> {
  const { limit } = options;
  return new Promise((resolve, reject) => {
    if (Number(options.contentLength) > limit) {
      reject(tooLargeError(limit));
      return;
    }
    const decoder = new StringDecoder('utf8');
    const scanner = new JsonScanner(options.shape);
    const pieces: string[] = [];
    let received = 0;
    const stop = (error: UserError | Error) => {
      payload.removeListener('data', onData);
      payload.removeListener('end', onEnd);
      payload.removeListener('error', stop);
      reject(error);
    };
    const take = (text: string): boolean => {
      const problem = scanner.write(text);
      if (problem !== null) stop(bodyProblemError(problem));
      else pieces.push(text);
      return problem === null;
    };
    function onData(chunk: Buffer | string) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.length;
      if (received > limit) stop(tooLargeError(limit));
      else take(decoder.write(bytes));
    }
    function onEnd() {
      payload.removeListener('data', onData);
      payload.removeListener('error', stop);
      if (take(decoder.end())) resolve(pieces.join(''));
    }
    payload.on('data', onData);
    payload.on('end', onEnd);
    payload.on('error', stop);
    payload.resume();
  });
}

/** A route's body schema as JSON Schema: zod schemas (this app's) are converted, JSON Schemas taken as they are. */
function jsonSchemaOf(schema: unknown): object | undefined {
  if (schema instanceof z.ZodType) return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return typeof schema === 'object' && schema !== null ? schema : undefined;
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every route that takes a body gets a body limit and a body shape from its schema, unless it sets its own
 * limit: the most bytes a valid body can take plus BODY_SLACK_BYTES (at most MAX_JSON_BYTES), or
 * BODY_SLACK_BYTES for a route without a body schema. Fastify refuses a longer body with 413 from its
 * Content-Length alone, before reading it.
 */
function limitRouteBody(route: RouteOptions): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.some((m) => BODY_METHODS.has(m))) return;
  const schema = jsonSchemaOf(route.schema?.body);
  const reading = schema === undefined ? { bytes: 0, shape: OPEN_SHAPE } : readBodySchema(schema);
  route.bodyLimit ??= Math.min(MAX_JSON_BYTES, reading.bytes + BODY_SLACK_BYTES);
  route.config = { ...route.config, bodyShape: route.config?.bodyShape ?? reading.shape };
}

/**
 * Fastify's own JSON parser (with its __proto__ and constructor checks), behind readJsonBody: the route's limit
 * and body shape checked as the body arrives. Registered on the root instance before any route, so every
 * route's body goes through it; the MCP plugin has its own parser (mcp/http.ts) and sets its routes' limits.
 */
export function installJsonBodyParser(app: FastifyInstance): void {
  app.addHook('onRoute', limitRouteBody);
  // A reply sent before its request's body was read to the end (a body refused as it arrived, a 401 or 413 before
  // any of it was read) closes the connection: to keep it alive, Node would read and drop the rest of the upload,
  // megabytes of it, for nothing.
  app.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete) void reply.header('connection', 'close');
  });
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', (request, payload, done) => {
    const { bodyLimit, config } = request.routeOptions;
    readJsonBody(payload, { limit: bodyLimit, contentLength: request.headers['content-length'], shape: config.bodyShape }).then(
      (text) => void parse(request, text, done),
      (error: Error) => done(error, undefined),
    );
  });
}
