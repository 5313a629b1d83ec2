import t from 'tap';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_SKILLS, TestDaemon, waitForStatus, type JobView } from '../helpers/daemon.js';
import type { RpcClient } from '../../rpc/client.js';

interface SkillView {
  id: string;
  version: string | null;
  status: string;
  error?: { code: string; message: string; path: string };
}

const skillsDir = await mkdtemp(join(tmpdir(), 'skilld-skills-'));
await cp(join(TEST_SKILLS, 'echo-auto'), join(skillsDir, 'echo-auto'), { recursive: true });
const daemon = await TestDaemon.start({ skillsDirs: [skillsDir] });
t.teardown(async () => {
  await daemon.cleanup();
  await rm(skillsDir, { recursive: true, force: true });
});
const client = await daemon.client();
// A subscribed connection also receives skills/changed.
await client.request('jobs/subscribe', {});

function changed(c: RpcClient, id: string): Promise<void> {
  return new Promise((resolve) => {
    const off = c.on('skills/changed', (params) => {
      if ((params as { ids: string[] }).ids.includes(id)) {
        off();
        resolve();
      }
    });
  });
}

async function skill(id: string): Promise<SkillView | undefined> {
  const { skills } = await client.request<{ skills: SkillView[] }>('skills/list');
  return skills.find((s) => s.id === id);
}

/**
 * The skill's view after the first skills/changed for it that leaves it as `expected` says. A
 * save is not atomic: on a busy machine the daemon may read it half-written first (and report
 * that), then reload it whole.
 */
function changedTo(id: string, expected: (view: SkillView | undefined) => boolean): Promise<SkillView | undefined> {
  return new Promise((resolve) => {
    const off = client.on('skills/changed', (params) => {
      if (!(params as { ids: string[] }).ids.includes(id)) return;
      void skill(id).then((view) => {
        if (!expected(view)) return;
        off();
        resolve(view);
      });
    });
  });
}

function manifest(version: string, extra = ''): string {
  return `{ "id": "greeter", "version": "${version}", "name": "Greeter", "execution_modes": ["auto"]${extra} }\n`;
}

// How fast a change is picked up is measured by the P6 benchmark, not asserted here.
t.test('a new skill folder is listed, with a skills/changed notification', async (t) => {
  const notified = changedTo('greeter', (view) => view?.version === '1.0.0');
  const dir = join(skillsDir, 'greeter');
  await cp(join(TEST_SKILLS, 'echo-auto'), dir, { recursive: true });
  await writeFile(join(dir, 'assets', 'runner.json'), manifest('1.0.0'));
  t.match(await notified, { id: 'greeter', version: '1.0.0', status: 'ok' });
});

t.test('a broken edit keeps the last valid version and reports the error', async (t) => {
  const notified = changedTo('greeter', (view) => view?.status === 'invalid');
  await writeFile(join(skillsDir, 'greeter', 'assets', 'runner.json'), '{ "id": "greeter", "version": ');
  const view = await notified;
  t.match(view, { status: 'invalid', version: '1.0.0', error: { code: 'SKILL_MANIFEST_INVALID', path: /runner\.json$/ } });
  const job = await client.request<JobView>('jobs/create', { skill_id: 'greeter', engine: 'codex', input: { emit: { greeting: 'still here' } } });
  t.equal(job.skill_version, '1.0.0', 'jobs still run on the last valid version');
  t.equal((await waitForStatus(client, job.job_id)).status, 'succeeded');
  const status = await client.request<{ skills: { ok: number; invalid: number } }>('daemon/status');
  t.same(status.skills, { ok: 1, invalid: 1 });
});

t.test('fixing the file brings the new version back', async (t) => {
  const notified = changedTo('greeter', (view) => view?.version === '1.1.0');
  await writeFile(join(skillsDir, 'greeter', 'assets', 'runner.json'), manifest('1.1.0'));
  t.match(await notified, { version: '1.1.0', status: 'ok' });
  t.notOk((await skill('greeter'))?.error);
});

t.test('a job keeps the snapshot of its skill even when the skill changes later; its test cases are not in it', async (t) => {
  await mkdir(join(skillsDir, 'greeter', 'tests'), { recursive: true });
  await writeFile(join(skillsDir, 'greeter', 'tests', 'greets.json'), '{"name": "greets", "input": {}, "model": [{"final": {"greeting": "hi"}}], "expect": {"status": "succeeded"}}\n');
  const job = await client.request<JobView>('jobs/create', { skill_id: 'greeter', engine: 'codex', input: { emit: { nope: 1 } } });
  await waitForStatus(client, job.job_id);
  t.ok(existsSync(join(daemon.runDir(job.job_id), 'skill', 'SKILL.md')), 'the snapshot is where the job reads it');
  t.notOk(existsSync(join(daemon.runDir(job.job_id), 'skill', 'tests')), "the skill's test cases are not given to the engine");
  const notified = changed(client, 'greeter');
  await writeFile(join(skillsDir, 'greeter', 'assets', 'output.schema.json'), '{ "type": "object" }\n');
  await notified;
  t.equal((await client.request<JobView>('jobs/get', { job_id: job.job_id })).error?.code, 'OUTPUT_INVALID', 'validated against its own snapshot');
});

t.test('a skill that never loaded is invalid and cannot be run; removing a folder removes the skill', async (t) => {
  // A slow copy or removal may be seen half done first: each waits for the view it ends in.
  const notified = changedTo('broken', (view) => /folder name/.test(view?.error?.message ?? ''));
  await cp(join(TEST_SKILLS, 'echo-auto'), join(skillsDir, 'broken'), { recursive: true });
  await notified;
  t.match(await skill('broken'), { status: 'invalid', version: null, error: { code: 'SKILL_MANIFEST_INVALID', message: /folder name/ } });
  const error = await client.request('jobs/create', { skill_id: 'broken', engine: 'codex' }).catch((e: { dataCode: string }) => e.dataCode);
  t.equal(error, 'SKILL_INVALID');
  const removed = changedTo('broken', (view) => view === undefined);
  await rm(join(skillsDir, 'broken'), { recursive: true });
  await removed;
  t.equal(await skill('broken'), undefined);
});

t.test('skills/subscribe: skills/changed alone, without job events; skills/get carries SKILL.md as instructions', async (t) => {
  const watcher = await daemon.client();
  const events: unknown[] = [];
  watcher.on('job/event', (event) => void events.push(event));
  t.same(await watcher.request('skills/subscribe'), { ok: true });
  const job = await client.request<JobView>('jobs/create', { skill_id: 'echo-auto', engine: 'codex' });
  await waitForStatus(client, job.job_id);
  const text = '# echo-auto\n\nSaid differently.\n';
  // A save is not atomic: the daemon may read the file half-written first, then whole.
  const reloaded = new Promise<void>((resolve) => {
    const off = watcher.on('skills/changed', () => {
      void watcher.request<{ instructions: string | null }>('skills/get', { skill_id: 'echo-auto' }).then((view) => {
        if (view.instructions !== text) return;
        off();
        resolve();
      });
    });
  });
  await writeFile(join(skillsDir, 'echo-auto', 'SKILL.md'), text);
  await reloaded;
  t.same(events, [], 'what came before skills/changed on the same connection had no job event in it');
});
