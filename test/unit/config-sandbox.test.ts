// The config's `sandbox` and `limits` (config-sandbox.ts), and a skill's `limits` (runner.json),
// which lower the daemon's for its jobs.
import t from 'tap';
import { configFiles } from '../helpers/config-files.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { effectiveLimits, parseSkillLimits } from '../../daemon/base/config-sandbox.js';
import { loadSkill, SkillLoadError } from '../../daemon/skills/manifest.js';

const dir = await mkdtemp(join(tmpdir(), 'skilld-config-sandbox-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const { load, problem } = configFiles(dir);

t.test('sandbox: a mode alone, or an object with the mode, what every job is shown, the variables passed and the user engines run as', async (t) => {
  const sandboxOf = async (sandbox: unknown): Promise<unknown> => (await load({ sandbox })).sandbox;
  t.same(await sandboxOf('required'), { mode: 'required', read_only: [], pass_env: [], run_as: null });
  t.same(await sandboxOf({ mode: 'off', read_only: ['/usr/share/../share'], pass_env: ['HTTPS_PROXY', 'AWS_*'], run_as: 'skilld-job' }), { mode: 'off', read_only: ['/usr/share'], pass_env: ['HTTPS_PROXY', 'AWS_*'], run_as: 'skilld-job' });
  t.same(await sandboxOf({}), { mode: 'preferred', read_only: [], pass_env: [], run_as: null }, 'every key has its default');
  const bad = async (sandbox: unknown): Promise<string> => problem({ sandbox });
  t.match(await bad('on'), /"sandbox" must be one of preferred, required, off/);
  t.match(await bad(['preferred']), /"sandbox" must be one of preferred, required, off, or an object/);
  t.match(await bad({ mode: 'on' }), /"sandbox.mode" must be one of preferred, required, off/);
  t.match(await bad({ hide: [] }), /"sandbox.hide" is unknown/);
  t.match(await bad({ read_only: ['/nonexistent/x'] }), /"sandbox.read_only" names \/nonexistent\/x, which does not exist/);
  t.match(await bad({ pass_env: ['A B'] }), /"sandbox.pass_env" must be a list of variable names/);
  t.match(await bad({ pass_env: ['*'] }), /"sandbox.pass_env" must be a list of variable names/, 'not every variable at once');
  t.match(await bad({ run_as: 'root' }), /"sandbox.run_as" must be an unprivileged user/);
  t.match(await bad({ run_as: 'a:b' }), /"sandbox.run_as" must be a user name or a uid/);
});

t.test('limits: counts and sizes with binary units, null for none; a skill may lower them', async (t) => {
  const limitsOf = async (limits: unknown): Promise<unknown> => (await load({ limits })).limits;
  t.same(await limitsOf({ processes: 64, memory: '1GiB', tmp: '64M', workspace: null }), { processes: 64, memory: 1024 ** 3, tmp: 64 * 1024 ** 2, workspace: null });
  t.same(await limitsOf({ memory: 268435456 }), { processes: 512, memory: 256 * 1024 ** 2, tmp: 512 * 1024 ** 2, workspace: 10 * 1024 ** 3 }, 'bytes as a number; the rest default');
  const bad = async (limits: unknown): Promise<string> => problem({ limits });
  t.match(await bad({ processes: 3 }), /"limits.processes" must be null or an integer >= 16/);
  t.match(await bad({ memory: '4 lots' }), /"limits.memory" must be a size of at least 64 MiB/);
  t.match(await bad({ memory: '1MiB' }), /"limits.memory" must be a size of at least 64 MiB/);
  t.match(await bad({ tmp: null }), /"limits.tmp" must be a size of at least 1 MiB, such as "512MiB" or "4GiB" \(/, 'a private /tmp always has a size');
  t.match(await bad({ cpu: 2 }), /"limits.cpu" is unknown/);
});

t.test('a skill\'s limits (runner.json) lower the daemon\'s, never raise them', async (t) => {
  t.same(parseSkillLimits({ processes: 32, memory: '1GiB', workspace: 1048576 }), { processes: 32, memory: 1024 ** 3, workspace: 1048576 });
  t.equal(parseSkillLimits({ memory: 'lots' }), 'memory must be a size, such as "512MiB" or "4GiB"');
  t.equal(parseSkillLimits({ processes: 8 }), 'processes must be an integer >= 16');
  t.equal(parseSkillLimits({ cpu: 1 }), 'cpu is unknown (processes, memory, tmp, workspace)');
  t.equal(parseSkillLimits([]), 'must be an object');
  const daemon = { processes: 512, memory: 4 * 1024 ** 3, tmp: 512 * 1024 ** 2, workspace: null };
  t.same(effectiveLimits(daemon, { processes: 1024, memory: 1024 ** 3, workspace: 2048 }), { processes: 512, memory: 1024 ** 3, tmp: 512 * 1024 ** 2, workspace: 2048 }, 'the lower of the two; a skill sets one the daemon has none of');
});

t.test('runner.json limits: as the config says them; a bad value makes the skill invalid', async (t) => {
  const skill = async (id: string, limits: unknown): Promise<unknown> => {
    await mkdir(join(dir, 'skills', id, 'assets'), { recursive: true });
    await writeFile(join(dir, 'skills', id, 'SKILL.md'), '# test\n');
    await writeFile(join(dir, 'skills', id, 'assets', 'output.schema.json'), JSON.stringify({ type: 'object' }));
    await writeFile(join(dir, 'skills', id, 'assets', 'runner.json'), JSON.stringify({ id, version: '1', execution_modes: ['auto'], ...(limits === undefined ? {} : { limits }) }));
    return loadSkill(join(dir, 'skills', id)).then((loaded) => loaded.limits, (error: unknown) => error);
  };
  t.same(await skill('la', { memory: '1GiB', processes: 64 }), { memory: 1024 ** 3, processes: 64 });
  t.same(await skill('lb', undefined), {}, 'none: the daemon\'s');
  const bad = await skill('lc', { memory: 'a lot' });
  t.ok(bad instanceof SkillLoadError && bad.code === 'SKILL_MANIFEST_INVALID', 'invalid');
  t.match((bad as Error).message, /^runner\.json: limits: memory must be a size/);
});

t.test('an engine\'s env holds what a process environment can: no NUL, no = in a name', async (t) => {
  for (const env of [{ A: 'x\u0000--bind' }, { 'A=B': 'x' }, { A: 1 }]) t.match(await problem({ engines: { codex: { env } } }), /"engines\.codex\.env" must map names to strings \(no NUL, and no = in a name\)/, JSON.stringify(env));
  t.same((await load({ engines: { codex: { env: { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' } } } })).engines.codex.env, { OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
});
