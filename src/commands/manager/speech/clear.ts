import { Args } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { saveSpeechService } from '../../../core/agent/manage.js';

export default class SpeechClear extends BaseCommand<typeof SpeechClear> {
  static override summary = 'Remove the text-to-speech (tts) or speech-to-text (stt) service and its secrets.';
  static override examples = ['<%= config.bin %> manager speech clear tts'];
  static override args = { kind: Args.string({ description: 'tts or stt.', options: ['tts', 'stt'], required: true }) };

  async run(): Promise<{ kind: string; configured: boolean }> {
    const kind = this.args.kind === 'stt' ? 'stt' : 'tts';
    const saved = await saveSpeechService(this.settings, kind, null);
    this.log(`${kind} is not configured any more.`);
    return { kind, configured: saved.configured };
  }
}
