export const repoManagement = {
  name: 'repo-management',
  description: 'Look up the repositories, their git state and the agent workspaces of the manager with the mgr tool.',
  body: `# Repositories

The manager keeps every repository under the workspace's \`repos/\` folder. Look them up with the \`mgr\`
tool's \`request\` action; paths are relative to the internal API.

## List repositories

\`\`\`
mgr({ action: "request", method: "GET", path: "/repos" })
\`\`\`

The answer is \`{ repos: [...] }\` in the user's order. Each repo has \`id\`, \`localPath\` (relative to
\`repos/\`), \`fullPath\`, \`repoUrl\` (absent for local repos), \`defaultBranch\`, \`cloneStatus\` (cloning, ready
or error), \`clonedAt\`, and for worktrees \`isWorktree\`, \`sourcePath\` and \`branch\`. Local repos have
\`isLocal: true\`. Only ready repos can be worked in.

## Git state of one repository

\`\`\`
mgr({ action: "request", method: "GET", path: "/repos/3/git-info" })
\`\`\`

Returns the current branch, HEAD commit, upstream with ahead/behind counts, whether the working tree is
dirty (changed and untracked file counts), the remotes and the last commit. For a repo that failed to
clone it carries \`cloneError\`.

## Agent workspaces

\`\`\`
mgr({ action: "request", method: "GET", path: "/agent-workspaces" })
\`\`\`

Lists the folders agents work in: the assistant workspace, each ready repo and worktree, and the worktrees
of scheduled runs in progress, with the two roots that sandboxed commands can reach (\`repos/\` and
\`schedule-worktrees/\`).

## What you cannot do here

Adding, removing or cloning repositories is done by the user (\`docdex repos add|remove\`, \`docdex repos
worktree add\`); the mgr tool has no route for it. Mirror and credential routes are not reachable. To run
work on a timer in a repo, see the schedule-management skill.
`,
};
