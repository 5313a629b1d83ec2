// What the tests of a job's own network share: a listener that counts who reaches it, the host's
// LAN address, and a finished job's refusals.
import t from 'tap';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import type { RpcClient } from '../../rpc/client.js';
import { replayOf } from './job-events.js';

/** A listener on every address of the host that says `name` to each connection, and counts them; closed at the test's end. */
export async function trapListener(name = 'trap'): Promise<{ port: number; count: () => number }> {
  let count = 0;
  const server = createServer((socket) => {
    count += 1;
    socket.end(`${name}\n`);
  });
  server.listen(0, '0.0.0.0');
  await once(server, 'listening');
  t.teardown(() => server.close());
  return { port: (server.address() as AddressInfo).port, count: () => count };
}

/** The host's first IPv4 address that is not loopback (its LAN address), if it has one. */
export function lanAddress(): string | null {
  for (const addresses of Object.values(networkInterfaces())) for (const one of addresses ?? []) if (one.family === 'IPv4' && !one.internal) return one.address;
  return null;
}

/** A finished job's `network_refused` events' data. */
export async function refusalsOf(client: RpcClient, jobId: string): Promise<Array<{ host: string; port: number; reason: string; detail: string }>> {
  return (await replayOf(client, jobId)).filter((event) => event.type === 'network_refused').map((event) => event.data as { host: string; port: number; reason: string; detail: string });
}
