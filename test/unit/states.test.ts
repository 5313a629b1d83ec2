import t from 'tap';
import { JOB_EVENTS, JOB_STATUSES, TERMINAL_STATUSES, TRANSITIONS, isTerminal, nextStatus, type JobEvent, type JobStatus } from '../../daemon/model/states.js';

// The expected lifecycle, written out independently of the table under test (README, "Job lifecycle"):
// a slot grant starts a queued job (and a restart queues again one whose engine never started);
// a turn decides success, failure or waiting; a reply resumes
// (new process: back to the queue) or continues (live process); cancel works from every
// non-terminal status; a rescued sticky wait stays waiting; terminal statuses never move.
const EXPECTED: Record<JobStatus, Record<JobEvent, JobStatus | null>> = {
  queued: { start: 'running', succeed: null, fail: 'failed', wait: null, resume: null, continue: null, rescue: null, requeue: null, cancel: 'canceled' },
  running: { start: null, succeed: 'succeeded', fail: 'failed', wait: 'waiting_user', resume: null, continue: null, rescue: null, requeue: 'queued', cancel: 'canceled' },
  waiting_user: { start: null, succeed: null, fail: 'failed', wait: null, resume: 'queued', continue: 'running', rescue: 'waiting_user', requeue: null, cancel: 'canceled' },
  succeeded: { start: null, succeed: null, fail: null, wait: null, resume: null, continue: null, rescue: null, requeue: null, cancel: null },
  failed: { start: null, succeed: null, fail: null, wait: null, resume: null, continue: null, rescue: null, requeue: null, cancel: null },
  canceled: { start: null, succeed: null, fail: null, wait: null, resume: null, continue: null, rescue: null, requeue: null, cancel: null },
};

t.test('the statuses and events are exactly the documented ones', async (t) => {
  t.same([...JOB_STATUSES], ['queued', 'running', 'waiting_user', 'succeeded', 'failed', 'canceled']);
  t.same([...JOB_EVENTS].sort(), ['cancel', 'continue', 'fail', 'requeue', 'rescue', 'resume', 'start', 'succeed', 'wait']);
  t.same(Object.keys(TRANSITIONS).sort(), [...JOB_STATUSES].sort(), 'the table has a row for every status');
});

t.test('every (status, event) pair leads where the lifecycle says', async (t) => {
  let pairs = 0;
  for (const status of JOB_STATUSES) {
    for (const event of JOB_EVENTS) {
      pairs += 1;
      t.equal(nextStatus(status, event), EXPECTED[status][event], `${status} --${event}-->`);
    }
  }
  t.equal(pairs, 54, 'six statuses times nine events');
});

t.test('the table holds no moves beyond the expected ones', async (t) => {
  for (const status of JOB_STATUSES) {
    const expectedRow = Object.fromEntries(Object.entries(EXPECTED[status]).filter(([, to]) => to !== null));
    t.same({ ...TRANSITIONS[status] }, expectedRow, `row ${status}`);
  }
});

t.test('terminal statuses have no moves', async (t) => {
  t.same([...TERMINAL_STATUSES].sort(), ['canceled', 'failed', 'succeeded']);
  for (const status of JOB_STATUSES) {
    const terminal = ['succeeded', 'failed', 'canceled'].includes(status);
    t.equal(isTerminal(status), terminal, `isTerminal(${status})`);
    if (terminal) {
      t.same(Object.keys(TRANSITIONS[status]), [], `${status} row is empty`);
      for (const event of JOB_EVENTS) t.equal(nextStatus(status, event), null, `${status} ignores ${event}`);
    }
  }
});

t.test('every non-terminal status can be canceled and can fail', async (t) => {
  for (const status of JOB_STATUSES.filter((s) => !isTerminal(s))) {
    t.equal(nextStatus(status, 'cancel'), 'canceled', `${status} cancel`);
    t.equal(nextStatus(status, 'fail'), 'failed', `${status} fail`);
  }
});

t.test('LC-4 a resumable reply goes back to queued (a slot is acquired before running)', async (t) => {
  t.equal(nextStatus('waiting_user', 'resume'), 'queued');
  t.equal(nextStatus('waiting_user', 'start'), null, 'waiting_user cannot jump to running by a slot grant');
});

t.test('PR-12 a sticky reply continues the live process straight to running', async (t) => {
  t.equal(nextStatus('waiting_user', 'continue'), 'running');
});

t.test('only a running turn can succeed or wait', async (t) => {
  for (const status of JOB_STATUSES) {
    t.equal(nextStatus(status, 'succeed') !== null, status === 'running', `succeed from ${status}`);
    t.equal(nextStatus(status, 'wait') !== null, status === 'running', `wait from ${status}`);
  }
});
