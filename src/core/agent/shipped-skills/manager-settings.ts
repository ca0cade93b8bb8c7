export const managerSettings = {
  name: 'manager-settings',
  description: "Read and change the user's manager preferences and the agent configuration file, and reload the assistant, with the mgr tool.",
  body: `# Manager settings and agent configuration

All calls use the \`mgr\` tool's \`request\` action with a path relative to the internal API.

## Preferences

\`\`\`
mgr({ action: "request", method: "GET", path: "/settings" })
mgr({ action: "request", method: "PATCH", path: "/settings", body: { theme: "dark", autoScroll: false } })
\`\`\`

PATCH changes only the keys you send. Allowed keys: theme (dark, light, system), mode (plan, build),
defaultModel, defaultAgent, autoScroll, expandDiffs, expandToolCalls, showReasoning, simpleChatMode,
leaderKey, directShortcuts, keyboardShortcuts, customCommands, notifications, repoOrder, repoSortMode
(recent, manual, name), tts and stt. \`null\` clears defaultModel, defaultAgent, leaderKey,
directShortcuts or repoOrder.

tts takes enabled, provider, autoPlay, voice, model and speed; stt takes enabled, provider, model and
language, and both only once the user has configured the feature. gitCredentials, gitIdentity,
tts.apiKey, tts.endpoint, stt.apiKey, stt.endpoint and lastKnownGoodConfig can never be written here: a
400 names the key. Never ask for or repeat secrets.

Examples:

\`\`\`
mgr({ action: "request", method: "PATCH", path: "/settings",
      body: { customCommands: [{ name: "review", description: "Review the diff", promptTemplate: "Review $ARGUMENTS" }] } })
mgr({ action: "request", method: "PATCH", path: "/settings", body: { repoOrder: [4, 1, 2], repoSortMode: "manual" } })
\`\`\`

## Agent configuration file

Read it first, change only what you were asked to change, and send the complete object back:

\`\`\`
mgr({ action: "request", method: "GET", path: "/agent-config" })
mgr({ action: "request", method: "PUT", path: "/agent-config", body: { content: { ...the whole content, model: "anthropic/claude-sonnet-4-5" } } })
\`\`\`

The answer is the written file. \`restartRequired: true\` means agent, plugin, skills or provider changed and
the agent server must be restarted by the user; otherwise the change was applied to the running server,
and \`removedFields\` lists fields it dropped. A 400 carries \`validationIssues\` with the path and message
of each problem; fix them and try again. The previous valid file is kept as a last-known-good copy.

While the sandbox is on, you may change only $schema, theme, model, small_model, default_agent, username,
logLevel, snapshot, keybinds, layout, tool_output, compaction, disabled_providers, enabled_providers, and
the model, variant, temperature, top_p, description, color and prompt of an agent (no {env:} or {file:} in
any value). Everything else (mcp, plugin, formatter, lsp, provider, permission, tools, command, shell,
instructions, agent permissions, ...) can start programs on the host, read host files or loosen
permissions: a 403 names the key. Do not try another way; tell the user which change they need to make.

## Reload the assistant

After editing skills or instructions, dispose the current instance so the next message starts fresh:

\`\`\`
mgr({ action: "request", method: "POST", path: "/assistant/reload" })
\`\`\`

At most 5 reloads per minute (429 with Retry-After beyond). 502 means the agent server failed. While the
sandbox is on, a 403 means configuration, plugin or command files changed since the user approved them:
ask the user to run \`docdex agent restart\`.
`,
};
