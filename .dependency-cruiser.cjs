/**
 * The import rules of the code's floor plan (docs/layout.md), checked by `npm run lint:layers`.
 *
 * daemon/ is built in floors, bottom to top; a module may import its own folder and any floor
 * below its own, never one above, and never a folder beside it on the same floor. No module of
 * daemon/, rpc/ or clients/ may be part of an import circle, counting imports of types only.
 */

/** The floors of daemon/, bottom to top; the folders of one floor may not import each other. `.` is the daemon's root (main.ts, api.ts, …). */
const FLOORS = [
  ['model'], // the job model: imports nothing of the daemon
  ['base'], // clock, logger, faults, the configuration and its types
  ['store'], // where jobs, their documents and events are kept
  ['skills', 'slots'], // the skills catalogue; the slot pool
  ['sandbox'], // what an engine's process may see
  ['process', 'network'], // starting, keeping and stopping engine processes; each job's own network
  ['engines'], // each engine's command lines, output and live protocol
  ['jobs'], // the supervisor: every decision that moves a job
  ['cluster', 'notify'], // several daemons on one shared store; webhooks told of jobs' moves
  ['.'], // the composition root and the API
];

/** The path pattern of a folder of daemon/ (its files, at any depth), or of the root's own files. */
function pathOf(folder) {
  return folder === '.' ? '^daemon/[^/]+$' : `^daemon/${folder}/`;
}

function upwardRules() {
  const rules = [];
  FLOORS.forEach((floor, level) => {
    for (const folder of floor) {
      const forbidden = [...floor.filter((other) => other !== folder), ...FLOORS.slice(level + 1).flat()];
      if (forbidden.length === 0) continue;
      const name = folder === '.' ? 'root' : folder;
      rules.push({
        name: `${name}-imports-no-floor-above`,
        comment: `daemon/${folder === '.' ? '' : `${folder}/`} may not import ${forbidden.map((f) => (f === '.' ? 'the daemon root' : `${f}/`)).join(', ')}`,
        severity: 'error',
        from: { path: pathOf(folder) },
        to: { path: forbidden.map(pathOf).join('|') },
      });
    }
  });
  return rules;
}

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'an import circle in daemon/, rpc/ or clients/ (imports of types only count too)',
      severity: 'error',
      from: { path: '^(daemon|rpc|clients)/' },
      to: { circular: true },
    },
    ...upwardRules(),
    {
      name: 'rpc-imports-no-daemon-or-client',
      comment: 'rpc/ is shared by the daemon and its clients and imports neither',
      severity: 'error',
      from: { path: '^rpc/' },
      to: { path: '^(daemon|clients)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Imports of types only are dependencies too: a circle through a type is still a circle.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
