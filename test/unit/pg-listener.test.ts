// The connection that hears other hosts' announcements: opened again after PostgreSQL restarts,
// with `onConnected` run each time so that what was announced meanwhile can be caught up.
import t from 'tap';
import pg from 'pg';
import type { Clock } from '../../daemon/base/clock.js';
import { createLogger } from '../../daemon/base/logger.js';
import { Listener } from '../../daemon/store/pg/listener.js';
import { testPostgres } from '../helpers/daemon.js';
import type { ThrowawayPostgres } from '../fixtures/throwaway-postgres.js';

const started = await testPostgres();
const skip = typeof started === 'string' ? started : false;
const postgres = started as ThrowawayPostgres;
if (typeof started !== 'string') t.teardown(() => postgres.stop());

const clock: Clock = { now: () => new Date(), setTimer: (ms, callback) => {
  const handle = setTimeout(callback, ms);
  return { cancel: () => clearTimeout(handle) };
} };

async function notify(url: string, channel: string, payload: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
  await client.end();
}

t.test('hears its channels, comes back after a server restart, and says when it is connected', { skip }, async (t) => {
  const url = await postgres.createDatabase('listen');
  const heard: string[] = [];
  let connections = 0;
  let onHeard: () => void = () => undefined;
  let onConnected: () => void = () => undefined;
  const listener = new Listener(url, clock, createLogger('silent'), new Map([['skilld_test', (payload: string) => {
    heard.push(payload);
    onHeard();
  }]]), () => {
    connections += 1;
    onConnected();
  });
  t.teardown(() => listener.close());
  await listener.start();
  t.equal(connections, 1);
  const first = new Promise<void>((resolve) => (onHeard = resolve));
  await notify(url, 'skilld_test', 'one');
  await notify(url, 'other_channel', 'not for it');
  await first;
  t.same(heard, ['one']);

  const back = new Promise<void>((resolve) => (onConnected = resolve));
  await postgres.crash();
  await postgres.restart();
  await back;
  t.equal(connections, 2, 'connected again, and said so');
  const second = new Promise<void>((resolve) => (onHeard = resolve));
  await notify(url, 'skilld_test', 'two');
  await second;
  t.same(heard, ['one', 'two'], 'listening again on the new connection');
});

t.test('a server that cannot be reached at start is the caller\'s error; close stops the retries', { skip }, async (t) => {
  const listener = new Listener('postgres://skilld@%2Fnonexistent-socket-dir/none', clock, createLogger('silent'), new Map([['skilld_test', () => undefined]]), () => undefined);
  await t.rejects(listener.start());
  await listener.close();
});
