import { listMigrations } from './migrate.js';

// Its own module, without pg: every command's base class imports it.

/** Migrations about to update a database that already had docdex's schema. */
export interface SchemaUpdate {
  from: number;
  pending: string[];
}

let schemaUpdateListener: ((update: SchemaUpdate) => void) | undefined;

/**
 * Who to tell when a command finds the schema out of date and updates it. A new release's migration may rebuild
 * an index, which takes about a minute at a million snippets; without a word, whatever command the user ran
 * first after upgrading just hung. The CLI sets this once for every command (core never prints); a fresh
 * database is not announced, because creating the schema is quick.
 */
export function onSchemaUpdate(listener: ((update: SchemaUpdate) => void) | undefined): void {
  schemaUpdateListener = listener;
}

export function announceSchemaUpdate(version: number): void {
  if (version === 0 || !schemaUpdateListener) return;
  const pending = listMigrations()
    .filter((m) => m.id > version)
    .map((m) => m.name);
  if (pending.length > 0) schemaUpdateListener({ from: version, pending });
}
