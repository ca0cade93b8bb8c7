import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ClientMessage, PROTOCOL, ServerMessage } from '../../src/daemon/ws-protocol.js';
import { ROOT } from '../helpers/cli.js';

/**
 * docs/websocket.md against the protocol's one definition (src/daemon/ws-protocol.ts): a section per
 * message, each field of its schema in the table with the schema's own description, and every example a
 * message the schemas accept. A field or message added to the schemas, or one the page names that they do not
 * have, fails here.
 */

interface DocMessage {
  types: string[];
  fields: Array<{ name: string; meaning: string }>;
  examples: unknown[];
}

const DOC = readFileSync(path.join(ROOT, 'docs', 'websocket.md'), 'utf8');

function directionSection(title: string): string {
  const start = DOC.indexOf(`\n## ${title}\n`);
  expect(start, title).toBeGreaterThan(-1);
  const end = DOC.indexOf('\n## ', start + 4);
  return DOC.slice(start, end === -1 ? undefined : end);
}

function docMessages(section: string): DocMessage[] {
  return section
    .split('\n### ')
    .slice(1)
    .map((part) => {
      const [heading, ...rest] = part.split('\n');
      const body = rest.join('\n');
      const rows = body.split('\n').filter((line) => /^\| `/.test(line));
      return {
        types: [...heading!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!),
        fields: rows.map((row) => {
          const cells = row.split(' | ');
          return { name: cells[0]!.replace(/^\| `|`$/g, ''), meaning: cells.at(-1)!.replace(/ \|$/, '') };
        }),
        examples: [...body.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as unknown),
      };
    });
}

function typesOf(schema: z.ZodObject): string[] {
  const type = schema.shape.type as z.ZodType & { options?: string[]; value?: string };
  return type.options ?? [type.value!];
}

function check(direction: 'client' | 'server', title: string, union: z.ZodType): void {
  const documented = docMessages(directionSection(title));
  const schemas = PROTOCOL[direction] as readonly z.ZodObject[];
  expect(documented.map((d) => [...d.types].sort()).sort(), 'one section per message').toEqual(schemas.map((s) => typesOf(s).sort()).sort());
  for (const schema of schemas) {
    const types = typesOf(schema);
    const doc = documented.find((d) => d.types.includes(types[0]!))!;
    const described = Object.entries(schema.shape).map(([name, field]) => ({ name, meaning: (field as z.ZodType).description ?? '' }));
    expect(doc.fields, types.join()).toEqual(described);
    expect(doc.examples.length, `${types.join()} has an example`).toBeGreaterThan(0);
    for (const example of doc.examples) {
      expect(union.safeParse(example).error, JSON.stringify(example)).toBeUndefined();
      expect(types).toContain((example as { type: string }).type);
    }
  }
}

describe('docs/websocket.md', () => {
  it('documents every client message, field by field, as the schema defines it', () => {
    check('client', 'Client → server', ClientMessage);
  });

  it('documents every server message, field by field, as the schema defines it', () => {
    check('server', 'Server → client', ServerMessage);
  });

  it('every schema field has a description to document', () => {
    for (const schema of [...PROTOCOL.client, ...PROTOCOL.server] as z.ZodObject[]) {
      for (const [name, field] of Object.entries(schema.shape)) expect((field as z.ZodType).description, name).toBeTruthy();
    }
  });
});
