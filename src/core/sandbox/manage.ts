import type { Config } from '../config.js';
import { openDatabase } from '../db/connect.js';
import type { Database } from '../db/connect.js';
import type { VmStatus } from './runner-daemon.js';
import { sandboxStatus } from './service.js';
import { sandboxSettings } from './settings.js';
import { changeSandboxSwitches, readSandboxSwitches } from './switch.js';
import type { SandboxHostCheck, SandboxSwitchChange, SandboxSwitchState } from './switch.js';

/** One function per `docdex sandbox` command that reads or writes the settings: open the database, do the job, close it. */

async function withDatabase<T>(config: Config, fn: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config, { max: 2, applicationName: 'docdex-sandbox' });
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

/** `docdex sandbox enable|disable`. */
export async function switchSandbox(config: Config, change: SandboxSwitchChange): Promise<{ state: SandboxSwitchState; host?: SandboxHostCheck }> {
  return withDatabase(config, (db) => changeSandboxSwitches(db.pool, sandboxSettings(config), change));
}

export interface SandboxOverview {
  switches: SandboxSwitchState;
  vm: VmStatus & { configError?: string };
}

/** `docdex sandbox status`: the switches and what the running agent server enforces, then the VM. */
export async function sandboxOverview(config: Config): Promise<SandboxOverview> {
  const switches = await withDatabase(config, (db) => readSandboxSwitches(db.pool));
  return { switches, vm: await sandboxStatus(sandboxSettings(config)) };
}
