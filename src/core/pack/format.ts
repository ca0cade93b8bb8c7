import { z } from 'zod';
import { MAX_LIBRARY_NAME_CHARS, MAX_LIBRARY_VERSION_CHARS } from '../library-ref.js';

/**
 * The index pack format (docs/pack-format.md), declared once: the manifest, each part's row schema and the
 * reader's limits. Every row read from a pack passes its schema before it reaches the database; strings are
 * bounded, and unknown fields (a later minor version's) are dropped rather than trusted.
 */

export const PACK_FORMAT = 'docdex-pack';
export const PACK_FORMAT_MAJOR = 1;
// 1.1: snippet rows may be page sections (`kind: "section"`, issue 50); a 1.0 pack has none and imports as before.
export const PACK_FORMAT_MINOR = 1;
export const PACK_FORMAT_VERSION = `${PACK_FORMAT_MAJOR}.${PACK_FORMAT_MINOR}`;

export const MAX_JSON_ENTRY_BYTES = 1024 * 1024;
export const MAX_LINE_BYTES = 32 * 1024 * 1024;
export const MAX_LIBRARIES = 1000;

export const PART_NAMES = ['source.json', 'documents.ndjson', 'snippets.ndjson'] as const;
export type PartName = (typeof PART_NAMES)[number];

const CONTROL = /[\p{Cc}\u2028\u2029]/u;
const hex64 = z.string().regex(/^[0-9a-f]{64}$/, 'a SHA-256 in lowercase hex');
const hash = z
  .string()
  .min(1)
  .max(200)
  .refine((s) => !CONTROL.test(s), 'no control characters');
const url = z
  .string()
  .min(1)
  .max(8192)
  .refine((s) => !CONTROL.test(s), 'no control characters');
// PostgreSQL text cannot hold U+0000: a row with one is refused here, before anything is written.
const noNul = (s: string) => !s.includes('\0');
const text = (max: number) => z.string().max(max).refine(noNul, 'no NUL characters');
const position = z.number().int().min(0).max(2_147_483_647);
export const libraryName = z
  .string()
  .trim()
  .min(1)
  .max(MAX_LIBRARY_NAME_CHARS)
  .refine((s) => !CONTROL.test(s), 'no control characters');
export const libraryVersion = z
  .string()
  .trim()
  .max(MAX_LIBRARY_VERSION_CHARS)
  .refine((s) => !CONTROL.test(s), 'no control characters');

const partEntry = z.object({ bytes: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER), sha256: hex64 });

export const manifestLibrarySchema = z.object({
  name: libraryName,
  version: libraryVersion,
  folder: z.string().regex(/^libraries\/(0|[1-9][0-9]{0,3})$/),
  documents: z.number().int().min(0).max(100_000_000),
  snippets: z.number().int().min(0).max(1_000_000_000),
  digest: hex64,
  parts: z.object({ 'source.json': partEntry, 'documents.ndjson': partEntry, 'snippets.ndjson': partEntry }),
});
export type ManifestLibrary = z.infer<typeof manifestLibrarySchema>;

export const manifestSchema = z.object({
  format: z.literal(PACK_FORMAT),
  formatVersion: z.string().regex(/^[0-9]{1,4}\.[0-9]{1,4}$/),
  docdexVersion: z.string().max(100),
  schemaVersion: z.number().int().min(0),
  createdAt: z.string().max(100),
  libraries: z.array(manifestLibrarySchema).min(1).max(MAX_LIBRARIES),
});
export type PackManifest = z.infer<typeof manifestSchema>;

const jsonObject = z.record(z.string(), z.unknown());

export const sourceSchema = z.object({
  name: libraryName,
  version: libraryVersion,
  description: text(10_000).default(''),
  kind: z.enum(['crawl', 'upload', 'git']),
  baseUrl: url.nullable().default(null),
  aliases: z.array(libraryName).max(20).default([]),
  origin: jsonObject.default({}),
  crawlConfig: jsonObject.default({}),
  metadata: jsonObject.default({}),
  lastCrawledAt: z.iso.datetime({ offset: true }).nullable().default(null),
});
export type PackSource = z.infer<typeof sourceSchema>;

export const documentRowSchema = z.object({
  url,
  title: text(100_000),
  markdown: text(MAX_LINE_BYTES),
  contentHash: hash,
  etag: text(1000).nullable().default(null),
  lastModified: text(1000).nullable().default(null),
  sourceType: z.enum(['crawled', 'uploaded']),
});
export type PackDocument = z.infer<typeof documentRowSchema>;

const occurrence = z.object({ url, position });
const relationship = z.object({ target: hash, type: z.string().min(1).max(100).refine(noNul, 'no NUL characters'), description: text(10_000) });

export const snippetRowSchema = z.object({
  /** A page section (its title its breadcrumb, its code its markdown); absent in 1.0 packs, whose rows are all snippets. */
  kind: z.enum(['snippet', 'section']).default('snippet'),
  codeHash: hash,
  title: text(100_000),
  description: text(1_000_000),
  language: z.string().min(1).max(100).refine(noNul, 'no NUL characters'),
  languageConfidence: z.enum(['declared', 'filename', 'detected', 'unknown', 'llm']).nullable().default(null),
  code: z.string().min(1).max(MAX_LINE_BYTES).refine(noNul, 'no NUL characters'),
  filename: text(1000).nullable().default(null),
  sourceUrl: url,
  position,
  pageCount: z.number().int().min(1).max(2_147_483_647),
  llmEnhanced: z.boolean(),
  documentUrl: url,
  occurrences: z.array(occurrence).min(1).max(100_000),
  relationships: z.array(relationship).max(1000).default([]),
});
export type PackSnippet = z.infer<typeof snippetRowSchema>;
