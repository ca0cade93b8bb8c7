import { useState } from 'react';
import { Box, Text, useInput } from 'ink';
import { HelpBar } from '../components/HelpBar.js';
import type { KeyHint } from '../components/HelpBar.js';
import { useDashboard } from '../data/context.js';
import { useLatestState } from '../data/hooks.js';
import { GLOBAL_KEYS } from '../keys.js';
import { theme } from '../theme.js';
import { AgentRepos, AgentSchedules, AgentSkills } from './agent/lists.js';
import { AgentSessions } from './agent/sessions.js';
import { AgentSettings } from './agent/settings.js';
import type { ScreenProps } from './types.js';

/**
 * The agent half of docdex (spec: agent manager, web interface; docdex draws it in the terminal): one screen
 * with five sections, ← and → between them. Only the section shown is mounted, so only it loads and polls.
 */

export const AGENT_SECTIONS = ['Repositories', 'Sessions', 'Schedules', 'Skills', 'Settings'] as const;
export type AgentSection = (typeof AGENT_SECTIONS)[number];

const MOVE: KeyHint = { key: '←→', label: 'section' };
const SELECT: KeyHint = { key: '↑↓', label: 'select' };

function help(section: AgentSection, sessionOpen: boolean, editing: boolean): KeyHint[] {
  if (editing)
    return [
      { key: 'tab', label: 'field' },
      { key: 'enter', label: 'save' },
      { key: 'esc', label: 'cancel' },
    ];
  switch (section) {
    case 'Sessions':
      return sessionOpen ? [SELECT, { key: 'esc', label: 'sessions' }, MOVE, ...GLOBAL_KEYS] : [SELECT, { key: 'enter', label: 'tool calls' }, MOVE, ...GLOBAL_KEYS];
    case 'Settings':
      return [{ key: 'e', label: 'sandbox on/off' }, { key: 'c', label: 'credential forwarding' }, { key: 'i', label: 'git identity' }, MOVE, ...GLOBAL_KEYS];
    case 'Schedules':
      return [MOVE, ...GLOBAL_KEYS];
    default:
      return [SELECT, MOVE, ...GLOBAL_KEYS];
  }
}

function SectionBar({ active }: { active: number }) {
  return (
    <Text wrap="truncate-end">
      {AGENT_SECTIONS.map((name, i) => (
        <Text key={name}>
          {i > 0 ? '  ' : ''}
          <Text color={i === active ? theme.text.accent : theme.text.secondary} bold={i === active} inverse={i === active}>
            {` ${name} `}
          </Text>
        </Text>
      ))}
    </Text>
  );
}

export function Agent({ active, width, height, initialSection = 'Repositories' }: ScreenProps & { initialSection?: AgentSection }) {
  const { keyMode } = useDashboard();
  const [section, setSection, sectionRef] = useLatestState(AGENT_SECTIONS.indexOf(initialSection));
  const [sessionOpen, setSessionOpen] = useState(false);
  const [editing, setEditing] = useState(false);
  useInput(
    (_input, key) => {
      if (keyMode.current !== 'navigate') return;
      const n = AGENT_SECTIONS.length;
      if (key.leftArrow) setSection((sectionRef.current + n - 1) % n);
      else if (key.rightArrow) setSection((sectionRef.current + 1) % n);
      else return;
      setSessionOpen(false);
    },
    { isActive: active },
  );

  const name = AGENT_SECTIONS[section]!;
  const props = { active, width, height: height - 3 };
  return (
    <Box flexDirection="column" width={width} height={height}>
      <SectionBar active={section} />
      <Box height={1} />
      <Box flexDirection="column" flexGrow={1} overflow="hidden">
        {name === 'Repositories' ? <AgentRepos {...props} /> : null}
        {name === 'Sessions' ? <AgentSessions {...props} onOpen={setSessionOpen} /> : null}
        {name === 'Schedules' ? <AgentSchedules {...props} /> : null}
        {name === 'Skills' ? <AgentSkills {...props} /> : null}
        {name === 'Settings' ? <AgentSettings {...props} onEditing={setEditing} /> : null}
      </Box>
      <HelpBar keys={help(name, sessionOpen, editing)} width={width} />
    </Box>
  );
}
