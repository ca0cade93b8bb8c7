import { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { Banner } from '../../components/Banner.js';
import { TextField, editText } from '../../components/TextField.js';
import { useDashboard, useKeyMode } from '../../data/context.js';
import { useLatestState, useResource } from '../../data/hooks.js';
import type { AgentSettingsChanged, AgentSettingsView } from '../../data/types.js';
import { errorMessage } from '../../data/connection.js';
import { theme } from '../../theme.js';
import { POLL_MS } from './lists.js';
import type { SectionProps } from './lists.js';

/**
 * The Settings section: the sandbox switch (enabling runs the host check `docdex sandbox enable` runs),
 * credential forwarding, the git identity and the manager token, masked. The same core functions as the CLI.
 */

type Notice = { kind: 'success' | 'error' | 'info'; lines: string[] } | null;
type Identity = { name: string; email: string };

function onOff(on: boolean) {
  return <Text color={on ? theme.status.success : theme.status.muted}>{on ? 'on' : 'off'}</Text>;
}

function SettingsView({ settings }: { settings: AgentSettingsView }) {
  const { switches, credentials, maskedToken } = settings;
  const who = switches.gitIdentity.name || switches.gitIdentity.email ? `${switches.gitIdentity.name ?? '?'} <${switches.gitIdentity.email ?? '?'}>` : 'not set';
  return (
    <Box flexDirection="column" flexShrink={0}>
      <Text>Sandbox enforcement: {onOff(switches.enabled)}</Text>
      <Text>Git credential forwarding: {onOff(switches.gitCredentials)}</Text>
      <Text wrap="truncate-end">Git identity: {who}</Text>
      <Text wrap="truncate-end">
        Agent server: {switches.agentServer.status}
        {switches.agentServer.enforced === null ? '' : switches.agentServer.enforced ? ', started with enforcement' : ', started without enforcement'}
      </Text>
      <Text wrap="truncate-end">Manager token: {maskedToken ?? 'none yet (created when the daemon first starts)'}</Text>
      <Text wrap="truncate-end">
        Git credentials:{' '}
        {credentials.length === 0
          ? 'none'
          : credentials.map((c) => `${c.host}${c.username ? ` (${c.username})` : ''}${c.repoName ? ` for ${c.repoName}` : ''}${c.isDefault ? ' default' : ''}`).join(', ')}
      </Text>
      <Box marginTop={1} flexDirection="column">
        {settings.summary.map((line) => (
          <Text key={line} color={theme.text.secondary} wrap="wrap">
            {line}
          </Text>
        ))}
      </Box>
    </Box>
  );
}

function IdentityForm({ values, field, width }: { values: Identity; field: 0 | 1; width: number }) {
  return (
    <Box flexDirection="column" marginTop={1} flexShrink={0}>
      <Text bold>Git identity (both empty clears it)</Text>
      <TextField label="Name" value={values.name} focused={field === 0} width={width} />
      <TextField label="E-mail" value={values.email} focused={field === 1} width={width} />
    </Box>
  );
}

/** The keys of the identity form: tab or arrows move, enter saves, esc cancels. */
function useIdentityForm(active: boolean, save: (identity: Identity | null) => void) {
  const [editing, setEditing, editingRef] = useLatestState<{ values: Identity; field: 0 | 1 } | null>(null);
  useKeyMode(editing ? 'modal' : 'navigate', active);
  useInput(
    (input, key) => {
      const form = editingRef.current;
      if (!form) return;
      if (key.escape) setEditing(null);
      else if (key.return) {
        setEditing(null);
        const name = form.values.name.trim();
        const email = form.values.email.trim();
        save(name === '' && email === '' ? null : { name, email });
      } else if (key.tab || key.upArrow || key.downArrow) setEditing({ ...form, field: form.field === 0 ? 1 : 0 });
      else {
        const name = form.field === 0 ? 'name' : 'email';
        setEditing({ ...form, values: { ...form.values, [name]: editText(form.values[name], input, key) } });
      }
    },
    { isActive: active && editing !== null },
  );
  return { editing, start: (values: Identity) => setEditing({ values, field: 0 }) };
}

export function AgentSettings({ active, width, height, onEditing }: SectionProps & { onEditing(editing: boolean): void }) {
  const { data } = useDashboard();
  const settings = useResource(() => data.agentSettings(), { intervalMs: POLL_MS, active });
  const [notice, setNotice] = useState<Notice>(null);
  const [busy, setBusy] = useState(false);

  const apply = (change: () => Promise<AgentSettingsChanged>) => {
    setBusy(true);
    setNotice({ kind: 'info', lines: ['Saving…'] });
    change().then(
      (changed) => {
        setNotice({ kind: 'success', lines: changed.lines });
        setBusy(false);
        settings.reload();
      },
      (error: unknown) => {
        const hint = (error as { hint?: string }).hint;
        setNotice({ kind: 'error', lines: [errorMessage(error), ...(hint ? [`Hint: ${hint}`] : [])] });
        setBusy(false);
      },
    );
  };
  const form = useIdentityForm(active, (identity) => {
    onEditing(false);
    apply(() => data.setGitIdentity(identity));
  });

  useInput(
    (input) => {
      const current = settings.data?.switches;
      if (!current || busy || form.editing) return;
      if (input === 'e') apply(() => data.setSandbox({ enabled: !current.enabled }));
      else if (input === 'c') apply(() => data.setSandbox({ gitCredentials: !current.gitCredentials }));
      else if (input === 'i') {
        onEditing(true);
        form.start({ name: current.gitIdentity.name ?? '', email: current.gitIdentity.email ?? '' });
      }
    },
    { isActive: active },
  );

  return (
    <Box flexDirection="column" width={width} height={height} overflow="hidden">
      {settings.error ? <Banner kind="error" message={`Could not load settings: ${settings.error}`} width={width} /> : null}
      {settings.data ? <SettingsView settings={settings.data} /> : <Text color={theme.text.secondary}>Loading settings…</Text>}
      {form.editing ? <IdentityForm values={form.editing.values} field={form.editing.field} width={width} /> : null}
      {notice ? (
        <Box flexDirection="column" marginTop={1}>
          <Banner kind={notice.kind} message={notice.lines[0] ?? ''} width={width} />
          {notice.lines.slice(1).map((line) => (
            <Text key={line} wrap="wrap">
              {line}
            </Text>
          ))}
        </Box>
      ) : null}
    </Box>
  );
}
