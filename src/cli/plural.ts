/** "1 snippet", "2 snippets", "1,024 pages": a count with its noun, for CLI output. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}
