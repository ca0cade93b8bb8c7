import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectPlanPaths, pinWorkdir, planShell, shellEnvFor } from '../../src/core/sandbox/planner.js';
import type { RootFacts } from '../../src/core/sandbox/planner.js';
import { UNAVAILABLE_PREFIX } from '../../src/core/sandbox/unavailable.js';

const REPOS = '/workspace/repos';
const WORKTREES = '/workspace/schedule-worktrees';
const roots: RootFacts[] = [
  { path: REPOS, real: REPOS, isSymlink: false },
  { path: WORKTREES, real: WORKTREES, isSymlink: false },
];
const base = { enforced: true, callId: 'call_1', cwd: '/workspace/repos/app', realCwd: '/workspace/repos/app', roots };

describe('planShell decisions', () => {
  it('passes through to the host shell when enforcement is off', () => {
    expect(planShell({ ...base, enforced: false })).toEqual({ action: 'host', reason: 'not-enforced' });
    // even for a directory outside the roots: without enforcement nothing is refused
    expect(planShell({ ...base, enforced: false, cwd: '/etc', realCwd: '/etc' })).toEqual({ action: 'host', reason: 'not-enforced' });
  });

  it('passes through without a call id (pseudo-terminals and other surfaces)', () => {
    expect(planShell({ ...base, callId: undefined })).toEqual({ action: 'host', reason: 'no-call-id' });
    expect(planShell({ ...base, callId: '' })).toEqual({ action: 'host', reason: 'no-call-id' });
  });

  it('runs in the VM with the guest working directory for a directory inside a root', () => {
    expect(planShell(base)).toEqual({ action: 'sandbox', workdir: '/workspace/repos/app', env: {} });
    expect(planShell({ ...base, cwd: REPOS, realCwd: REPOS })).toEqual({ action: 'sandbox', workdir: REPOS, env: {} });
    expect(planShell({ ...base, cwd: `${WORKTREES}/a/b`, realCwd: `${WORKTREES}/a/b` })).toMatchObject({ action: 'sandbox', workdir: `${WORKTREES}/a/b` });
    // a name starting with two dots is still inside
    expect(planShell({ ...base, cwd: `${REPOS}/..hidden`, realCwd: `${REPOS}/..hidden` })).toMatchObject({ action: 'sandbox', workdir: `${REPOS}/..hidden` });
  });

  it('carries the resolved forwarding environment into the plan', () => {
    expect(planShell({ ...base, env: { GIT_AUTHOR_NAME: 'Ann' } })).toEqual({ action: 'sandbox', workdir: '/workspace/repos/app', env: { GIT_AUTHOR_NAME: 'Ann' } });
  });

  it('refuses a directory outside the roots with the exact message naming both roots', () => {
    expect(planShell({ ...base, cwd: '/home/me/project', realCwd: '/home/me/project' })).toEqual({
      action: 'refuse',
      message: 'Sandbox enforcement is on but the sandbox is unavailable: the working directory /home/me/project is outside the project roots /workspace/repos and /workspace/schedule-worktrees',
    });
    // siblings sharing a prefix are outside
    expect(planShell({ ...base, cwd: '/workspace/repos-old', realCwd: '/workspace/repos-old' })).toMatchObject({ action: 'refuse' });
    expect(planShell({ ...base, cwd: '/workspace', realCwd: '/workspace' })).toMatchObject({ action: 'refuse' });
  });

  it('refuses a directory that resolves outside the roots through a symlink', () => {
    const plan = planShell({ ...base, cwd: '/workspace/repos/external', realCwd: '/srv/external' });
    expect(plan).toMatchObject({ action: 'refuse' });
    // Named with where it resolves to, or the path would read as inside the roots it names (issue #51).
    expect((plan as { message: string }).message).toContain(
      'the working directory /workspace/repos/external, which resolves to /srv/external, is outside the project roots /workspace/repos and /workspace/schedule-worktrees',
    );
  });

  it('maps through roots whose parent is a symlink (the guest path is the configured one)', () => {
    const linked: RootFacts[] = [
      { path: '/ws/repos', real: '/data/ws/repos', isSymlink: false },
      { path: '/ws/schedule-worktrees', real: '/data/ws/schedule-worktrees', isSymlink: false },
    ];
    expect(planShell({ ...base, roots: linked, cwd: '/ws/repos/app', realCwd: '/data/ws/repos/app' })).toMatchObject({ action: 'sandbox', workdir: '/ws/repos/app' });
  });

  it('refuses when a root is a symlink', () => {
    const plan = planShell({ ...base, roots: [{ ...roots[0]!, isSymlink: true }, roots[1]!] });
    expect(plan).toEqual({ action: 'refuse', message: `${UNAVAILABLE_PREFIX}: the sandbox root /workspace/repos is a symlink; roots must be real directories` });
  });

  it('refuses when a root or the working directory does not exist', () => {
    expect(planShell({ ...base, roots: [roots[0]!, { ...roots[1]!, real: undefined }] })).toEqual({
      action: 'refuse',
      message: `${UNAVAILABLE_PREFIX}: the sandbox root /workspace/schedule-worktrees does not exist`,
    });
    expect(planShell({ ...base, realCwd: undefined })).toEqual({ action: 'refuse', message: `${UNAVAILABLE_PREFIX}: the working directory /workspace/repos/app does not exist` });
  });

  it('refuses every session shell once the sandbox is known to be unavailable', () => {
    expect(planShell({ ...base, unavailableReason: 'KVM and TCG both failed' })).toEqual({ action: 'refuse', message: `${UNAVAILABLE_PREFIX}: KVM and TCG both failed` });
    // but a pty (no call id) still gets the host shell
    expect(planShell({ ...base, callId: undefined, unavailableReason: 'x' })).toEqual({ action: 'host', reason: 'no-call-id' });
  });
});

