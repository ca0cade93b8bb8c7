import { Flags } from '@oclif/core';
import { BaseCommand } from '../cli/base-command.js';
import { openDatabase } from '../core/db/connect.js';
import { UserError } from '../core/errors.js';
import type { ScreenName } from '../ui/App.js';

export default class Dashboard extends BaseCommand<typeof Dashboard> {
  static override summary = 'Full-screen terminal dashboard: statistics, sources, live crawl and upload jobs, search, and the agent manager.';
  static override description =
    'Reads PostgreSQL directly and follows crawls and uploads live through LISTEN/NOTIFY, whether or not a daemon is running and whoever runs the job. The agent screen shows repositories, sessions (from the running agent server) with their tool calls, schedules, skills and the sandbox settings. Keys are shown at the bottom of each screen; q or Ctrl-C quits.';
  static override examples = ['<%= config.bin %> dashboard', '<%= config.bin %> dashboard --screen jobs', '<%= config.bin %> dashboard --screen agent'];
  static override enableJsonFlag = false;
  static override flags = {
    screen: Flags.option({ description: 'Screen to open first.', options: ['overview', 'sources', 'jobs', 'search', 'agent'] as const, default: 'overview' })(),
  };

  async run(): Promise<void> {
    if (!process.stdin.isTTY || !process.stdout.isTTY) {
      throw new UserError('docdex dashboard needs an interactive terminal (stdin and stdout must be a TTY).', {
        hint: 'For scripts, use `docdex crawl list --json` and `docdex sources list --json`.',
        code: 'tty_required',
      });
    }
    // Ink and React load only once there is a terminal to draw on: refusing, or --help, stays light.
    const [{ SCREENS }, { createDashboardData }, { renderDashboard }] = await Promise.all([import('../ui/App.js'), import('../ui/data/postgres.js'), import('../ui/render.js')]);
    const db = await openDatabase(this.settings, { max: 4, applicationName: 'docdex-dashboard' });
    try {
      const initialScreen = SCREENS.find((s) => s.toLowerCase() === this.flags.screen) as ScreenName;
      await renderDashboard({ data: createDashboardData(db, this.settings), initialScreen });
    } finally {
      await db.close();
    }
  }
}
