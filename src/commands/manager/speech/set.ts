import { Args, Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { readStdinSecret } from '../../../cli/secret-prompt.js';
import { saveSpeechService } from '../../../core/agent/manage.js';
import { UserError } from '../../../core/errors.js';

export default class SpeechSet extends BaseCommand<typeof SpeechSet> {
  static override summary = 'Configure text-to-speech (tts) or speech-to-text (stt) for clients of the settings API.';
  static override description =
    'docdex sends no audio itself; the settings are for clients of /api/internal/settings, which may change the non-secret fields (enabled, voice, ...) once a service is configured here. ' +
    'The API key is read from standard input (--api-key-stdin), never taken as a flag value, and never printed or returned.';
  static override examples = [
    'printf %s "$OPENAI_API_KEY" | <%= config.bin %> manager speech set tts --provider openai --model tts-1 --api-key-stdin',
    '<%= config.bin %> manager speech set stt --provider whisper --endpoint http://127.0.0.1:9000/v1',
  ];
  static override args = { kind: Args.string({ description: 'tts (text-to-speech) or stt (speech-to-text).', options: ['tts', 'stt'], required: true }) };
  static override flags = {
    provider: Flags.string({ description: 'The speech provider, e.g. openai.', required: true }),
    model: Flags.string({ description: 'The model name.' }),
    endpoint: Flags.string({ description: 'The service URL (http:// or https://).' }),
    'api-key-stdin': Flags.boolean({ description: 'Read the API key from standard input.', default: false }),
  };

  async run(): Promise<{ kind: string; enabled: boolean; configured: boolean; provider: string | null; model: string | null }> {
    const apiKey = this.flags['api-key-stdin'] ? (await readStdinSecret()).trim() : undefined;
    if (apiKey === '')
      throw new UserError('No API key on standard input: it was empty.', {
        code: 'secret_required',
        hint: 'Pipe the key in, e.g. printf %s "$KEY" | docdex manager speech set tts --provider openai --api-key-stdin',
      });
    const kind = this.args.kind === 'stt' ? 'stt' : 'tts';
    const saved = await saveSpeechService(this.settings, kind, {
      provider: this.flags.provider,
      ...(this.flags.model === undefined ? {} : { model: this.flags.model }),
      ...(this.flags.endpoint === undefined ? {} : { endpoint: this.flags.endpoint }),
      ...(apiKey === undefined ? {} : { apiKey }),
    });
    this.log(`${kind} is configured (provider ${this.flags.provider}); clients may now turn it on through the settings API.`);
    return {
      kind,
      enabled: saved.enabled,
      configured: saved.configured,
      provider: typeof saved.provider === 'string' ? saved.provider : null,
      model: typeof saved.model === 'string' ? saved.model : null,
    };
  }
}
