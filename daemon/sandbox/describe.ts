import type { Mount, SandboxPlan } from './plan.js';

/**
 * A sandbox plan as the table docs/sandbox.md shows: each path and what the engine sees of it,
 * in the order the sandbox is built; nothing else is there.
 */
export function describePlan(plan: SandboxPlan): string {
  const rows: Array<[string, string]> = [
    ['/', 'an empty folder in memory, read-only once the sandbox is built'],
    ['/dev', 'a few devices of its own (`null`, `zero`, `random`, `urandom`, `tty`, …)'],
    ['/proc', 'its own processes alone; `/proc/sys` read-only'],
    ...plan.mounts.map((mount): [string, string] => [mount.path, describeMount(mount)]),
  ];
  const who = plan.runAs === null ? "the daemon's own user, in a user namespace of its own, with no capabilities" : `${plan.runAs.user} (uid ${plan.runAs.uid}, gid ${plan.runAs.gid}), with no capabilities`;
  return [
    '| path | what the engine sees |',
    '|---|---|',
    ...rows.map(([path, what]) => `| \`${path}\` | ${what} |`),
    '',
    `The engine runs as ${who}, in \`${plan.cwd}\`${plan.program === null ? '' : `, started as \`${plan.program}\``}.`,
    '',
    networkText(plan.network),
  ].join('\n');
}

function networkText(network: SandboxPlan['network']): string {
  if (network === null) return "Its network is the host's.";
  const listeners = network.listeners.map((one) => `\`${one.host}:${one.port}\` (\`${one.socket}\`)`);
  const bridge = network.bridge.kind === 'socat' ? `a socat (\`${network.bridge.program}\`) for each address, started before the engine and ended with it,` : `run by \`${network.bridge.program}\`, is its parent there and`;
  return `Its network is its own, loopback alone; the bridge, ${bridge} leads ${listeners.join(', ')} to the daemon's sockets.`;
}

function describeMount(mount: Mount): string {
  switch (mount.kind) {
    case 'bind':
    case 'copy':
      return `${mount.access === 'read_only' ? 'read-only' : 'read and written'}: ${mount.what}`;
    case 'text':
      return `read-only, ${mount.what}`;
    case 'link':
      return `a link to \`${mount.target}\`, as on the host`;
    case 'tmpfs':
      return `read and written: ${mount.what}`;
  }
}
