// What a route's JSON body may be, read from the route's own schema (its JSON Schema, as the OpenAPI document
// shows it): the most bytes a valid body can take, and which keys each object in it may hold. The JSON parser
// (json-body.ts) refuses a body past the first before reading it whole, and stops at the first key the second
// does not allow, before anything parses or validates the rest. A route that takes a few short fields gets a
// body limit of a few kilobytes this way, and an object of a hundred thousand keys costs it nothing.

/** A JSON Schema node, the parts read here. */
interface JsonSchema {
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  maxLength?: number;
  maxItems?: number;
  maxProperties?: number;
  items?: JsonSchema | JsonSchema[];
  prefixItems?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  /** A value's most bytes as JSON.stringify writes it, where no standard keyword can say (crawl-request.ts). */
  'x-max-bytes'?: number;
}

/** What the parser checks at one place in a body. */
export interface BodyShape {
  /** The keys an object here may hold, each with its value's shape; undefined: any key (a record, or open). */
  readonly keys: ReadonlyMap<string, BodyShape> | undefined;
  /** The shape of the value of a key not in `keys` (a record's values), and of an array's items. */
  readonly any: BodyShape | undefined;
}

/** Anything: only the nesting and key-count limits apply. */
export const OPEN_SHAPE: BodyShape = { keys: undefined, any: undefined };

// A character of a string may be sent as a six-character escape (\u0041), so a string of n characters may take
// 6n bytes; numbers are at most 24 characters as JSON.stringify writes them (-1.7976931348623157e+308).
const ESCAPED_CHAR_BYTES = 6;
const NUMBER_BYTES = 24;

/** What one schema node allows: the most bytes of a value, and its shape. */
export interface Reading {
  bytes: number;
  shape: BodyShape;
}

const UNBOUNDED: Reading = { bytes: Number.POSITIVE_INFINITY, shape: OPEN_SHAPE };

function stringBytes(maxLength: number | undefined): number {
  return maxLength === undefined ? Number.POSITIVE_INFINITY : 2 + ESCAPED_CHAR_BYTES * maxLength;
}

function literalBytes(value: unknown): number {
  return typeof value === 'string' ? stringBytes(value.length) : JSON.stringify(value ?? null).length;
}

class SchemaReader {
  // Schemas being read: a recursive definition is unbounded.
  private readonly reading = new Set<JsonSchema>();

  constructor(private readonly root: JsonSchema) {}

  read(schema: JsonSchema | undefined): Reading {
    if (schema === undefined) return UNBOUNDED;
    if (this.reading.has(schema)) return UNBOUNDED;
    this.reading.add(schema);
    try {
      return this.readNode(schema);
    } finally {
      this.reading.delete(schema);
    }
  }

  private resolve(ref: string): JsonSchema | undefined {
    const match = /^#\/\$defs\/(.+)$/.exec(ref);
    return match ? this.root.$defs?.[decodeURIComponent(match[1]!)] : undefined;
  }

  private readNode(schema: JsonSchema): Reading {
    if (schema.$ref !== undefined) return this.read(this.resolve(schema.$ref));
    const maxBytes = schema['x-max-bytes'];
    if (maxBytes !== undefined) {
      // Every byte JSON.stringify writes may be sent as an escape.
      const reading = this.readNode({ ...schema, 'x-max-bytes': undefined });
      return { bytes: Math.min(reading.bytes, ESCAPED_CHAR_BYTES * maxBytes), shape: reading.shape };
    }
    const alternatives = schema.anyOf ?? schema.oneOf;
    if (alternatives !== undefined) return this.union(alternatives.map((a) => this.read(a)));
    if (schema.allOf !== undefined) return this.union(schema.allOf.map((a) => this.read(a)));
    if (schema.const !== undefined) return { bytes: literalBytes(schema.const), shape: OPEN_SHAPE };
    if (schema.enum !== undefined) return { bytes: Math.max(0, ...schema.enum.map(literalBytes)), shape: OPEN_SHAPE };
    const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
    if (types.length === 0) return schema.properties !== undefined ? this.object(schema) : UNBOUNDED;
    return this.union(types.map((type) => this.typed(type, schema)));
  }

  private typed(type: string, schema: JsonSchema): Reading {
    switch (type) {
      case 'string':
        return { bytes: stringBytes(schema.maxLength), shape: OPEN_SHAPE };
      case 'number':
      case 'integer':
        return { bytes: NUMBER_BYTES, shape: OPEN_SHAPE };
      case 'boolean':
        return { bytes: 5, shape: OPEN_SHAPE };
      case 'null':
        return { bytes: 4, shape: OPEN_SHAPE };
      case 'array':
        return this.array(schema);
      case 'object':
        return this.object(schema);
      default:
        return UNBOUNDED;
    }
  }

  private array(schema: JsonSchema): Reading {
    const items = Array.isArray(schema.items) ? undefined : schema.items;
    const item = this.union([...(items === undefined ? [] : [this.read(items)]), ...(schema.prefixItems ?? []).map((p) => this.read(p))]);
    const bytes = schema.maxItems === undefined ? Number.POSITIVE_INFINITY : 2 + schema.maxItems * (item.bytes + 1);
    return { bytes, shape: { keys: undefined, any: item.shape } };
  }

  private object(schema: JsonSchema): Reading {
    const keys = new Map<string, BodyShape>();
    let bytes = 2;
    for (const [key, value] of Object.entries(schema.properties ?? {})) {
      const reading = this.read(value);
      keys.set(key, reading.shape);
      bytes += stringBytes(key.length) + 1 + reading.bytes + 1;
    }
    const additional = schema.additionalProperties;
    if (additional === false) return { bytes, shape: { keys, any: undefined } };
    // Open (a record, or a schema that does not close it): any key, each value of the additional schema.
    const other = additional === undefined || additional === true ? UNBOUNDED : this.read(additional);
    const perKey = stringBytes(schema.propertyNames?.maxLength) + 1 + other.bytes + 1;
    const extra = schema.maxProperties === undefined ? Number.POSITIVE_INFINITY : schema.maxProperties * perKey;
    return { bytes: bytes + extra, shape: { keys: undefined, any: other.shape } };
  }

  /** Any of several: the most bytes of any, and the keys any of them allows (open if one is open). */
  private union(readings: Reading[]): Reading {
    if (readings.length === 0) return UNBOUNDED;
    if (readings.length === 1) return readings[0]!;
    const bytes = Math.max(...readings.map((r) => r.bytes));
    const objects = readings.filter((r) => r.shape.keys !== undefined || r.shape.any !== undefined);
    if (objects.length === 0) return { bytes, shape: OPEN_SHAPE };
    if (objects.some((r) => r.shape.keys === undefined)) return { bytes, shape: OPEN_SHAPE };
    const keys = new Map<string, BodyShape>();
    for (const r of objects) for (const [k, v] of r.shape.keys!) keys.set(k, keys.has(k) ? OPEN_SHAPE : v);
    return { bytes, shape: { keys, any: undefined } };
  }
}

/** A JSON Schema's body shape and the most bytes a body of it can take (Infinity when the schema sets no bound). */
export function readBodySchema(schema: object): Reading {
  return new SchemaReader(schema as JsonSchema).read(schema as JsonSchema);
}
