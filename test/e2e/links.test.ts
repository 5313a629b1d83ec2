// Symbolic links that lead out of a job's artifacts folder or out of a skill's folder, through the
// real daemon: nothing they lead to is listed, served or copied into a job's snapshot.
import t from 'tap';
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reportResult } from '../../clients/report-result.js';
import type { ResultView } from '../../clients/wire.js';
import { capture, runSkillctl } from '../helpers/skillctl.js';
import { TEST_SKILLS, TestDaemon, rpcError, waitForStatus, type JobView } from '../helpers/daemon.js';

interface SkillAnswer {
  id: string;
  status: string;
  version: string | null;
  instructions: string | null;
  error?: { code: string; message: string; path: string };
}

const temp = await mkdtemp(join(tmpdir(), 'skilld-links-'));
const secret = join(temp, 'secret.txt');
await writeFile(secret, 'SECRET outside every skill\n');
const skillsDir = join(temp, 'skills');

/** A copy of the echo-auto test skill under another id. */
async function skillFolder(id: string): Promise<string> {
  const dir = join(skillsDir, id);
  await cp(join(TEST_SKILLS, 'echo-auto'), dir, { recursive: true });
  const runner = JSON.parse(await readFile(join(dir, 'assets', 'runner.json'), 'utf8')) as Record<string, unknown>;
  await writeFile(join(dir, 'assets', 'runner.json'), JSON.stringify({ ...runner, id, name: id }));
  return dir;
}

const mdOutside = await skillFolder('md-outside');
await rm(join(mdOutside, 'SKILL.md'));
await symlink(secret, join(mdOutside, 'SKILL.md'));
const schemaInside = await skillFolder('schema-inside');
await mkdir(join(schemaInside, 'shared'));
await cp(join(schemaInside, 'assets', 'output.schema.json'), join(schemaInside, 'shared', 'output.json'));
await rm(join(schemaInside, 'assets', 'output.schema.json'));
await symlink(join('..', 'shared', 'output.json'), join(schemaInside, 'assets', 'output.schema.json'));
const notes = await skillFolder('notes');
await mkdir(join(notes, 'references'));
await writeFile(join(notes, 'references', 'notes.md'), 'the notes as first written\n');

const daemon = await TestDaemon.start({ skillsDirs: [skillsDir] });
t.teardown(async () => {
  await daemon.cleanup();
  await rm(temp, { recursive: true, force: true });
});
const client = await daemon.client();
await client.request('skills/subscribe');

async function run(skillId: string, input: Record<string, unknown>): Promise<JobView> {
  const job = await client.request<JobView>('jobs/create', { skill_id: skillId, engine: 'codex', input });
  return waitForStatus(client, job.job_id);
}

/** The skill as skills/get answers it, once a skills/changed for it leaves it as `expected` says. */
function changedTo(id: string, expected: (skill: SkillAnswer) => boolean): Promise<SkillAnswer> {
  return new Promise((resolve) => {
    const off = client.on('skills/changed', (params) => {
      if (!(params as { ids: string[] }).ids.includes(id)) return;
      void client.request<SkillAnswer>('skills/get', { skill_id: id }).then((skill) => {
        if (!expected(skill)) return;
        off();
        resolve(skill);
      });
    });
  });
}

t.test('jobs/result lists the artifacts that stay inside the folder, and leaves out with a warning the links that lead out of it', async (t) => {
  const job = await run('notes', { scenario: 'links' });
  t.equal(job.status, 'succeeded');
  const artifacts = join(daemon.runDir(job.job_id), 'workspace', 'artifacts');
  const result = await client.request<ResultView & { left_out?: string[] }>('jobs/result', { job_id: job.job_id });
  t.same(result.artifacts, ['alias.txt', 'report.txt', join('sub', 'inner.txt')].map((name) => join(artifacts, name)), 'the file, and the links to it from inside the folder');
  t.same(result.warnings, ['ARTIFACT_LINK_OUTSIDE']);
  t.same(result.left_out, ['leak.txt', join('sub', 'passwd'), 'up'].map((name) => join(artifacts, name)), 'a link to the workspace, one to /etc/passwd, one to the folder above');
  t.same(job.warnings, [], 'the job itself carries no such warning: it is found when the folder is read');
  const ctx = capture(client);
  t.equal(reportResult(ctx, result), 0);
  t.match(ctx.err, ['skillctl: warning: ARTIFACT_LINK_OUTSIDE', `artifact: ${join(artifacts, 'alias.txt')}`]);
  t.ok(ctx.err.includes(`left out, leads outside the artifacts folder: ${join(artifacts, 'leak.txt')}`), 'skillctl result names each link left out');
});

