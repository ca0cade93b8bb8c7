// @ts-check
import { readFileSync } from 'node:fs';

/**
 * Reads the generated configuration of one plugin: `<plugin dir>/docdex/<name>.json`, written by docdex next
 * to this module at every start. The plugins hold no values of their own (ports, allow-lists, limits, paths):
 * a missing or unreadable file is an error at load, never a silent default.
 * @param {string} name
 * @returns {unknown}
 */
export function readPluginConfig(name) {
  return JSON.parse(readFileSync(new URL(`./${name}.json`, import.meta.url), 'utf8'));
}
