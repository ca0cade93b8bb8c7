import { z } from 'zod';

/** The MCP page-size rules of the spec: `limit` default 20, at most 100; `page` starts at 1. */
export const limitArg = z.number().int().min(1).max(100).default(20).describe('Results per page, 1 to 100 (default 20).');
export const pageArg = z.number().int().min(1).max(100_000).default(1).describe('Page number, starting at 1 (default 1).');

export function pagination(page: number, limit: number, total: number): { page: number; limit: number; total: number; total_pages: number; has_more: boolean } {
  const totalPages = Math.max(1, Math.ceil(total / limit));
  return { page, limit, total, total_pages: totalPages, has_more: page * limit < total };
}

export const paginationOutput = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  total_pages: z.number().int(),
  has_more: z.boolean(),
});

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
