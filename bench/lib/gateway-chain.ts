import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { Agent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { newGatewayToken, tokenHash } from '../../daemon/network/gateway-token.js';
import { homedir } from 'node:os';
import { descendants, listProcesses } from '../../daemon/process/proc.js';
import { chooseBridge } from '../../daemon/sandbox/open-sandbox.js';
import { BRIDGE_SCRIPT, SOCAT_BRIDGE_SCRIPT } from '../../daemon/sandbox/network-bridge.js';
import { spawnReadyProcess, spawnServerChild, type ServerChild } from './server-child.js';

/**
 * P14's three processes, each alone as in production: the stand-in provider on a port of
 * 127.0.0.1, a job's gateway on a Unix socket (the daemon's proxy and gateway code), and the
 * job's bridge script on another port of 127.0.0.1 leading each connection to that socket. Inside
 * a sandbox the bridge listens in the job's network namespace; on loopback the namespace adds
 * nothing to a connection, so here it runs on the host. The bridge is the one a daemon here
 * chooses (network-bridge.ts): socat where socat and setpriv are installed (run in a PID namespace
 * of its own, bwrap's, so that its socats end with it), else node.
 */
export interface GatewayChain {
  /** The provider's key: what a direct call carries. */
  key: string;
  /** The provider's certificate where it speaks TLS (as every real one does): what a direct call trusts. Null: plain HTTP. */
  ca: Buffer | null;
  /** The job's gateway token: what a call through the bridge carries. */
  token: string;
  upstreamPort: number;
  bridgePort: number;
  upstream: ServerChild;
  gateway: ServerChild;
  bridge: ServerChild;
  bridgeKind: 'socat' | 'node';
  /** The bridge's processes now: node's one, or each socat (the listener and one per open connection). */
  bridgePids(): number[];
  /** The floor: a port of another bridge, whose socket leads to a plain byte relay in the gateway's place (byte-relay-main.ts); calls carry the key. */
  relayPort: number;
  stop(): Promise<void>;
}

/** Holds the bridge's engine's place: it says `ready` once the bridge listens (the bridge starts it only then), and waits for SIGTERM. */
const HOLDER = "process.stdout.write('ready\\n'); setInterval(() => undefined, 2 ** 30);";

export async function startGatewayChain(dir: string, tls: boolean): Promise<GatewayChain> {
  const key = `sk-bench-${newGatewayToken().slice('skilld-'.length)}`;
  const token = newGatewayToken();
  const started: ServerChild[] = [];
  const stop = async (): Promise<void> => {
    for (const child of started.reverse()) await child.stop();
  };
  try {
    const certificate = tls ? selfSigned(dir) : null;
    const upstream = await spawnServerChild(dir, 'model-upstream-main', [key, ...(certificate === null ? [] : [certificate.cert, certificate.key])]);
    started.push(upstream);
    const upstreamPort = saidPort(upstream);
    const socket = join(dir, 'proxy.sock');
    // The gateway trusts the provider's certificate as a daemon trusts a private CA: through Node's NODE_EXTRA_CA_CERTS.
    const trust: Record<string, string> = certificate === null ? {} : { NODE_EXTRA_CA_CERTS: certificate.cert };
    const gateway = await spawnServerChild(dir, 'gateway-main', [socket, `${tls ? 'https' : 'http'}://127.0.0.1:${upstreamPort}`, tokenHash(token), key], trust);
    started.push(gateway);
    const socat = socatBridge();
    const script = join(dir, socat === null ? 'bridge.cjs' : 'bridge.sh');
    await writeFile(script, socat === null ? BRIDGE_SCRIPT : SOCAT_BRIDGE_SCRIPT);
    const bridgeOf = (label: string, port: number, to: string): Promise<ServerChild> => {
      const holder = ['--', process.execPath, '-e', HOLDER];
      if (socat === null) return spawnReadyProcess(dir, label, [script, `127.0.0.1:${port}=${to}`, ...holder]);
      return spawnReadyProcess(dir, label, ['--dev-bind', '/', '/', '--proc', '/proc', '--unshare-pid', '--die-with-parent', '/bin/sh', script, socat.setpriv, socat.socat, `127.0.0.1:${port}=${to}`, ...holder], socat.bwrap);
    };
    const bridgePort = await freePort();
    const bridge = await bridgeOf('the network bridge', bridgePort, socket);
    started.push(bridge);
    const relaySocket = join(dir, 'relay.sock');
    started.push(await spawnServerChild(dir, 'byte-relay-main', [relaySocket, String(upstreamPort)]));
    const relayPort = await freePort();
    started.push(await bridgeOf('the byte relay\'s bridge', relayPort, relaySocket));
    const bridgePids = (): number[] => (socat === null ? [bridge.pid] : descendants(bridge.pid, listProcesses()).map((p) => p.pid).filter((pid) => commandOf(pid) === 'socat'));
    return { key, ca: certificate === null ? null : readFileSync(certificate.cert), token, upstreamPort, bridgePort, upstream, gateway, bridge, bridgeKind: socat === null ? 'node' : 'socat', bridgePids, relayPort, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A certificate for 127.0.0.1 signed by its own key (openssl), as PEM files in `dir`. */
function selfSigned(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'provider.crt');
  const key = join(dir, 'provider.key');
  const subject = ['-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-keyout', key, '-out', cert, ...subject], { stdio: 'ignore' });
  return { cert, key };
}

/** The socat bridge where a daemon here would take it and bwrap is there to give it a PID namespace; else null, the node bridge. */
function socatBridge(): { bwrap: string; setpriv: string; socat: string } | null {
  const chosen = chooseBridge('auto', process.env['PATH'], { places: [], skills: [], home: homedir() });
  const bwrap = ['/usr/bin/bwrap', '/bin/bwrap'].find((path) => existsSync(path));
  return chosen.kind !== 'socat' || bwrap === undefined ? null : { bwrap, setpriv: chosen.setpriv, socat: chosen.program };
}

function commandOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function saidPort(child: ServerChild): number {
  const port = Number(/^port (\d+)$/.exec(child.said.find((line) => line.startsWith('port ')) ?? '')?.[1]);
  if (!Number.isInteger(port) || port <= 0) throw new Error(`no port in what the server said: ${child.said.join(' | ')}`);
  return port;
}

/** A port of 127.0.0.1 free a moment ago: the bridge takes its port from its arguments, as inside a sandbox. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A kept-alive connection's agent for a call with or without TLS. */
export function keptAlive(tls: boolean): Agent {
  return tls ? new HttpsAgent({ keepAlive: true, maxSockets: 1 }) : new Agent({ keepAlive: true, maxSockets: 1 });
}

/** What one model call took and brought. */
export interface CallResult {
  /** From the request's start to its answer's last byte. */
  ms: number;
  bytes: number;
}

export interface CallOptions {
  port: number;
  /** The `x-api-key`: the key straight to the provider, the token through the gateway. */
  apiKey: string;
  /** The request's body. */
  body: Buffer;
  /** The answer's size asked of the provider. */
  answerBytes: number;
  /** false: a new connection for this call alone; an Agent: its kept-alive connection (an HttpsAgent where `ca` is given). */
  agent: Agent | false;
  /** Speak TLS to the port, trusting this certificate: a call straight to a provider that speaks TLS. */
  ca?: Buffer | null;
  /** Told of the bytes received so far, at each chunk. */
  progress?: (received: number) => void;
}

/** How long a call may take before the bench gives up on it: a chain that stops answering fails the benchmark instead of hanging it. */
const CALL_TIMEOUT_MS = 60_000;

/** `POST /v1/messages` as Claude Code sends it; resolves once the whole answer is read, and checks its length. */
export function callModel(options: CallOptions): Promise<CallResult> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const headers = { 'Content-Type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': options.apiKey, 'x-bench-bytes': String(options.answerBytes), 'Content-Length': String(options.body.length) };
    const where = { host: '127.0.0.1', port: options.port, method: 'POST', path: '/v1/messages', headers, agent: options.agent, timeout: CALL_TIMEOUT_MS };
    const ca = options.ca ?? null;
    const outgoing = ca === null ? httpRequest(where) : httpsRequest({ ...where, ca });
    outgoing.once('timeout', () => outgoing.destroy(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)));
    outgoing.once('error', reject);
    outgoing.once('response', (incoming: IncomingMessage) => {
      let bytes = 0;
      incoming.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        options.progress?.(bytes);
      });
      incoming.once('error', reject);
      incoming.once('end', () => {
        const ms = performance.now() - started;
        const declared = Number(incoming.headers['x-bench-body-bytes']);
        if (incoming.statusCode !== 200) reject(new Error(`the call got ${String(incoming.statusCode)}`));
        else if (bytes !== declared) reject(new Error(`the answer was cut: ${bytes} of ${declared} bytes`));
        else resolve({ ms, bytes });
      });
    });
    outgoing.end(options.body);
  });
}

/** A Messages request of about `bytes` bytes: a model, a system prompt and one user message. */
export function requestBody(bytes: number): Buffer {
  const shell = { model: 'claude-bench', max_tokens: 8192, stream: true, system: '', messages: [{ role: 'user', content: 'Read the file and say what it does.' }] };
  const filler = 'You are a coding agent working in a repository; follow the instructions and keep answers short. ';
  const room = Math.max(0, bytes - Buffer.byteLength(JSON.stringify(shell)));
  shell.system = filler.repeat(Math.ceil(room / filler.length)).slice(0, room);
  return Buffer.from(JSON.stringify(shell));
}
