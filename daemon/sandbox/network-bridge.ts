/**
 * The bridge of a job's own network (docs/network.md). A sandbox with a network namespace of its
 * own has loopback alone: no route out. The bridge runs first inside it: it listens on loopback
 * addresses (the proxy's port, and each forwarded port of the host's loopback), leads each
 * connection to a Unix socket of the daemon's in the job's network folder, shown read-only inside,
 * and starts the engine once every address listens. It connects to a socket anew for each
 * connection: a daemon that restarts listens again at the same path, and a job that outlived it
 * keeps its way out. Two bridges do this, each a script the daemon gives the sandbox as a file
 * (`--ro-bind-data`), so that nothing of the daemon's installation needs to be shown:
 *
 * - `socat`, where the host has it and `setpriv` among the system's programs (shown to every
 *   sandbox anyway): a shell script starts a socat per address, waits until the namespace's table
 *   of sockets shows each listening, and then is replaced by the engine (`exec`). It is ready in
 *   ~5 ms, and each socat keeps ~3 MiB of its own. Each is the engine's child and gets SIGKILL as
 *   the engine ends (`setpriv --pdeathsig`), so that nothing is left to stop after it.
 * - `node`, the node the daemon runs on, elsewhere: the engine's parent, which passes on the
 *   signals a stop sends and ends as the engine ended. Node's start takes ~45 ms, and it keeps
 *   ~6 MiB of its own (~40 MiB resident, node's pages shared) for the job's life.
 */

/** What leads a job's loopback to the daemon's sockets (see above), by its real path; `shown`: the folders a node outside the system's needs. */
export type Bridge = { kind: 'socat'; program: string; setpriv: string } | { kind: 'node'; program: string; shown: readonly string[] };

/** Where the job's network folder is shown inside. */
export const NETWORK_DIR = '/run/skilld/net';
/** Where the node bridge's script is, inside. */
export const BRIDGE_SCRIPT_PATH = '/run/skilld/bridge.cjs';
/** Where the socat bridge's script is, inside. */
export const SOCAT_BRIDGE_SCRIPT_PATH = '/run/skilld/bridge.sh';
/** The exit code of a bridge that could not listen or start the engine: the sandbox could not be made. */
export const BRIDGE_FAILED = 125;

/** One address the bridge listens on inside, and the socket (a file of the network folder) it leads to. */
export interface BridgeListener {
  host: string;
  port: number;
  socket: string;
}

/** The bridge's arguments before the engine's command (after setpriv's and socat's paths for that bridge): `host:port=socket` each, then `--`. */
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

/**
 * The socat bridge's script (POSIX sh; see the module's comment): its first arguments are
 * setpriv's and socat's paths, then the listeners and the engine's command as for the node
 * bridge. Each socat forks a process per connection, which connects to the daemon's socket;
 * TCP_NODELAY on the listener is inherited by each connection it accepts. Nothing of socat's own
 * output reaches the engine's. The listeners' hosts are addresses the daemon wrote (loopback
 * entries are IP literals): nothing in them is read as a socat option.
 */
export const SOCAT_BRIDGE_SCRIPT = `started=""
fail() {
  for one in $started; do kill -KILL "\${one%%:*}" 2>/dev/null; done
  printf 'skilld network bridge: %s\\n' "$1" >&2
  exit ${BRIDGE_FAILED}
}
[ "$#" -ge 2 ] || fail 'usage: bridge.sh setpriv socat host:port=socket... -- command...'
setpriv=$1; socat=$2; shift 2
# Whether the namespace's table of sockets shows a listener on the port $1 (4 hex digits).
listening() {
  for table in /proc/net/tcp /proc/net/tcp6; do
    [ -r "$table" ] || continue
    while read -r _ local _ state _; do
      case "$local $state" in *:"$1 0A") return 0 ;; esac
    done < "$table"
  done
  return 1
}
# Every listener and the command checked before anything starts (paths and hosts hold no space).
specs=""
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in *" "*) fail "not host:port=socket: $1" ;; esac
  port=\${1%%=*}; port=\${port##*:}
  case $1 in *?:*=?*) ;; *) fail "not host:port=socket: $1" ;; esac
  case $port in ""|*[!0-9]*) fail "not host:port=socket: $1" ;; esac
  specs="$specs $1"; shift
done
[ "$#" -ge 2 ] || fail 'usage: bridge.sh setpriv socat host:port=socket... -- command...'
shift
command -v "$1" >/dev/null || fail "cannot start $1: not found"
for spec in $specs; do
  socket=\${spec#*=}; address=\${spec%%=*}; port=\${address##*:}; host=\${address%:*}
  case $host in
    "["*"]") host=\${host#"["}; host=\${host%"]"}; listen=TCP6-LISTEN ;;
    *) listen=TCP4-LISTEN ;;
  esac
  "$setpriv" --pdeathsig KILL -- "$socat" -b 131072 "$listen:$port,bind=$host,fork,reuseaddr,nodelay" "UNIX-CONNECT:$socket" </dev/null >/dev/null 2>&1 &
  started="$started $!:$(printf '%04X' "$port")"
done
for one in $started; do
  until listening "\${one#*:}"; do
    kill -0 "\${one%%:*}" 2>/dev/null || fail "cannot listen on port $((0x\${one#*:}))"
  done
done
exec "$@"
`;

/** The bridge's script as the sandbox is given it: where, and its text. */
export function bridgeScript(bridge: Bridge): { path: string; text: string } {
  return bridge.kind === 'socat' ? { path: SOCAT_BRIDGE_SCRIPT_PATH, text: SOCAT_BRIDGE_SCRIPT } : { path: BRIDGE_SCRIPT_PATH, text: BRIDGE_SCRIPT };
}

/** The bridge's command line in front of the engine's. */
export function bridgeCommand(bridge: Bridge, listeners: readonly BridgeListener[]): string[] {
  return bridge.kind === 'socat' ? ['/bin/sh', SOCAT_BRIDGE_SCRIPT_PATH, bridge.setpriv, bridge.program, ...bridgeArgs(listeners)] : [bridge.program, BRIDGE_SCRIPT_PATH, ...bridgeArgs(listeners)];
}
