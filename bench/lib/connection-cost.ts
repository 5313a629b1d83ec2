import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { hostUsers } from '../../daemon/base/users.js';
import { peerCredentials } from '../../rpc/peer-credentials.js';

/**
 * What the daemon does for each connection before any request, measured in this process on the
 * real code: reading the peer's credentials (`peerCredentials`, one getsockopt through koffi, at
 * every accept) and looking the uid up (`hostUsers().byUid`, at a connection's first request
 * unless the 60 s cache holds the answer). The cost of setting up the connection itself (connect
 * and accept over the same Unix socket) is measured beside them, as the context of the first.
 */

export interface PeerCost {
  /** One `peerCredentials(socket)` on an accepted socket, µs. */
  call: number[];
  /** `createConnection` until both ends have it (client `connect`, server `connection`), µs. */
  connect: number[];
  /** The credentials of the last connection: this process's own, or the measurement is wrong. */
  last: { pid: number; uid: number } | null;
}

/**
 * `count` connections to a server of this process, one after the other, after `warm` untimed
 * ones; each is closed once measured. `loadPeerCredentials()` must have been called.
 */
export async function measurePeerCredentials(dir: string, count: number, warm: number): Promise<PeerCost> {
  const path = join(dir, 'peer.sock');
  const accepted: Socket[] = [];
  let wake: (() => void) | null = null;
  const server = createServer((socket) => {
    accepted.push(socket);
    wake?.();
  });
  server.listen(path);
  await once(server, 'listening');
  const cost: PeerCost = { call: [], connect: [], last: null };
  try {
    for (let i = 0; i < warm + count; i += 1) {
      const serverSide = accepted.length > 0 ? Promise.resolve() : new Promise<void>((resolve) => (wake = resolve));
      const t0 = performance.now();
      const client = createConnection(path);
      await Promise.all([once(client, 'connect'), serverSide]);
      const t1 = performance.now();
      wake = null;
      const socket = accepted.shift() as Socket;
      const t2 = performance.now();
      const peer = peerCredentials(socket);
      const t3 = performance.now();
      if (peer === null) throw new Error('peerCredentials answered null on an accepted Unix socket');
      if (i >= warm) {
        cost.connect.push((t1 - t0) * 1000);
        cost.call.push((t3 - t2) * 1000);
      }
      cost.last = { pid: peer.pid, uid: peer.uid };
      client.destroy();
      socket.destroy();
    }
  } finally {
    server.close();
  }
  return cost;
}

/**
 * `count` lookups of `uid` as the daemon makes them, none answered by the cache (its clock is
 * moved on by more than the cache's 60 s before each): the user's entry, then its groups. µs each.
 */
export async function measureUserLookup(uid: number, count: number): Promise<{ lookup: number[]; name: string | null; groups: number }> {
  let clock = 0;
  const users = await hostUsers(() => clock);
  const lookup: number[] = [];
  let found = users.byUid(uid);
  for (let i = 0; i < count; i += 1) {
    clock += 61_000;
    const t0 = performance.now();
    found = users.byUid(uid);
    lookup.push((performance.now() - t0) * 1000);
  }
  return { lookup, name: found?.name ?? null, groups: found?.groups.length ?? 0 };
}
