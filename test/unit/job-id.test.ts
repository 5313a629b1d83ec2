import t from 'tap';
import { JOB_ID_PATTERN, MATCHES_SHOWN, jobIdPrefix, pickJob } from '../../clients/job-id.js';
import type { JobView } from '../../clients/wire.js';
import { newJobId } from '../../daemon/jobs/new-job.js';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');

function job(id: string, minutesAgo = 1): JobView {
  return { job_id: id, skill_id: 'echo-auto', engine: 'codex', execution_mode: 'auto', status: 'succeeded', created_at: new Date(NOW - minutesAgo * 60_000).toISOString(), error: null };
}

t.test("a whole id is the daemon's format; anything else is a prefix", async (t) => {
  for (const at of [new Date(0), new Date(NOW), new Date('2999-12-31T00:00:00Z')]) t.match(newJobId(at), JOB_ID_PATTERN, `an id made at ${at.toISOString()}`);
  t.match('job-0mbdz1c00-0123456789', JOB_ID_PATTERN, 'an id of the older form, time first');
  for (const short of ['job-0mbdz1', '0mbdz1', 'job-', 'job-0mbdz1c00-abc', 'JOB-0MBDZ1C00-0123456789', 'job-3f9c1d2e4b-0mhx2k9', 'job-3f9c1d2e4-0mhx2k9ab']) t.notMatch(short, JOB_ID_PATTERN);
});

t.test('new ids start with their randomness: 6 characters name one job among 1,000 made in the same millisecond', async (t) => {
  const at = new Date(NOW);
  const made = Array.from({ length: 1000 }, () => newJobId(at));
  t.equal(new Set(made).size, made.length, 'each id is new');
  const starts = new Set(made.map((id) => id.slice(4, 10)));
  // 16^6 starts: 0.03 pairs of 1,000 share one on average; 4 or more (a chance of 3 in 10^8) would be a broken generator.
  t.ok(made.length - starts.size <= 3, `${made.length - starts.size} shared 6-character starts`);
  t.match(made[0], /^job-[0-9a-f]{10}-[0-9a-z]{9}$/);
  t.equal(made[0]?.slice(-9), NOW.toString(36).padStart(9, '0'), 'then the time it was made');
  t.equal(jobIdPrefix('0mbdz1'), 'job-0mbdz1', 'without job-: it is added');
  t.equal(jobIdPrefix('job-0mbdz1'), 'job-0mbdz1', 'with job-: as it is');
});

t.test('one match is the job; none is left to the daemon; several are listed', async (t) => {
  const a = 'job-0mbdz1c00-1111111111';
  const b = 'job-0mbdz1c99-2222222222';
  t.same(pickJob('0mbdz1c0', [job(a)], false, NOW), { id: a });
  t.same(pickJob('0mbdz1', [], false, NOW), { none: true });
  const both = pickJob('0mbdz1', [job(b, 2), job(a, 3)], false, NOW);
  t.ok('ambiguous' in both);
  const text = 'ambiguous' in both ? both.ambiguous : '';
  t.match(text, /^job id "0mbdz1" is ambiguous: 2 jobs start with job-0mbdz1\n/);
  t.match(text, new RegExp(`^  ${b}\\s+echo-auto\\s+succeeded\\s+2 min ago$`, 'm'));
  t.match(text, new RegExp(`^  ${a}\\s+echo-auto\\s+succeeded\\s+3 min ago$`, 'm'));
  t.notMatch(text, /more/);
});

t.test('a match equal to what was typed wins over longer ones', async (t) => {
  t.same(pickJob('job-1', [job('job-10'), job('job-1')], false, NOW), { id: 'job-1' });
  t.same(pickJob('1', [job('job-12'), job('job-1')], false, NOW), { id: 'job-1' }, 'also without job-');
});

t.test('one match with more behind it is still ambiguous', async (t) => {
  t.ok('ambiguous' in pickJob('0m', [job('job-0m1')], true, NOW));
});

t.test('a long list is cut, saying how many more', async (t) => {
  const many = Array.from({ length: 25 }, (_, i) => job(`job-0mbdz1c${String(i).padStart(2, '0')}-0000000000`));
  const picked = pickJob('0mbdz1c', many, false, NOW);
  const text = 'ambiguous' in picked ? picked.ambiguous : '';
  t.match(text, 'is ambiguous: 25 jobs start with job-0mbdz1c');
  t.equal(text.split('\n').filter((line) => /^ {2}job-/.test(line)).length, MATCHES_SHOWN);
  t.match(text, /\n {2}and 15 more$/);
  const beyond = pickJob('0mbdz1c', many, true, NOW);
  const more = 'ambiguous' in beyond ? beyond.ambiguous : '';
  t.match(more, 'is ambiguous: 25+ jobs start with');
  t.match(more, /\n {2}and 15\+ more$/, 'the daemon had more than it sent');
});
