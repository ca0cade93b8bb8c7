export const notifications = {
  name: 'notifications',
  description: "Send a push notification to the user's devices with the mgr tool when something needs their attention.",
  body: `# Push notifications

Use the \`mgr\` tool's \`send_notification\` action. It reaches every device the user registered for push.
Do not call the notifications route through \`request\`: it is not allowed there.

\`\`\`
mgr({ action: "send_notification", title: "Nightly build failed", body: "3 tests fail in api/orders; details in the run log." })
mgr({ action: "send_notification", title: "Review ready", body: "The refactoring branch is pushed.",
      url: "https://example.com/pull/12", tag: "review-12", priority: "high" })
\`\`\`

## Fields and limits

| Field | Rule |
|---|---|
| title | required, 1-120 characters |
| body | required, 1-500 characters |
| url | optional, 1-500 characters, opened when the user taps the notification |
| tag | optional, at most 80 characters; a newer notification with the same tag replaces the older one |
| priority | optional, \`normal\` (default) or \`high\`; use \`high\` only when the user must act soon |

## Results

The answer is \`{ delivered, expired, failed, noSubscriptions }\`. \`noSubscriptions: true\` means the user has
no registered device: say so in your reply instead of retrying. \`expired\` devices were removed
automatically. Status 503 means push is not configured on this manager; 429 means more than 10
notifications in a minute: wait for the number of seconds in Retry-After and send one summary instead of
many messages.

## When to notify

Notify once per outcome the user is waiting for (a finished or failed scheduled run, a question you cannot
answer alone). Keep titles short and put the one fact that matters first.
`,
};
