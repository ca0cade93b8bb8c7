import { Flags } from '@oclif/core';
import { BaseCommand } from '../../../cli/base-command.js';
import { buildImage } from '../../../core/sandbox/build.js';
import type { BuiltImage } from '../../../core/sandbox/build.js';
import { DEFAULT_IMAGE_NAME } from '../../../core/sandbox/images.js';
import { sandboxSettings } from '../../../core/sandbox/settings.js';

export default class SandboxImageBuild extends BaseCommand<typeof SandboxImageBuild> {
  static override summary = 'Build a sandbox guest image from Debian packages.';
  static override description =
    "The debian flavor (default) holds sh, git, ssh, python3, curl, unzip, a gcc toolchain, gh and Debian's chromium as the headless browser (its version set by --chromium-version; a project that drives a browser itself must match it); busybox is a few MB for tests. The image is stored content-addressed as name@sha256:<digest>; pin SANDBOX_IMAGE to that reference, since attestation compares the reference string only.";
  static override examples = [
    '<%= config.bin %> sandbox image build',
    '<%= config.bin %> sandbox image build --chromium-version 120.0.6099.224-1~deb12u1',
    '<%= config.bin %> sandbox image build --flavor busybox --name docdex-test',
  ];
  static override flags = {
    flavor: Flags.string({ description: 'What goes into the image.', options: ['debian', 'busybox'], default: 'debian' }),
    name: Flags.string({ description: `Image name (default ${DEFAULT_IMAGE_NAME} or docdex-busybox).` }),
    suite: Flags.string({ description: 'Debian suite for the debian flavor.', default: 'bookworm' }),
    mirror: Flags.string({ description: 'Debian mirror URL.' }),
    'chromium-version': Flags.string({ description: "Debian version of chromium for the debian flavor (default: the suite's current one). The build prints the version it installed." }),
  };

  async run(): Promise<BuiltImage> {
    const flavor = this.flags.flavor === 'busybox' ? 'busybox' : 'debian';
    const image = await buildImage(
      sandboxSettings(this.settings).cacheDir,
      {
        flavor,
        name: this.flags.name ?? `docdex-${flavor}`,
        suite: this.flags.suite,
        ...(this.flags.mirror ? { mirror: this.flags.mirror } : {}),
        ...(this.flags['chromium-version'] ? { chromiumVersion: this.flags['chromium-version'] } : {}),
      },
      { onLog: (line) => process.stderr.write(`${line}\n`) },
    );
    this.log(image.ref);
    if (image.browser) process.stderr.write(`browser: ${image.browser}\n`);
    return image;
  }
}
