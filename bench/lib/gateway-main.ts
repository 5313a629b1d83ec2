// P14's gateway as a process, as the daemon runs one job's: node gateway-main.js <socket> <upstream
// URL> <token sha256> <key>. The daemon's own egress proxy on the Unix socket, its origin-form
// requests handed to the daemon's model gateway; every proxy request is refused (P14 sends none).
// It runs alone in its process, so that what it costs is measured apart from the bench's client.
// Lines on stdin are questions, each answered with one JSON line: `usage` (what the gateway
// metered of the answers read to the end so far) and `memory` (process.memoryUsage()).
import { createInterface } from 'node:readline';
import { systemClock } from '../../daemon/base/clock.js';
import { listenEgressProxy } from '../../daemon/network/egress-proxy.js';
import { gatewayHandler, openUpstream } from '../../daemon/network/gateway.js';
import { addUsage, NO_USAGE, type Usage } from '../../daemon/model/usage.js';

const [socket, upstreamUrl, hash, key] = process.argv.slice(2);
if (socket === undefined || upstreamUrl === undefined || hash === undefined || key === undefined) {
  process.stderr.write('usage: gateway-main <socket> <upstream URL> <token sha256> <key>\n');
  process.exit(2);
}
let used: Usage = { ...NO_USAGE };
let refused = 0;
const upstream = openUpstream({ upstream: upstreamUrl, api_key_env: 'BENCH_GATEWAY_KEY', retry_max_sec: 120 }, key);
const origin = gatewayHandler(
  upstream,
  hash,
  {
    retrying: () => undefined,
    failed: (failure) => process.stderr.write(`gateway-main: ${failure.code}: ${failure.message}\n`),
    used: (usage) => void usage.then((one) => (used = addUsage(used, one))),
    refused: () => (refused += 1),
  },
  systemClock,
);
const proxy = listenEgressProxy(socket, { decide: async () => ({ refused: 'not_allowed', detail: 'P14 allows no host' }), refused: () => undefined }, { origin });
createInterface({ input: process.stdin }).on('line', (line) => {
  const answer = line === 'usage' ? { ...used, refused } : line === 'memory' ? process.memoryUsage() : { error: `unknown question ${line}` };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
});
process.stdout.write('ready\n');
process.once('SIGTERM', () => {
  upstream.agent.destroy();
  void proxy.close().then(() => process.exit(0));
});
