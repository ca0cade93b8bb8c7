import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { repoFlag } from '../../../cli/flags.js';
import { promptSecret, readStdinSecret } from '../../../cli/secret-prompt.js';
import { addCredential } from '../../../core/agent-server/manage.js';
import type { GitCredentialRecord } from '../../../core/agent-server/git-credentials.js';
import { UserError } from '../../../core/errors.js';

export default class GitCredentialsAdd extends BaseCommand<typeof GitCredentialsAdd> {
  static override summary = 'Store a git credential (HTTPS token) for a host in the database.';
  static override description =
    'The token is asked for without echo, or read from standard input with --token-stdin; it is never taken as a flag value (shell history, process list) and never printed back. ' +
    "A credential bound to a repo (--repo) wins for that repo; --default makes it the default among the host's other credentials.";
  static override examples = [
    '<%= config.bin %> manager git-credentials add --host github.com --username x-access-token',
    'printf %s "$TOKEN" | <%= config.bin %> manager git-credentials add --host github.com --token-stdin --default',
    '<%= config.bin %> manager git-credentials add --host git.example.com:8443 --repo api --token-stdin < token.txt',
  ];
  static override flags = {
    host: Flags.string({ description: 'Host name, optionally with a port (a URL is reduced to its host).', required: true }),
    username: Flags.string({ description: 'HTTPS user name (hosting services accept a fixed one such as x-access-token).' }),
    'token-stdin': Flags.boolean({ description: 'Read the token from standard input.', default: false }),
    repo: repoFlag,
    label: Flags.string({ description: 'A note to tell credentials apart.' }),
    default: Flags.boolean({ description: 'Make it the default credential.', default: false }),
  };

  async run(): Promise<{ credential: GitCredentialRecord }> {
    const token = (this.flags['token-stdin'] ? await readStdinSecret() : await promptSecret(`Token for ${this.flags.host}:`, '--token-stdin')).trim();
    if (token === '') {
      throw new UserError(this.flags['token-stdin'] ? 'No token on standard input: it was empty.' : 'No token given.', {
        code: 'secret_required',
        hint: `Pipe the token in, e.g. printf %s "$TOKEN" | docdex manager git-credentials add --host ${this.flags.host} --token-stdin`,
      });
    }
    const credential = await addCredential(this.settings, {
      host: this.flags.host,
      token,
      ...(this.flags.username === undefined ? {} : { username: this.flags.username }),
      ...(this.flags.repo === undefined ? {} : { repo: this.flags.repo }),
      ...(this.flags.label === undefined ? {} : { label: this.flags.label }),
      isDefault: this.flags.default,
    });
    this.log(`Stored ${credential.id} for ${credential.host}${credential.repoName ? ` (repo ${credential.repoName})` : ''}${credential.isDefault ? ', default' : ''}.`);
    return { credential };
  }
}
