import { describeNotIndexed } from '../core/project/search.js';
import type { ProjectSearchResponse } from '../core/project/search.js';
import { ansi } from './highlight.js';
import { renderSearch } from './render-search.js';

/** `docdex search --project`: which project and libraries were searched, what was not, then the results with library@version. */
export function renderProjectSearch(result: ProjectSearchResponse, options: { colour: boolean }): string {
  const dim = options.colour ? ansi.dim : String;
  const project = result.project.root === null ? result.project.name : `${result.project.name} (${result.project.root})`;
  const out = [dim(`Project ${project}: ${result.searched} ${result.searched === 1 ? 'library' : 'libraries'} searched at the versions it uses.`)];
  if (result.not_indexed.length > 0) {
    const list = result.not_indexed.map(describeNotIndexed);
    out.push(`Not indexed at the version the project uses, so not searched: ${list.join(', ')}. Run \`docdex sync\` in the project to index them.`);
  }
  out.push(renderSearch(result, { ...options, atVersion: true }));
  return out.join('\n');
}