describe('shellEnvFor (what the mgr-sandbox.js hook injects)', () => {
  it('sets the working directory and prefixed forwarding variables for a sandbox plan', () => {
    expect(shellEnvFor({ action: 'sandbox', workdir: '/workspace/repos/app', env: { GH_TOKEN: 't' } })).toEqual({
      MGR_SANDBOX_WORKDIR: '/workspace/repos/app',
      MGR_SANDBOX_ENV_GH_TOKEN: 't',
    });
  });
  it('sets only the refusal for a refused plan and nothing for the host', () => {
    expect(shellEnvFor({ action: 'refuse', message: 'm' })).toEqual({ MGR_SANDBOX_REFUSE: 'm' });
    expect(shellEnvFor({ action: 'host', reason: 'no-call-id' })).toEqual({});
  });
});

describe('inspectPlanPaths + pinWorkdir on a real filesystem', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'docdex-planner-'));
    await mkdir(path.join(dir, 'ws', 'repos', 'app'), { recursive: true });
    await mkdir(path.join(dir, 'ws', 'schedule-worktrees'), { recursive: true });
    await mkdir(path.join(dir, 'elsewhere'), { recursive: true });
    await symlink(path.join(dir, 'elsewhere'), path.join(dir, 'ws', 'repos', 'linked'));
    await symlink(path.join(dir, 'ws', 'repos'), path.join(dir, 'repos-link'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('pins a real directory and refuses one symlinked in from outside', async () => {
    const rootPaths = [path.join(dir, 'ws', 'repos'), path.join(dir, 'ws', 'schedule-worktrees')];
    const inside = await inspectPlanPaths(path.join(dir, 'ws', 'repos', 'app'), rootPaths);
    expect(pinWorkdir(path.join(dir, 'ws', 'repos', 'app'), inside.realCwd, inside.roots)).toEqual({ ok: true, workdir: path.join(dir, 'ws', 'repos', 'app') });
    const linked = await inspectPlanPaths(path.join(dir, 'ws', 'repos', 'linked'), rootPaths);
    expect(pinWorkdir(path.join(dir, 'ws', 'repos', 'linked'), linked.realCwd, linked.roots)).toMatchObject({ ok: false });
  });

  it('detects a root that is a symlink', async () => {
    const facts = await inspectPlanPaths(path.join(dir, 'repos-link', 'app'), [path.join(dir, 'repos-link'), path.join(dir, 'ws', 'schedule-worktrees')]);
    expect(facts.roots[0]!.isSymlink).toBe(true);
    expect(pinWorkdir(path.join(dir, 'repos-link', 'app'), facts.realCwd, facts.roots)).toMatchObject({ ok: false, message: expect.stringContaining('is a symlink') });
  });
});
