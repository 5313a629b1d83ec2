// `skillctl notify log` as people read it: one row per try, the answer, and what comes next.
import t from 'tap';
import { attemptTable, type NotifyAttemptView } from '../../clients/notify-command.js';

const now = Date.parse('2026-11-23T15:10:00.000Z');
const base = { delivery_id: '6f1c2a3e-0000-4000-8000-000000000001', url: 'https://hooks.example.com/skilld', event: 'waiting_user', job_id: 'job-0cd5c5e5a8-0mwteh5lt' };

t.test('each try: its age, event, job, number, answer, what comes next (retried when a later row is that try), the delivery id and the URL; oldest first', async (t) => {
  const attempts: NotifyAttemptView[] = [
    { ...base, attempt: 1, at: '2026-11-23T15:07:00.000Z', status: 500, error: null, next_at: '2026-11-23T15:07:00.800Z', outcome: 'retrying' },
    { ...base, attempt: 2, at: '2026-11-23T15:07:01.000Z', status: 302, error: null, next_at: '2026-11-23T15:10:30.000Z', outcome: 'retrying' },
    { ...base, attempt: 3, at: '2026-11-23T15:09:00.000Z', status: null, error: 'connect ECONNREFUSED 127.0.0.1:9000', next_at: null, outcome: 'given_up' },
    { ...base, delivery_id: 'd-2', event: 'succeeded', attempt: 1, at: '2026-11-23T15:09:59.500Z', status: 204, error: null, next_at: null, outcome: 'delivered' },
  ];
  const lines = attemptTable(attempts, now).split('\n');
  t.match(lines[0], /^WHEN +EVENT +JOB +TRY +ANSWER +NEXT +DELIVERY +URL$/);
  t.match(lines[1], /^3 min ago +waiting_user +job-0cd5c5e5a8-0mwteh5lt +1 +HTTP 500 +retried +6f1c2a3e-\S+ +https:\/\/hooks\.example\.com\/skilld$/);
  t.match(lines[2], /HTTP 302 \(redirect, not followed\) +retried /);
  t.match(lines[3], / 3 +connect ECONNREFUSED 127\.0\.0\.1:9000 +given up /);
  t.match(lines[4], /^just now +succeeded +.* 1 +HTTP 204 +delivered +d-2 /);
  const waiting = attemptTable([{ ...base, attempt: 4, at: '2026-11-23T15:09:00.000Z', status: 503, error: null, next_at: '2026-11-23T15:10:30.000Z', outcome: 'retrying' }], now);
  t.match(waiting.split('\n')[1], / 4 +HTTP 503 +retry in 30s /);
  const due = attemptTable([{ ...base, attempt: 4, at: '2026-11-23T15:09:00.000Z', status: 503, error: null, next_at: '2026-11-23T15:09:30.000Z', outcome: 'retrying' }], now);
  t.match(due.split('\n')[1], / 4 +HTTP 503 +retry due /, 'its time has passed and no try shows yet');
});

t.test('an error a receiver made up is shown, never obeyed, on a terminal', async (t) => {
  const table = attemptTable([{ ...base, attempt: 1, at: '2026-11-23T15:09:00.000Z', status: null, error: 'bad\u001b[2Jthing', next_at: null, outcome: 'given_up' }], now);
  t.notMatch(table, /\u001b/);
  t.match(table, /bad\\x1b\[2Jthing/);
});
