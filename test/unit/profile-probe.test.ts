// PR-1 PR-2: the resume probe's results are kept for the daemon's lifetime, except one that ran
// out of time, which says nothing lasting about the engine (a busy machine): that one is probed again.
import t from 'tap';
import type { EngineConfig } from '../../daemon/base/config.js';
import { ProfileProbe } from '../../daemon/engines/probe.js';
import type { EngineName } from '../../daemon/model/job.js';
import type { ShortRunner, ShortRun } from '../../daemon/model/short-run.js';

const engine = (command: string): EngineConfig => ({ command: [command], env: {}, profile: 'probe', sticky_recovery: 'fail', sandbox: { read_only: [], read_write: [] }, network: { allow: [] }, gateway: null });
const configs = { codex: engine('codex'), gemini: engine('gemini'), iflow: engine('iflow'), claude: engine('claude') } as Record<EngineName, EngineConfig>;

const answered = (stdout: string): ShortRun => ({ ok: true, timedOut: false, code: 0, stdout, stderr: '', error: null });
const outOfTime: ShortRun = { ok: false, timedOut: true, code: null, stdout: '', stderr: '', error: 'timed out after 5000 ms' };
const refused: ShortRun = { ok: false, timedOut: false, code: 2, stdout: '', stderr: 'unknown command', error: null };

/** A runner that answers from `answers` in turn, and the argv it was asked to run. */
function scripted(answers: ShortRun[]): { run: ShortRunner; asked: string[] } {
  const asked: string[] = [];
  const run: ShortRunner = (argv) => {
    asked.push(argv.join(' '));
    const next = answers.shift();
    if (next === undefined) throw new Error(`nothing scripted for ${argv.join(' ')}`);
    return Promise.resolve(next);
  };
  return { run, asked };
}

t.test('a help that runs out of time gives sticky_process this once; the next job probes again', async (t) => {
  const { run, asked } = scripted([outOfTime, answered('resume a session'), answered('')]);
  const probe = new ProfileProbe(configs, () => ({}), run);
  t.match(await probe.profileFor('codex'), { kind: 'sticky_process', reason: 'resume probe failed: codex --help failed: timed out after 5000 ms' });
  t.match(await probe.profileFor('codex'), { kind: 'resumable', reason: 'codex --help mentions "resume" and codex exec resume --help exits 0' });
  t.match(await probe.profileFor('codex'), { kind: 'resumable' }, 'an answer is kept');
  t.same(asked, ['codex --help', 'codex --help', 'codex exec resume --help']);
});

t.test('a resume check that runs out of time is not kept either; one that fails is', async (t) => {
  const { run, asked } = scripted([answered('resume'), outOfTime, answered('resume'), refused]);
  const probe = new ProfileProbe(configs, () => ({}), run);
  t.match(await probe.profileFor('codex'), { kind: 'sticky_process', reason: /codex exec resume --help timed out after 5000 ms$/ });
  t.match(await probe.profileFor('codex'), { kind: 'sticky_process', reason: /codex exec resume --help exited with code 2$/ });
  t.match(await probe.profileFor('codex'), { kind: 'sticky_process', reason: /exited with code 2$/ }, 'a failure is an answer, and kept');
  t.equal(asked.length, 4);
});

t.test('jobs asking at once share one probe', async (t) => {
  const { run, asked } = scripted([answered('resume'), answered('')]);
  const probe = new ProfileProbe(configs, () => ({}), run);
  const profiles = await Promise.all([probe.profileFor('codex'), probe.profileFor('codex')]);
  t.same(profiles.map((p) => p.kind), ['resumable', 'resumable']);
  t.equal(asked.length, 2);
});
