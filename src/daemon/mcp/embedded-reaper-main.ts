import { stopEmbeddedIfIdle } from '../../core/db/embedded.js';

/**
 * Started detached by a stdio MCP server (`docdex serve --mcp`) that had to start the embedded PostgreSQL
 * itself: waits for that server's process to end, however it ends, then stops the database unless another
 * docdex process uses it. The server stops it on a clean exit too, but MCP clients give a server two seconds
 * after closing its stdin and two more after SIGTERM before SIGKILL (the SDK's stdio client), which a loaded
 * machine does not always leave it. Arguments: the home, the server's pid.
 */

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function main(): Promise<void> {
  const [home, pidText] = process.argv.slice(2);
  const pid = Number(pidText);
  if (!home || !Number.isInteger(pid) || pid <= 0) return;
  while (alive(pid)) await new Promise((resolve) => setTimeout(resolve, 500));
  await stopEmbeddedIfIdle(home).catch(() => undefined);
}

void main();