t.test('jobs/artifact reads a file of the artifacts folder in chunks, by the name or the path jobs/result lists; links out, paths that climb out, folders and unknown names are ARTIFACT_NOT_FOUND', async (t) => {
  const job = await run('notes', { scenario: 'links' });
  const artifacts = join(daemon.runDir(job.job_id), 'workspace', 'artifacts');
  const expected = await readFile(join(artifacts, 'report.txt'));
  type Chunk = { path: string; size: number; offset: number; data: string; next_offset: number; eof: boolean };
  const read = (path: string, offset?: number): Promise<Chunk> => client.request<Chunk>('jobs/artifact', { job_id: job.job_id, path, ...(offset === undefined ? {} : { offset }) });
  const whole = await read('report.txt');
  t.same({ ...whole, data: Buffer.from(whole.data, 'base64') }, { path: 'report.txt', size: expected.length, offset: 0, data: expected, next_offset: expected.length, eof: true });
  t.same((await read(join(artifacts, 'report.txt'))).data, whole.data, 'the absolute path jobs/result lists');
  const rest = await read('report.txt', 3);
  t.same([Buffer.from(rest.data, 'base64'), rest.offset, rest.eof], [expected.subarray(3), 3, true], 'from an offset');
  t.same((await read('report.txt', expected.length + 10)).data, '', 'past the end: nothing, at the end');
  t.same(Buffer.from((await read(join('sub', 'inner.txt'))).data, 'base64'), expected, 'a link that stays inside is read as the file it names');
  for (const [path, reason] of [['leak.txt', 'outside'], [join('sub', 'passwd'), 'outside'], ['up', 'outside'], ['../../request.json', 'outside'], ['/etc/passwd', 'outside'], ['sub', 'not_a_file'], ['nothing.txt', 'nowhere']] as const) {
    const error = await rpcError(read(path));
    t.equal(error.dataCode, 'ARTIFACT_NOT_FOUND', path);
    t.match(error.details, { path, reason }, `${path}: ${reason}`);
    t.notMatch(error.message, /root:/, 'nothing of the file is in the answer');
  }
  t.equal((await rpcError(client.request('jobs/artifact', { job_id: 'job-nope', path: 'report.txt' }))).dataCode, 'JOB_NOT_FOUND');

  // skillctl artifact: to stdout, to a new file (an existing one is refused), the refusal's code.
  const env = { ...process.env, SKILLD_SOCKET: daemon.socket };
  const out = await runSkillctl(['artifact', job.job_id.slice(4, 12), 'report.txt'], env);
  t.same([out.code, out.stdout], [0, expected.toString()]);
  const file = join(temp, `copy-${job.job_id}.txt`);
  t.equal((await runSkillctl(['artifact', job.job_id, join(artifacts, 'report.txt'), '-o', file], env)).code, 0);
  t.same(await readFile(file), expected);
  t.match(await runSkillctl(['artifact', job.job_id, 'report.txt', '-o', file], env), { code: 1, stderr: /EEXIST/ }, 'an existing file is not overwritten');
  t.match(await runSkillctl(['artifact', job.job_id, 'leak.txt'], env), { code: 1, stdout: '', stderr: /ARTIFACT_NOT_FOUND/ });
});

t.test('an artifacts folder that is itself a link out of the workspace lists nothing and is named as left out', async (t) => {
  const job = await run('notes', { scenario: 'links_folder' });
  t.equal(job.status, 'succeeded');
  const result = await client.request<ResultView & { left_out?: string[] }>('jobs/result', { job_id: job.job_id });
  t.same(result.artifacts, []);
  t.same(result.warnings, ['ARTIFACT_LINK_OUTSIDE']);
  t.same(result.left_out, [join(daemon.runDir(job.job_id), 'workspace', 'artifacts')]);
});

t.test('a job without links has no warning and no left_out', async (t) => {
  const job = await run('notes', { scenario: 'ok' });
  const result = await client.request<Record<string, unknown>>('jobs/result', { job_id: job.job_id });
  t.same(result['warnings'], []);
  t.notOk('left_out' in result);
});

t.test('a skill whose SKILL.md is a link out of its folder is invalid, and nothing of the file it names is served', async (t) => {
  const skill = await client.request<SkillAnswer>('skills/get', { skill_id: 'md-outside' });
  t.match(skill, { status: 'invalid', version: null, instructions: null, error: { code: 'SKILL_LINK_OUTSIDE', path: join(mdOutside, 'SKILL.md'), message: /SKILL\.md leads outside the skill folder/ } });
  t.notMatch(JSON.stringify(skill), /SECRET/);
  const refused = await rpcError(client.request('jobs/create', { skill_id: 'md-outside', engine: 'codex', input: {} }));
  t.equal(refused.dataCode, 'SKILL_INVALID');
});

t.test('a link that stays inside the skill folder is read as the file it names, and copied as a file', async (t) => {
  t.match(await client.request<SkillAnswer>('skills/get', { skill_id: 'schema-inside' }), { status: 'ok', schemas: { output: { required: ['greeting'] } } });
  const job = await run('schema-inside', { scenario: 'ok' });
  t.equal(job.status, 'succeeded');
  const copied = await readFile(join(daemon.runDir(job.job_id), 'skill', 'assets', 'output.schema.json'), 'utf8');
  t.equal(copied, await readFile(join(schemaInside, 'shared', 'output.json'), 'utf8'));
});

t.test('a file of a skill replaced by a link out of its folder makes the skill invalid; jobs run on the last valid version, without the file linked to', async (t) => {
  const invalid = changedTo('notes', (skill) => skill.status === 'invalid');
  await rm(join(notes, 'references', 'notes.md'));
  await symlink(secret, join(notes, 'references', 'notes.md'));
  t.match(await invalid, { status: 'invalid', version: '1.0.0', error: { code: 'SKILL_LINK_OUTSIDE', path: join(notes, 'references', 'notes.md') } });
  const job = await run('notes', { scenario: 'ok' });
  t.equal(job.status, 'succeeded');
  t.equal(await readFile(join(daemon.runDir(job.job_id), 'skill', 'references', 'notes.md'), 'utf8'), 'the notes as first written\n', "the snapshot holds the last valid version's bytes");
});
