// The config's `network` and `engines.<name>.network`, a skill's `network.allow`, each engine's own
// hosts, what decides jobs' network at start, and how often a job's refusals are told.
import t from 'tap';
import { configFiles } from '../helpers/config-files.js';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../helpers/fake-clock.js';
import { engineAllowEntries, hostPortOf } from '../../daemon/network/engine-hosts.js';
import { REFUSALS_PER_WINDOW, REFUSAL_WINDOW_MS, RefusalLimiter, type Refusal } from '../../daemon/network/refusals.js';
import { decideNetwork } from '../../daemon/sandbox/network-mode.js';
import { chooseBridge } from '../../daemon/sandbox/open-sandbox.js';
import { ConfigError } from '../../daemon/base/config.js';
import { existsSync, realpathSync } from 'node:fs';
import { loadSkill, SkillLoadError } from '../../daemon/skills/manifest.js';
import { eventLine } from '../../clients/format.js';

const dir = await mkdtemp(join(tmpdir(), 'skilld-network-config-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
let files = 0;
const { load, problem } = configFiles(dir);

const texts = (entries: ReadonlyArray<{ text: string }>): string[] => entries.map((entry) => entry.text);

t.test('network: a mode alone, or an object with the mode, the allow-list, whether skills may add to it and the bridge', async (t) => {
  t.same((await load({})).network, { mode: null, allow: [], skills_may_allow: true, bridge: 'auto' }, 'not given: decided at start');
  t.same((await load({ network: 'open' })).network, { mode: 'open', allow: [], skills_may_allow: true, bridge: 'auto' });
  t.equal((await load({ network: { bridge: 'node' } })).network.bridge, 'node');
  t.match(await problem({ network: { bridge: 'netcat' } }), /"network.bridge" must be one of auto, socat, node, not "netcat"/);
  const given = (await load({ network: { mode: 'isolated', allow: ['registry.npmjs.org:443', '*.pypi.org:443', '127.0.0.1:11434'], skills_may_allow: false } })).network;
  t.same([given.mode, texts(given.allow), given.skills_may_allow], ['isolated', ['registry.npmjs.org:443', '*.pypi.org:443', '127.0.0.1:11434'], false]);
  t.match(await problem({ network: 'closed' }), /"network" must be one of isolated, open/);
  t.match(await problem({ network: ['open'] }), /"network" must be one of isolated, open, or an object/);
  t.match(await problem({ network: { mode: 'on' } }), /"network.mode" must be one of isolated, open/);
  t.match(await problem({ network: { deny: [] } }), /"network.deny" is unknown/);
  t.match(await problem({ network: { skills_may_allow: 'no' } }), /"network.skills_may_allow" must be true or false/);
  t.match(await problem({ network: { allow: 'example.com:443' } }), /"network.allow" must be a list of host:port or \*.domain:port entries/);
  t.match(await problem({ network: { allow: ['example.com'] } }), /"network.allow" has "example.com", which /, 'the entry at fault is named');
  t.match(await problem({ network: { allow: ['https://example.com/'] } }), /"network.allow" has "https:\/\/example.com\/", which /);
});

t.test('the bridge: socat where it and setpriv are among the system\'s programs on the PATH, else node; socat asked for and not there stops start-up', async (t) => {
  const own = { places: ['/var/lib/skilld'], skills: [], home: '/var/lib/skilld' };
  const node = chooseBridge('node', '/usr/bin:/bin', own);
  t.match(node, { kind: 'node', program: realpathSync(process.execPath) }, 'node asked for: the node the daemon runs on');
  const empty = await mkdtemp(join(tmpdir(), 'skilld-no-socat-'));
  t.teardown(() => rm(empty, { recursive: true, force: true }));
  t.equal(chooseBridge('auto', empty, own).kind, 'node', 'no socat on the PATH: node');
  t.throws(() => chooseBridge('socat', empty, own), ConfigError);
  t.throws(() => chooseBridge('socat', empty, own), /"network.bridge" is "socat", but socat and setpriv are not on the PATH among the system's programs/);
  // A socat outside the system's programs (which every sandbox is shown) is not taken.
  const elsewhere = await mkdtemp(join(tmpdir(), 'skilld-socat-'));
  t.teardown(() => rm(elsewhere, { recursive: true, force: true }));
  await writeFile(join(elsewhere, 'socat'), '#!/bin/sh\n', { mode: 0o755 });
  await writeFile(join(elsewhere, 'setpriv'), '#!/bin/sh\n', { mode: 0o755 });
  t.equal(chooseBridge('auto', elsewhere, own).kind, 'node', 'a socat outside /usr: node');
  const installed = ['socat', 'setpriv'].every((name) => existsSync(`/usr/bin/${name}`));
  if (installed) {
    t.same(chooseBridge('auto', '/usr/bin', own), { kind: 'socat', program: realpathSync('/usr/bin/socat'), setpriv: realpathSync('/usr/bin/setpriv') }, 'both there and working: socat');
    // A setpriv without --pdeathsig (util-linux before 2.33): the socats would never start.
    const broken = (): boolean => false;
    t.equal(chooseBridge('auto', '/usr/bin', own, broken).kind, 'node', 'there, but not working: node');
    t.throws(() => chooseBridge('socat', '/usr/bin', own, broken), /"network.bridge" is "socat", but `.*setpriv --pdeathsig KILL -- .*socat -V` does not run here/);
  } else t.comment('socat or setpriv is not installed here: the choice of socat is not checked');
});

t.test('engines.<name>.network.allow: entries for one engine\'s jobs', async (t) => {
  const config = await load({ engines: { codex: { network: { allow: ['github.com:443'] } } } });
  t.same(texts(config.engines.codex.network.allow), ['github.com:443']);
  t.same(config.engines.gemini.network.allow, []);
  t.match(await problem({ engines: { codex: { network: { allow: ['github.com'] } } } }), /"engines.codex.network.allow" has "github.com", which /);
  t.match(await problem({ engines: { codex: { network: { deny: [] } } } }), /"engines.codex.network.deny" is unknown/);
  t.match(await problem({ engines: { codex: { network: [] } } }), /"engines.codex.network" must be an object with an allow list/);
});

t.test('engines.<name>.gateway: the upstream, the variable its key is in (set at start), how long a limited call is retried', async (t) => {
  const keyed = configFiles(dir, { PROVIDER_KEY: 'sk-1' });
  const config = await keyed.load({ engines: { claude: { gateway: { upstream: 'https://api.anthropic.com/', api_key_env: 'PROVIDER_KEY' } }, codex: { gateway: { upstream: 'http://127.0.0.1:8080/v1/', api_key_env: 'PROVIDER_KEY', retry_max_sec: 5 } } } });
  t.same(config.engines.claude.gateway, { upstream: 'https://api.anthropic.com', api_key_env: 'PROVIDER_KEY', retry_max_sec: 120 }, 'no trailing slash; 120 s by default');
  t.same(config.engines.codex.gateway, { upstream: 'http://127.0.0.1:8080/v1', api_key_env: 'PROVIDER_KEY', retry_max_sec: 5 });
  t.equal(config.engines.gemini.gateway, null);
  t.notMatch(JSON.stringify(config), /sk-1/, 'the key is not in the config');
  const gateway = (given: Record<string, unknown>) => ({ engines: { claude: { gateway: { upstream: 'https://api.anthropic.com', api_key_env: 'PROVIDER_KEY', ...given } } } });
  t.match(await problem(gateway({})), /"engines.claude.gateway.api_key_env" names PROVIDER_KEY, which is not set in the daemon's environment/, 'an unset key stops the start');
  t.match(await keyed.problem(gateway({ upstream: 'ftp://x.example' })), /"engines.claude.gateway.upstream" must be an http:\/\/ or https:\/\/ URL/);
  t.match(await keyed.problem(gateway({ upstream: 'https://user:pw@x.example' })), /"engines.claude.gateway.upstream" must be/);
  t.match(await keyed.problem(gateway({ upstream: 'https://x.example/?key=1' })), /"engines.claude.gateway.upstream" must be/);
  t.match(await keyed.problem(gateway({ api_key_env: 'A-B' })), /"engines.claude.gateway.api_key_env" must name an environment variable/);
  t.match(await keyed.problem(gateway({ retry_max_sec: -1 })), /"engines.claude.gateway.retry_max_sec" must be an integer from 0 to 3600/);
  t.match(await keyed.problem(gateway({ headers: {} })), /"engines.claude.gateway.headers" is unknown/);
  t.match(await keyed.problem({ engines: { claude: { gateway: 'https://api.anthropic.com' } } }), /"engines.claude.gateway" must be an object/);
  t.match(await keyed.problem({ ...gateway({}), network: 'open' }), /"engines.claude.gateway" needs each job's own network, and "network" is "open"/);
  t.match(await keyed.problem({ engines: { iflow: { gateway: { upstream: 'https://x.example', api_key_env: 'PROVIDER_KEY' } } } }), /"engines.iflow.gateway" is not supported/);
});

t.test("a skill's network.allow (runner.json): checked as the config's", async (t) => {
  const skill = async (network: unknown): Promise<unknown> => {
    files += 1;
    const root = join(dir, `skill-${files}`);
    await mkdir(join(root, 'assets'), { recursive: true });
    await writeFile(join(root, 'SKILL.md'), '# A skill\n');
    await writeFile(join(root, 'assets', 'output.schema.json'), '{"type": "object"}');
    await writeFile(join(root, 'assets', 'runner.json'), JSON.stringify({ id: `skill-${files}`, version: '1', execution_modes: ['auto'], ...(network === undefined ? {} : { network }) }));
    return loadSkill(root).then((loaded) => texts(loaded.network_allow), (error: unknown) => (error instanceof SkillLoadError ? error.message : error));
  };
  t.same(await skill(undefined), []);
  t.same(await skill({ allow: ['api.github.com:443'] }), ['api.github.com:443']);
  t.match(await skill({ allow: ['api.github.com'] }), /runner.json: network.allow has "api.github.com", which /);
  t.match(await skill({ deny: [] }), /runner.json: .*network/);
});

t.test("each engine's own hosts, and the host of each model endpoint its configuration names", async (t) => {
  t.same(texts(engineAllowEntries('claude', {}, ['claude'])), ['api.anthropic.com:443', 'claude.ai:443', 'platform.claude.com:443']);
  t.same(texts(engineAllowEntries('claude', { ANTHROPIC_BASE_URL: 'http://127.0.0.1:8080' }, ['claude'])).at(-1), '127.0.0.1:8080');
  t.same(texts(engineAllowEntries('gemini', { GOOGLE_GEMINI_BASE_URL: 'https://llm.example.com/x' }, ['gemini'])).at(-1), 'llm.example.com:443');
  const home = join(dir, 'codex-home');
  await mkdir(home, { recursive: true });
  await writeFile(join(home, 'config.toml'), '[model_providers.local]\nname = "local"\nbase_url = "http://127.0.0.1:11434/v1"\n');
  const codex = texts(engineAllowEntries('codex', { CODEX_HOME: home }, ['codex', '-c', 'model_providers.corp.base_url="https://gw.corp.example:8443/v1"']));
  t.same(codex.slice(-2), ['127.0.0.1:11434', 'gw.corp.example:8443'], "Codex's config.toml and its command");
  t.same(texts(engineAllowEntries('codex', { HOME: join(dir, 'nowhere') }, ['codex'])), ['api.openai.com:443', 'chatgpt.com:443', 'auth.openai.com:443'], 'no config file: the provider alone');
  t.same([hostPortOf('http://h.example'), hostPortOf('https://[::1]:9/x'), hostPortOf('ftp://h.example'), hostPortOf('not a url')], ['h.example:80', '[::1]:9', null, null]);
});

t.test('what jobs get: their own network where the sandbox runs, else the host\'s, said; isolated asked for and impossible stops every job', async (t) => {
  const network = (mode: 'isolated' | 'open' | null) => ({ mode, allow: [], skills_may_allow: true, bridge: 'auto' as const });
  const here = { state_dir: '/var/lib/skilld' };
  t.same(decideNetwork({ ...here, network: network(null) }, 'sandbox', null), { view: { configured: null, allow: [], skills_may_allow: true, gateways: [], bridge: null, mode: 'isolated', reason: null }, refusal: null });
  const open = decideNetwork({ ...here, network: network('open') }, 'sandbox', null);
  t.same([open.view.mode, open.view.reason, open.refusal], ['open', 'the config says so (network: "open")', null]);
  const fallback = decideNetwork({ ...here, network: network(null) }, 'none', 'bwrap is missing');
  t.same([fallback.view.mode, fallback.refusal], ['open', null]);
  t.match(fallback.view.reason, /without a sandbox, so without a network of their own \(bwrap is missing\)/);
  const refused = decideNetwork({ ...here, network: network('isolated') }, 'none', 'bwrap is missing');
  t.equal(refused.view.mode, 'isolated');
  t.match(refused.refusal, /network: "isolated"\) cannot be made here: jobs run without a sandbox/);
  const long = decideNetwork({ state_dir: `/${'x'.repeat(60)}`, network: network('isolated') }, 'sandbox', null);
  t.match(long.refusal, /the state folder's path is too long for the sockets of a job's network/);
  const gateway = { upstream: 'https://api.anthropic.com', api_key_env: 'K', retry_max_sec: 120 };
  const engines = { claude: { gateway }, codex: { gateway: null } };
  const gated = decideNetwork({ ...here, network: network(null), engines }, 'none', 'bwrap is missing');
  t.same(gated.view.gateways, [{ engine: 'claude', upstream: 'https://api.anthropic.com' }]);
  t.match(gated.refusal, /the model gateway \(engines\.claude\.gateway\) needs each job's own network, which cannot be made here/, 'a gateway, like isolated, stops every job where no network of its own can be made');
  t.equal(decideNetwork({ ...here, network: network(null), engines }, 'sandbox', null).refusal, null);
});

t.test(`a job's refusals: at most ${REFUSALS_PER_WINDOW} a minute told, the rest counted and told with the next`, async (t) => {
  const clock = new FakeClock();
  const told: Array<[string, Refusal]> = [];
  const limiter = new RefusalLimiter(clock, (jobId, refusal) => told.push([jobId, refusal]));
  const refusal = { host: 'example.com', port: 443, reason: 'not_allowed', detail: 'no entry' };
  for (let i = 0; i < REFUSALS_PER_WINDOW + 5; i += 1) limiter.refused('job-a', refusal);
  limiter.refused('job-b', refusal);
  t.equal(told.filter(([jobId]) => jobId === 'job-a').length, REFUSALS_PER_WINDOW);
  t.equal(told.filter(([jobId]) => jobId === 'job-b').length, 1, 'each job has its own count');
  clock.advance(REFUSAL_WINDOW_MS);
  limiter.refused('job-a', refusal);
  t.same(told.at(-1), ['job-a', { ...refusal, suppressed: 5 }], 'the next window says how many were held back');
  limiter.refused('job-a', refusal);
  t.same(told.at(-1), ['job-a', refusal]);
  limiter.forget('job-a');
  for (let i = 0; i < REFUSALS_PER_WINDOW; i += 1) limiter.refused('job-a', refusal);
  t.equal(told.filter(([jobId]) => jobId === 'job-a').length, REFUSALS_PER_WINDOW + 2 + REFUSALS_PER_WINDOW, 'forgotten: a fresh count');
});

t.test('a refusal as `skillctl watch` prints it', async (t) => {
  const line = eventLine({ job_id: 'job-1', seq: 4, ts: '2026-01-01T00:00:00.000Z', type: 'network_refused', data: { host: '169.254.169.254', port: 80, reason: 'not_allowed', detail: 'no entry names it' } });
  t.equal(line, '2026-01-01T00:00:00.000Z job-1 #4 network_refused 169.254.169.254:80 not_allowed: no entry names it');
  const held = eventLine({ job_id: 'job-1', seq: 5, ts: '2026-01-01T00:01:00.000Z', type: 'network_refused', data: { host: 'x.example', port: 443, reason: 'not_allowed', detail: 'no entry names it', suppressed: 3 } });
  t.match(held, /x\.example:443 not_allowed: no entry names it \(3 more held back before it\)$/);
});
