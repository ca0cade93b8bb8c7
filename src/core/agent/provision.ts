import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type pg from 'pg';
import { SHIPPED_SKILLS } from './shipped-skills/index.js';
import { renderSkillFile, writeSkillFile } from './skills.js';
import type { Workspace } from './workspace.js';

export type ShippedSkillOutcome = 'written' | 'updated' | 'unchanged' | 'kept-user-edit';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/**
 * Writes the shipped skills into the assistant workspace at start-up. The hash of what docdex last wrote
 * is recorded; a file whose content no longer has that hash was edited by the user and is left alone for
 * good, while an unedited one follows new releases of the skill.
 */
export async function provisionShippedSkills(pool: pg.Pool, ws: Workspace): Promise<Record<string, ShippedSkillOutcome>> {
  const outcomes: Record<string, ShippedSkillOutcome> = {};
  const { rows } = await pool.query<{ name: string; content_hash: string }>('SELECT name, content_hash FROM agent_shipped_skills');
  const recorded = new Map(rows.map((r) => [r.name, r.content_hash]));
  for (const skill of SHIPPED_SKILLS) {
    const file = path.join(ws.assistantSkillsDir, skill.name, 'SKILL.md');
    const shipped = renderSkillFile(skill);
    const onDisk = await readFile(file, 'utf8').catch(() => undefined);
    const last = recorded.get(skill.name);
    let outcome: ShippedSkillOutcome;
    if (onDisk === undefined) outcome = 'written';
    else if (onDisk === shipped) outcome = 'unchanged';
    else if (last !== undefined && sha256(onDisk) === last) outcome = 'updated';
    else outcome = 'kept-user-edit';
    if (outcome === 'written' || outcome === 'updated') await writeSkillFile(ws.assistantSkillsDir, skill);
    if (outcome !== 'kept-user-edit') {
      await pool.query(
        `INSERT INTO agent_shipped_skills (name, path, content_hash) VALUES ($1, $2, $3)
         ON CONFLICT (name) DO UPDATE SET path = excluded.path, content_hash = excluded.content_hash, written_at = now()`,
        [skill.name, file, sha256(shipped)],
      );
    }
    outcomes[skill.name] = outcome;
  }
  return outcomes;
}
