import t from 'tap';
import { agoOf, agoText, durationText, jobDuration } from '../../clients/time-text.js';

const NOW = Date.parse('2025-06-01T12:00:00.000Z');
const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

t.test('durations: the two largest units, zero-padded after the first', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '<1s'],
    [999, '<1s'],
    [1000, '1s'],
    [4_400, '4s'],
    [59_999, '59s'],
    [60_000, '1m00s'],
    [2 * M + 5 * S, '2m05s'],
    [59 * M + 59 * S, '59m59s'],
    [H, '1h00m'],
    [H + 2 * M + 59 * S, '1h02m'],
    [23 * H + 59 * M, '23h59m'],
    [D, '1d00h'],
    [3 * D + 4 * H + 30 * M, '3d04h'],
    [400 * D, '400d00h'],
  ];
  for (const [ms, text] of cases) t.equal(durationText(ms), text, `${ms} ms`);
  t.equal(durationText(-1), '-', 'a negative duration (clock skew) is unknown');
  t.equal(durationText(Number.NaN), '-');
});

t.test('ages: seconds, minutes, hours, days, then months and years', async (t) => {
  const cases: Array<[number, string]> = [
    [0, 'just now'],
    [-5 * S, 'just now'],
    [999, 'just now'],
    [12 * S, '12s ago'],
    [59 * S, '59s ago'],
    [M, '1 min ago'],
    [3 * M + 59 * S, '3 min ago'],
    [59 * M, '59 min ago'],
    [2 * H, '2 h ago'],
    [23 * H + 59 * M, '23 h ago'],
    [D, '1 day ago'],
    [5 * D + 3 * H, '5 days ago'],
    [59 * D, '59 days ago'],
    [60 * D, '2 months ago'],
    [729 * D, '24 months ago'],
    [730 * D, '2 years ago'],
  ];
  for (const [ms, text] of cases) t.equal(agoText(NOW - ms, NOW), text, `${ms} ms ago`);
  t.equal(agoOf(new Date(NOW - 3 * M).toISOString(), NOW), '3 min ago');
  t.equal(agoOf(null, NOW), '-');
  t.equal(agoOf('not a time', NOW), 'not a time', 'what is not a time is shown as it is');
});

t.test('a job runs from started_at to finished_at; so far while it goes on; - when it never started', async (t) => {
  const at = (ms: number): string => new Date(NOW - ms).toISOString();
  t.equal(jobDuration({ status: 'succeeded', started_at: at(3 * M), finished_at: at(M - 5 * S) }, NOW), '2m05s');
  t.equal(jobDuration({ status: 'running', started_at: at(4 * S), finished_at: null }, NOW), '4s');
  t.equal(jobDuration({ status: 'waiting_user', started_at: at(2 * H + 3 * M), finished_at: null }, NOW), '2h03m', 'a waiting job is not over');
  t.equal(jobDuration({ status: 'queued', started_at: null, finished_at: null }, NOW), '-');
  t.equal(jobDuration({ status: 'canceled', started_at: null, finished_at: at(0) }, NOW), '-', 'canceled while queued: never started');
  t.equal(jobDuration({ status: 'failed', started_at: at(10 * S), finished_at: null, updated_at: at(7 * S) }, NOW), '3s', 'a finished job without finished_at ends at its last update');
});
