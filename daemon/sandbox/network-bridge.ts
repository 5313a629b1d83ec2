/**
 * The bridge of a job's own network (docs/network.md). A sandbox with a network namespace of its
 * own has loopback alone: no route out. The bridge is the engine's parent inside it: it listens on
 * loopback addresses (the proxy's port, and each forwarded port of the host's loopback), and
 * leads each connection to a Unix socket of the daemon's in the job's network folder, shown
 * read-only inside. Then it starts the engine, hands it its standard streams as they are, passes
 * on the signals a stop sends, and ends as the engine ended.
 *
 * It is a script for the node the daemon runs on, given to the sandbox as a file the daemon
 * makes (`--ro-bind-data`), so that nothing of the daemon's installation needs to be shown. It
 * connects to a socket anew for each connection: a daemon that restarts listens again at the
 * same path, and a job that outlived it keeps its way out.
 */

/** Where the job's network folder is shown inside. */
export const NETWORK_DIR = '/run/skilld/net';
/** Where the bridge's script is, inside. */
export const BRIDGE_SCRIPT_PATH = '/run/skilld/bridge.cjs';
/** The exit code of a bridge that could not listen or start the engine: the sandbox could not be made. */
export const BRIDGE_FAILED = 125;

/** One address the bridge listens on inside, and the socket (a file of the network folder) it leads to. */
export interface BridgeListener {
  host: string;
  port: number;
  socket: string;
}

/** The bridge's arguments before the engine's command: `host:port=socket` each, then `--`. */
export function bridgeArgs(listeners: readonly BridgeListener[]): string[] {
  return [...listeners.map((one) => `${one.host.includes(':') ? `[${one.host}]` : one.host}:${one.port}=${NETWORK_DIR}/${one.socket}`), '--'];
}

/** The bridge's script (CommonJS, for any node from 18 on); see the module's comment. */
export const BRIDGE_SCRIPT = String.raw`'use strict';
const net = require('node:net');
const { spawn } = require('node:child_process');
const args = process.argv.slice(2);
const split = args.indexOf('--');
const specs = args.slice(0, split);
const command = args.slice(split + 1);
const fail = (text) => {
  process.stderr.write('skilld network bridge: ' + text + '\n');
  process.exit(${BRIDGE_FAILED});
};
if (split < 0 || command.length === 0) fail('usage: bridge.cjs host:port=socket... -- command...');
let waiting = specs.length;
const ready = () => {
  waiting -= 1;
  if (waiting === 0) start();
};
for (const spec of specs) {
  const match = /^\[?([^\]]+?)\]?:(\d+)=(.+)$/.exec(spec);
  if (match === null) fail('not host:port=socket: ' + spec);
  const [, host, port, socket] = match;
  // No Nagle: an answer written in pieces would wait for the engine's delayed ACK (~40 ms) on a kept-alive connection.
  const server = net.createServer({ noDelay: true }, (inside) => {
    const out = net.connect(socket);
    inside.on('error', () => out.destroy());
    out.on('error', () => inside.destroy());
    inside.pipe(out).pipe(inside);
  });
  server.on('error', (error) => fail('cannot listen on ' + host + ':' + port + ': ' + error.message));
  server.listen({ host, port: Number(port), exclusive: true }, ready);
}
function start() {
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2'];
  for (const signal of signals) process.on(signal, () => child.kill(signal));
  child.on('error', (error) => fail('cannot start ' + command[0] + ': ' + error.message));
  child.on('exit', (code, signal) => {
    if (signal === null) process.exit(code ?? 1);
    for (const one of signals) process.removeAllListeners(one);
    process.kill(process.pid, signal);
  });
}
if (specs.length === 0) start();
`;
