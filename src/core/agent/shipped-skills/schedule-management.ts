export const scheduleManagement = {
  name: 'schedule-management',
  description: 'Create, change, run, cancel and inspect scheduled agent jobs of a repository through the mgr tool.',
  body: `# Scheduled jobs

A scheduled job sends a prompt to an agent on a timer, in a fresh worktree of one repository. Manage jobs
with the \`mgr\` tool's \`request\` action. Paths are relative to the internal API; never add a host or
\`/api/internal\` yourself. Only the calls below are allowed.

## Find the repository

\`\`\`
mgr({ action: "request", method: "GET", path: "/repos" })
\`\`\`

Use the \`id\` of the repo (an integer) in the paths below.

## List jobs

- All repos: \`mgr({ action: "request", method: "GET", path: "/schedules/all" })\`
- One repo: \`mgr({ action: "request", method: "GET", path: "/repos/3/schedules" })\`
- One job: \`mgr({ action: "request", method: "GET", path: "/repos/3/schedules/7" })\`

## Create a job

Give exactly one of \`intervalMinutes\` (1 to 43200) or \`cron\` (a cron expression, evaluated in
\`timezone\`, default UTC). \`agent\` and \`model\` (\`provider/model\`) are optional; \`enabled\` defaults to true.

\`\`\`
mgr({ action: "request", method: "POST", path: "/repos/3/schedules",
      body: { name: "Nightly dependency check", prompt: "Check for outdated dependencies and summarise them.",
              cron: "0 2 * * *", timezone: "Europe/Berlin" } })
mgr({ action: "request", method: "POST", path: "/repos/3/schedules",
      body: { name: "Hourly triage", prompt: "Triage new TODO comments.", intervalMinutes: 60 } })
\`\`\`

## Change, pause or delete a job

Send only the fields to change. Giving \`cron\` replaces an interval and the other way round; \`null\`
clears \`agent\` or \`model\`.

\`\`\`
mgr({ action: "request", method: "PATCH", path: "/repos/3/schedules/7", body: { enabled: false } })
mgr({ action: "request", method: "PATCH", path: "/repos/3/schedules/7", body: { intervalMinutes: 30, model: null } })
mgr({ action: "request", method: "DELETE", path: "/repos/3/schedules/7" })
\`\`\`

## Runs

- Run now: \`mgr({ action: "request", method: "POST", path: "/repos/3/schedules/7/run" })\` (answers 202 with the queued run)
- Runs of a job: \`mgr({ action: "request", method: "GET", path: "/repos/3/schedules/7/runs?limit=10" })\`
- Recent runs everywhere: \`mgr({ action: "request", method: "GET", path: "/schedules/all/runs?status=failed" })\`
- One run, with its full log, response and error: \`mgr({ action: "request", method: "GET", path: "/repos/3/schedules/7/runs/42" })\`
- Cancel a queued or running run: \`mgr({ action: "request", method: "POST", path: "/repos/3/schedules/7/runs/42/cancel" })\`
- Delete one finished run: \`mgr({ action: "request", method: "DELETE", path: "/repos/3/schedules/7/runs/42" })\`
- Delete all finished runs of a job: \`mgr({ action: "request", method: "DELETE", path: "/repos/3/schedules/7/runs" })\`

Run lists return 20 runs by default and at most 100 (\`limit\`, \`offset\`). A run's status is queued,
running, completed, failed or cancelled.

## Errors

400 means a field is wrong (the message names it), 404 an unknown repo, job or run, and 409 a run that
has already finished (cancel) or is still active (delete). Read the message and fix the call; do not retry
the same request unchanged.
`,
};
