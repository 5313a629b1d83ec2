import type { AllowEntry } from '../base/allow-entry.js';
import type { GatewayConfig, NetworkConfig, NetworkMode } from '../base/config.js';
import { SOCKET_PATH_MAX_BYTES } from '../base/config.js';
import type { Isolation } from '../model/job.js';

/** What `daemon/status` says of jobs' network (docs/network.md). */
export interface NetworkView {
  /** What new jobs get: `isolated`, a network of their own whose one way out is the daemon's proxy; `open`, the host's. */
  mode: NetworkMode;
  /** The config's `network` mode; null: not given. */
  configured: NetworkMode | null;
  /** Why jobs get the host's network, or why none may start; null when they get their own. */
  reason: string | null;
  /** Where every job may connect besides its engine's hosts (the config's `network.allow`). */
  allow: string[];
  skills_may_allow: boolean;
  /** The engines whose model calls go through the daemon's gateway, and the provider each calls. */
  gateways: { engine: string; upstream: string }[];
  /** What leads each job's loopback to the daemon (network-bridge.ts); null where jobs get the host's network. */
  bridge: 'socat' | 'node' | null;
}

/**
 * The longest name a socket in a job's network folder has below the state folder:
 * `/net/<job id>/forward-65535.sock`, a job id being at most 32 bytes.
 */
const SOCKET_TAIL_BYTES = '/net/'.length + 32 + '/forward-65535.sock'.length;

/**
 * Decides what jobs' network is: their own where the sandbox runs and the config does not say
 * `open`. Where it cannot be made (no sandbox, or a state folder whose path leaves no room for a
 * socket's), `isolated` asked for by the config stops every job (`refusal`), as `sandbox:
 * "required"` does, and so does a model gateway; else the default falls back to the host's
 * network, said at start. `bridge` is what leads their loopback out where they get their own
 * (network-bridge.ts); the view names it then.
 */
export function decideNetwork(config: { network: NetworkConfig; state_dir: string; engines?: Readonly<Record<string, { gateway: GatewayConfig | null }>> }, isolation: Isolation, sandboxReason: string | null, bridge: NetworkView['bridge'] = null): { view: NetworkView; refusal: string | null } {
  const { mode, allow, skills_may_allow } = config.network;
  const gateways = Object.entries(config.engines ?? {}).flatMap(([engine, { gateway }]) => (gateway === null ? [] : [{ engine, upstream: gateway.upstream }]));
  const base = { configured: mode, allow: allow.map((entry: AllowEntry) => entry.text), skills_may_allow, gateways, bridge: null };
  if (mode === 'open') return { view: { ...base, mode: 'open', reason: 'the config says so (network: "open")' }, refusal: null };
  const socketBytes = Buffer.byteLength(config.state_dir) + SOCKET_TAIL_BYTES;
  let cannot: string | null = null;
  if (isolation !== 'sandbox') cannot = `jobs run without a sandbox, so without a network of their own (${sandboxReason ?? 'no sandbox'})`;
  else if (socketBytes > SOCKET_PATH_MAX_BYTES) cannot = `the state folder's path is too long for the sockets of a job's network (${socketBytes} bytes; a Unix socket path holds at most ${SOCKET_PATH_MAX_BYTES})`;
  if (cannot === null) return { view: { ...base, mode: 'isolated', reason: null, bridge }, refusal: null };
  if (mode === 'isolated') return { view: { ...base, mode: 'isolated', reason: cannot }, refusal: `the network of its own each job must have (network: "isolated") cannot be made here: ${cannot}` };
  // The gateway is reached through a job's own network alone: without one, its engines would have no key.
  if (gateways.length > 0) return { view: { ...base, mode: 'isolated', reason: cannot }, refusal: `the model gateway (${gateways.map((one) => `engines.${one.engine}.gateway`).join(', ')}) needs each job's own network, which cannot be made here: ${cannot}` };
  return { view: { ...base, mode: 'open', reason: cannot }, refusal: null };
}
