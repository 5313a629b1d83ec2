#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { RpcClient } from '../rpc/client.js';
import { Cleanup } from './cleanup.js';
import { demoModel } from './conversation/script.js';
import { logTail } from '../clients/skill-test/private-daemon.js';
import { codexVersion, SKILLCTL_BIN } from './paths.js';
import { DemoError, startRig, type Rig } from './rig.js';
import { heading, say } from './say.js';
import { Skillctl } from './skillctl.js';
import { Interrupted, walkthrough } from './walkthrough.js';

const USAGE = `usage: npm run demo [-- --yes] [-- --keep]

Starts skilld on a private socket with the real Codex CLI (the pinned dev dependency) pointed at a
scripted model on 127.0.0.1, runs one auto and one interactive job with skillctl, and removes
everything it started. No API key; nothing leaves this machine.

  -y, --yes   answer the interactive run's questions automatically (as when stdin is not a terminal)
  -k, --keep  afterwards, keep the daemon, the Codex CLI and the model server running, and print the
              commands to go on with from another terminal; Ctrl-C stops them and removes everything
  -h, --help  show this text`;

/** Exit codes after a signal: 128 + its number, as shells report it. */
const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

const cleanup = new Cleanup();
let ctl: Skillctl | null = null;
let rig: Rig | null = null;
let signalled = false;
/** The demo keeps running after its walk-through (--keep): a signal is then how it is meant to end. */
let kept = false;

/** Runs the demo; resolves to the exit code (a signal exits from its handler instead). */
async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: { yes: { type: 'boolean', short: 'y' }, keep: { type: 'boolean', short: 'k' }, help: { type: 'boolean', short: 'h' } }, strict: true }));
  } catch (error) {
    process.stderr.write(`demo: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help === true) {
    say(USAGE);
    return 0;
  }
  const terminal = values.yes !== true && process.stdin.isTTY === true && process.stdout.isTTY === true;
  say(`skilld demo: the real daemon and the real Codex CLI ${codexVersion()} (the pinned dev dependency) against a`, 'scripted model server on 127.0.0.1. No API key; nothing leaves this machine.');
  rig = await startRig(demoModel, (stop) => cleanup.add(stop));
  const { daemon, server, dir } = rig;
  say(
    '',
    `  model server  ${server.url} (its answers: demo/conversation/, one script per bundled skill)`,
    `  skilld        pid ${daemon.pid}, socket ${daemon.socket}`,
    `  folder        ${dir} (state, Codex home, daemon log; removed at the end)`,
    '',
    `skillctl is dist/clients/skillctl.js, run with SKILLD_SOCKET=${daemon.socket}`,
    '(npm link puts skilld and skillctl on your PATH).',
  );
  const client = await RpcClient.connect(daemon.socket);
  cleanup.add(async () => client.close());
  ctl = new Skillctl(daemon.socket);
  const jobs = await walkthrough({ ctl, client, terminal });
  recap(ctl.ran, jobs, terminal);
  if (values.keep !== true) return 0;
  keepRunning(rig);
  kept = true;
  // Until Ctrl-C (or SIGTERM): the signal handler stops everything and exits.
  return new Promise<number>(() => undefined);
}

/** What to type in another terminal while the demo keeps its daemon and model server running. */
function keepRunning(kept: Rig): void {
  heading('Kept running');
  say(
    `skilld (pid ${kept.daemon.pid}), the real Codex CLI and the scripted model server (${kept.server.url}) keep running.`,
    'In another terminal, in this folder:',
    '',
    `  export SKILLD_SOCKET=${kept.daemon.socket}`,
    `  alias skillctl='node ${SKILLCTL_BIN}'   # or npm link: skillctl on your PATH`,
    '  skillctl skills                     # the bundled skills the scripted model knows',
    "  skillctl run summarize-text --engine codex --input text='Write your own text here.' --wait",
    '  skillctl run plan-trip --engine codex --mode interactive --input destination=Porto',
    '                                      # on a terminal it asks here; elsewhere: skillctl pending <job>, reply <job> <answer>',
    '  skillctl jobs                       # every job of this daemon; show, logs, history <job> for one',
    '  skillctl watch                      # every event as it happens',
    '',
    `The daemon's log: ${kept.daemon.logFile}.`,
    'Press Ctrl-C here to stop them and remove everything.',
  );
}

/** The commands run, with `<job>` for the ids, and where to go for a real model. */
function recap(lines: readonly string[], jobIds: readonly string[], terminal: boolean): void {
  heading('Recap');
  say('The commands above, to repeat against your own daemon (npm start; <job> is the id that run printed):', '');
  for (const line of lines) say(`  ${jobIds.reduce((text, id) => text.replaceAll(id, '<job>'), line)}`);
  if (!terminal) say('', 'On a terminal, the plan-trip run without --wait asks each question at its own prompt.');
  say(
    '',
    'A real model instead of the script: configure the engine for its provider (Codex: a config.toml in CODEX_HOME and',
    'the API key in engines.codex.env): docs/engines.md, "Pointing a real install at a model provider".',
  );
}

let finishing: Promise<number> | null = null;

/** Stops everything, says so, and gives the exit code back; once, whoever asks first. */
function finish(code: number): Promise<number> {
  finishing ??= cleanup.run().then(() => {
    if (rig !== null) say('', `Stopped skilld (pid ${rig.daemon.pid}) and the model server; removed ${rig.dir}.`);
    return code;
  });
  return finishing;
}

async function failed(error: unknown): Promise<number> {
  const interrupted = error instanceof Interrupted;
  if (interrupted) say('', 'Interrupted.');
  else process.stderr.write(`\ndemo failed: ${error instanceof DemoError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  if (!interrupted && rig !== null) process.stderr.write(`the daemon's log (${rig.daemon.logFile}) ends with:\n${await logTail(rig.daemon.logFile)}\n`);
  return finish(interrupted ? SIGNAL_EXIT.SIGINT : 1);
}

for (const signal of Object.keys(SIGNAL_EXIT) as Array<keyof typeof SIGNAL_EXIT>) {
  process.on(signal, () => {
    // npm passes the terminal's Ctrl-C on too, and a stop may be under way already: one is enough.
    if (signalled || finishing !== null) return;
    signalled = true;
    say('', `${signal}: stopping the demo…`);
    ctl?.stopAll();
    void finish(kept ? 0 : SIGNAL_EXIT[signal]).then((code) => process.exit(code));
  });
}
process.stdout.on('error', () => undefined); // a closed pipe (npm run demo | head) must not stop the cleanup

main(process.argv.slice(2)).then(
  (code) => (signalled ? undefined : finish(code).then((c) => process.exit(c))),
  (error: unknown) => (signalled ? undefined : failed(error).then((c) => process.exit(c))),
);
