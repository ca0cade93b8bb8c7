import { describe, expect, it } from 'vitest';
import { imageRecipe } from '../../src/core/sandbox/build.js';

/**
 * The default (debian) image's recipe, read from the real build script without building: a full debootstrap
 * plus chromium takes many minutes and needs a Debian mirror, which this suite cannot rely on. What it proves is
 * that the recipe carries the browser the spec lists, and that its version is the build argument (spec:
 * Versioning), refused when it could be read as an apt option.
 */
describe('the default sandbox image recipe', () => {
  it("installs Debian's chromium as the headless browser, at the suite's version by default", async () => {
    const recipe = await imageRecipe({ flavor: 'debian' });
    expect(recipe.browser).toBe('chromium');
    expect(recipe.packages).toEqual(expect.arrayContaining(['git', 'openssh-client', 'python3', 'curl', 'unzip', 'build-essential', 'ca-certificates']));
  });

  it('pins chromium to the version given as the build argument', async () => {
    expect((await imageRecipe({ flavor: 'debian', chromiumVersion: '120.0.6099.224-1~deb12u1' })).browser).toBe('chromium=120.0.6099.224-1~deb12u1');
    expect((await imageRecipe({ flavor: 'debian', chromiumVersion: '1:2.3+b1' })).browser).toBe('chromium=1:2.3+b1');
  });

  it('refuses a version that is not a Debian version, before anything is installed', async () => {
    for (const bad of ['-o', '--allow-unauthenticated', 'latest', '1.0 bash', '1.0;id']) {
      await expect(imageRecipe({ flavor: 'debian', chromiumVersion: bad })).rejects.toThrow(/Debian version/);
    }
  });

  it('leaves the busybox test image without a browser', async () => {
    expect((await imageRecipe({ flavor: 'busybox' })).browser).toBeUndefined();
  });
});
