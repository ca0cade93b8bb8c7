import { managerSettings } from './manager-settings.js';
import { notifications } from './notifications.js';
import { repoManagement } from './repo-management.js';
import { scheduleManagement } from './schedule-management.js';

/** The four skills of the assistant workspace, as code so they ship inside dist/ with no asset copying. */
export const SHIPPED_SKILLS: ReadonlyArray<{ name: string; description: string; body: string }> = [scheduleManagement, notifications, managerSettings, repoManagement];
