/**
 * The one place that knows colours. Components ask for a meaning (`theme.status.error`), never for a colour,
 * so a palette change or NO_COLOR is one edit here. Tokens are getters: `--no-color` sets NO_COLOR after this
 * module is imported, and every read must see it.
 */

/** https://no-color.org: any non-empty NO_COLOR disables colour. */
export function colorEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return !env.NO_COLOR;
}

type Token = string | undefined;

function token(colour: string): Token {
  return colorEnabled() ? colour : undefined;
}

export const theme = {
  text: {
    get primary(): Token {
      return undefined;
    },
    get secondary(): Token {
      return token('gray');
    },
    get accent(): Token {
      return token('cyan');
    },
    get link(): Token {
      return token('blue');
    },
  },
  status: {
    get success(): Token {
      return token('green');
    },
    get warning(): Token {
      return token('yellow');
    },
    get error(): Token {
      return token('red');
    },
    get info(): Token {
      return token('cyan');
    },
    get muted(): Token {
      return token('gray');
    },
  },
  border: {
    get default(): Token {
      return token('gray');
    },
    get focused(): Token {
      return token('cyan');
    },
  },
  chart: {
    get bar(): Token {
      return token('magenta');
    },
    get progress(): Token {
      return token('green');
    },
    get track(): Token {
      return token('gray');
    },
  },
  syntax: {
    get keyword(): Token {
      return token('magenta');
    },
    get string(): Token {
      return token('green');
    },
    get number(): Token {
      return token('yellow');
    },
    get comment(): Token {
      return token('gray');
    },
    get punctuation(): Token {
      return undefined;
    },
    get plain(): Token {
      return undefined;
    },
  },
};

/** The colour for a job or source state, by meaning. */
export function stateColor(state: string): Token {
  switch (state) {
    case 'completed':
    case 'indexed':
      return theme.status.success;
    case 'running':
    case 'processing':
    case 'enhancing':
      return theme.status.info;
    case 'queued':
    case 'partial':
      return theme.status.warning;
    case 'failed':
      return theme.status.error;
    default:
      return theme.status.muted;
  }
}
