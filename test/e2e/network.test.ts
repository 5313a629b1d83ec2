// A job's network is its own (docs/network.md): from inside a job, a hostile engine tries the
// host's loopback, its LAN address, the cloud metadata address and names nobody allowed, straight
// and through its proxy: trap listeners count every connection that arrives, and none does; each
// refusal through the proxy is an event of the job. What its skill's allow entry names, it
// reaches, straight (a forwarded loopback port) and through the proxy, and nothing else.
import t from 'tap';
import { existsSync } from 'node:fs';
import { lanAddress, refusalsOf, trapListener as trap } from '../helpers/network.js';
import { NO_SANDBOX } from '../helpers/sandbox.js';
import { runSkillctl } from '../helpers/skillctl.js';
import { hostDaemon, reachOf, runJob, widenSchema } from '../helpers/sandbox-host.js';

const ROOT_USER = process.getuid?.() === 0;

// The bridge a daemon here chooses (socat where socat and setpriv are installed), and the node bridge asked for by the config.
const SOCAT_HERE = ['socat', 'setpriv'].every((name) => existsSync(`/usr/bin/${name}`));
const own = ROOT_USER ? [{ as: 'root', uid: undefined }, { as: 'an unprivileged user of its own', uid: 65534 }] : [{ as: 'its own user', uid: undefined }];
const variants = [...own.map((one) => ({ ...one, bridge: SOCAT_HERE ? 'socat' : 'node', config: {} })), { ...(own[0] as { as: string; uid: undefined }), bridge: 'node', config: { network: { bridge: 'node' } } }];

for (const variant of variants) {
  t.test(`the daemon as ${variant.as}, the ${variant.bridge} bridge: a job reaches what its allow-list names and nothing else`, { skip: NO_SANDBOX }, async (t) => {
    const forbidden = await trap('forbidden');
    const allowed = await trap('allowed');
    const lan = lanAddress();
    const { daemon } = await hostDaemon({ uid: variant.uid, config: () => variant.config, prepare: (dir) => widenSchema(dir, 'echo-auto', {}, { network: { allow: [`127.0.0.1:${allowed.port}`] } }) });
    const client = await daemon.client();
    const status = await client.request<{ network: { mode: string; reason: string | null; bridge: string | null } }>('daemon/status');
    t.match(status.network, { mode: 'isolated', reason: null, bridge: variant.bridge }, 'status says jobs get their own network, and its bridge');
    const dial = {
      "the host's loopback": { host: '127.0.0.1', port: forbidden.port },
      'the cloud metadata address': { host: '169.254.169.254', port: 80 },
      ...(lan === null ? {} : { "the host's LAN address": { host: lan, port: forbidden.port } }),
    };
    const tunnel = {
      "the host's loopback, through the proxy": { host: '127.0.0.1', port: forbidden.port },
      'localhost, through the proxy': { host: 'localhost', port: forbidden.port },
      'the cloud metadata address, through the proxy': { host: '169.254.169.254', port: 80 },
      'a name nobody allowed, through the proxy': { host: 'exfiltrate.example', port: 443 },
      ...(lan === null ? {} : { "the host's LAN address, through the proxy": { host: lan, port: forbidden.port } }),
    };
    const probe = {
      dial,
      tunnel,
      reach_dial: { 'the allowed port, forwarded': { host: '127.0.0.1', port: allowed.port } },
      reach_tunnel: { 'the allowed port, through the proxy': { host: '127.0.0.1', port: allowed.port } },
    };
    const job = await runJob(daemon, 'codex', { scenario: 'hostile_fs', probe });
    t.equal(job.status, 'succeeded', JSON.stringify(job.error));
    const reach = await reachOf(daemon, job.job_id);
    for (const name of [...Object.keys(dial), ...Object.keys(tunnel)]) {
      const attempt = reach.attempts.find((one) => one.name === name);
      t.notOk(attempt?.ok ?? true, `refused: ${name} (${attempt?.detail ?? 'not tried'})`);
    }
    for (const name of Object.keys(tunnel)) t.match(reach.attempts.find((one) => one.name === name)?.detail, /^HTTP\/1\.1 403/, `the proxy said no: ${name}`);
    for (const name of Object.keys(probe.reach_dial)) t.match(reach.work.find((one) => one.name === name), { ok: true, detail: 'connected: allowed' }, name);
    for (const name of Object.keys(probe.reach_tunnel)) t.match(reach.work.find((one) => one.name === name), { ok: true, detail: 'tunnelled: allowed' }, name);
    t.equal(forbidden.count(), 0, 'nothing reached the host\'s listener');
    t.equal(allowed.count(), 2, 'the allowed port, reached twice');

    const refused = await refusalsOf(client, job.job_id);
    t.same(refused.map(({ host, port, reason }) => ({ host, port, reason })), [
      { host: '127.0.0.1', port: forbidden.port, reason: 'not_allowed' },
      { host: 'localhost', port: forbidden.port, reason: 'not_allowed' },
      { host: '169.254.169.254', port: 80, reason: 'not_allowed' },
      { host: 'exfiltrate.example', port: 443, reason: 'not_allowed' },
      ...(lan === null ? [] : [{ host: lan, port: forbidden.port, reason: 'not_allowed' }]),
    ], 'each refusal through the proxy is an event of the job, in order');
    for (const one of refused) t.type(one.detail, 'string');
    if (variant.uid === undefined) {
      const shown = await runSkillctl(['show', job.job_id, '--socket', daemon.socket], process.env);
      t.match(shown.stdout, new RegExp(`^refused connections \\(${refused.length}\\):$`, 'm'), 'skillctl show lists them');
      t.match(shown.stdout, /^ {2}\S+ job-\S+ #\d+ network_refused 169\.254\.169\.254:80 not_allowed: /m);
    }
  });
}

t.test('network: "open": the host\'s network, said in status; no refusal events', { skip: NO_SANDBOX }, async (t) => {
  const open = await trap('open');
  const { daemon } = await hostDaemon({ config: () => ({ network: 'open' }), prepare: (dir) => widenSchema(dir, 'echo-auto') });
  const client = await daemon.client();
  const status = await client.request<{ network: { mode: string; reason: string } }>('daemon/status');
  t.match(status.network, { mode: 'open', reason: /the config says so/ });
  const job = await runJob(daemon, 'codex', { scenario: 'hostile_fs', probe: { reach_dial: { "the host's loopback": { host: '127.0.0.1', port: open.port } } } });
  t.equal(job.status, 'succeeded', JSON.stringify(job.error));
  t.match((await reachOf(daemon, job.job_id)).work.find((one) => one.name === "the host's loopback"), { ok: true, detail: 'connected: open' });
});
