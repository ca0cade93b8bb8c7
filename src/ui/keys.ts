import type { KeyHint } from './components/HelpBar.js';

/** The hints every screen ends its help bar with. */
export const GLOBAL_KEYS: KeyHint[] = [
  { key: 'tab', label: 'screen' },
  { key: 'q', label: 'quit' },
];

export const TEXT_GLOBAL_KEYS: KeyHint[] = [
  { key: 'tab', label: 'screen' },
  { key: 'ctrl-c', label: 'quit' },
];
