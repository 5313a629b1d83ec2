import { PROTOCOL_VERSION } from '../rpc/protocol-version.js';
import { DaemonUnreachableError, RpcClient } from '../rpc/client.js';
import { stringOpt, UsageError } from './args.js';
import { EXIT } from './exit-codes.js';
import { socketPath } from './socket-path.js';
import { arg, type Command, type Context } from './command.js';
import { cell, json, keyValues, table } from './format.js';
import { durationText } from './time-text.js';
import { clientVersion } from './version.js';
import { terminalText } from './terminal-text.js';
import { canRun, type EngineView, type HostView, type StatusView } from './wire.js';

/** `status`: daemon/status. */
export const statusCommand: Command = {
  name: 'status',
  usage: 'status',
  summary: 'show the daemon: version, uptime, its config file and folders, each engine and whether it can run, slots, jobs, skills, sandbox, network, limits',
  options: {},
  positionals: [0, 0],
  examples: ['status', 'status --json  # daemon/status as it is (without the engines: skillctl engines --json)'],
  run: async (ctx) => {
    const status = await ctx.client.request<StatusView>('daemon/status');
    if (ctx.json) ctx.print(json(status));
    else ctx.print((await import('./status-text.js')).statusText(status, (await ctx.client.request<{ engines: EngineView[] }>('engines/list')).engines, Date.now()));
    return 0;
  },
};

/** `version`: this client's version and protocol, and the daemon's (daemon/ping), as `docker version`. */
export const versionCommand: Command = {
  name: 'version',
  usage: 'version',
  summary: "show skillctl's version and the daemon's, with the protocol each speaks (--version: skillctl's alone, without the daemon)",
  options: {},
  positionals: [0, 0],
  examples: ['version', 'version --json'],
  details: ['Without a daemon to ask, the client\'s line is printed (--json: "daemon": null), the reason on stderr, and the command exits 3.'],
  // It connects by itself: the client's version is shown even when no daemon answers.
  offline: true,
  run: async (ctx, inv) => {
    const client = { version: clientVersion(), protocol: PROTOCOL_VERSION };
    const socket = socketPath(stringOpt(inv.values, 'socket'));
    const daemon = await RpcClient.connect(socket)
      .then(async (rpc) => {
        try {
          return await rpc.request<{ version: string; protocol?: number }>('daemon/ping');
        } finally {
          rpc.close();
        }
      })
      .catch((error: unknown) => (error instanceof DaemonUnreachableError ? error : Promise.reject(error)));
    if (daemon instanceof DaemonUnreachableError) {
      ctx.print(ctx.json ? json({ client, daemon: null }) : versionText(client, null));
      ctx.warn(`skillctl: cannot reach the daemon at ${socket}: ${daemon.cause instanceof Error ? daemon.cause.message : daemon.message}`);
      return EXIT.unreachable;
    }
    // A daemon older than the field speaks protocol 1.
    const answer = { client, daemon: { version: daemon.version, protocol: daemon.protocol ?? 1 } };
    ctx.print(ctx.json ? json(answer) : versionText(client, answer.daemon));
    if (answer.daemon.protocol !== client.protocol) ctx.warn(`skillctl: this client speaks protocol ${client.protocol}, the daemon ${answer.daemon.protocol}: use a skillctl of the daemon's version`);
    return 0;
  },
};

type Versions = { version: string; protocol: number };

function versionText(client: Versions, daemon: Versions | null): string {
  const pairs: Array<[string, string]> = [['client', `skillctl ${client.version}, protocol ${client.protocol}`]];
  if (daemon !== null) pairs.push(['daemon', `skilld ${daemon.version}, protocol ${daemon.protocol}`]);
  return keyValues(pairs);
}

/** `daemon stop [--jobs]`: daemon/stop. */
export const daemonCommand: Command = {
  name: 'daemon',
  usage: 'daemon stop [--jobs]',
  summary: 'stop the daemon; running and waiting jobs go on and are taken up at its next start, unless --jobs stops them too',
  options: {
    jobs: { type: 'boolean', description: "stop every job's engine process as well (maintenance); their jobs are settled at the next start" },
  },
  positionals: [1, 1],
  argChoices: ['stop'],
  examples: ['daemon stop', 'daemon stop --jobs'],
  run: async (ctx, inv) => {
    if (arg(inv, 0) !== 'stop') throw new UsageError('usage: skillctl daemon stop [--jobs]');
    const params = inv.values['jobs'] === true ? { engines: 'stop' } : {};
    const answer = await ctx.client.request<{ stopping: boolean; engines: string }>('daemon/stop', params);
    ctx.print(ctx.json ? json(answer) : answer.engines === 'stop' ? 'stopping the daemon and every engine process' : 'stopping the daemon; engine processes go on');
    return 0;
  },
};

/** `engines`: engines/list. */
export const enginesCommand: Command = {
  name: 'engines',
  usage: 'engines',
  summary: 'list the engines, whether a job of each can run here (and why not), their version and interactive profile',
  options: {},
  positionals: [0, 0],
  examples: ['engines', 'engines --json'],
  run: async (ctx) => {
    const answer = await ctx.client.request<{ engines: EngineView[] }>('engines/list');
    const rows = answer.engines.map((e) => [e.name, canRun(e) ? 'yes' : 'no', cell(e.version), e.interactive_profile?.kind ?? '-', e.command.join(' '), cell(e.reason ?? null)]);
    return listed(ctx, answer, ['NAME', 'AVAILABLE', 'VERSION', 'PROFILE', 'COMMAND', 'WHY NOT'], rows);
  },
};

/** `hosts`: daemon/hosts. */
export const hostsCommand: Command = {
  name: 'hosts',
  usage: 'hosts',
  summary: "list the daemons that share this daemon's store (a cluster's hosts): state, lease, slots, the jobs each holds",
  options: {},
  positionals: [0, 0],
  examples: ['hosts', 'hosts --json'],
  run: async (ctx) => {
    const answer = await ctx.client.request<{ hosts: HostView[] }>('daemon/hosts');
    const rows = answer.hosts.map((h) => [cell(h.host_id), h.state, h.lease_until === null ? '-' : durationText(Date.parse(h.lease_until) - Date.now()), cell(h.version), String(h.max_concurrent), `${h.jobs.running} running, ${h.jobs.waiting_user} waiting, ${h.jobs.queued} queued`]);
    return listed(ctx, answer, ['HOST', 'STATE', 'LEASE LEFT', 'VERSION', 'SLOTS', 'JOBS'], rows);
  },
};

/** A list answer: with --json as it came, else as a table of `rows`. */
function listed(ctx: Context, answer: unknown, headers: string[], rows: string[][]): number {
  ctx.print(ctx.json ? json(answer) : table(headers, rows));
  return 0;
}
