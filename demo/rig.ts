import { join } from 'node:path';
import { makeCodexHome, realEngineBins } from '../clients/skill-test/engine-homes.js';
import { startModelServer, type ModelScript, type ModelServer } from '../clients/skill-test/model-server.js';
import { startDaemon, stopDaemon, type DaemonChild } from '../clients/skill-test/private-daemon.js';
import { makeTempFolder, removeFolder } from '../clients/skill-test/temp-folder.js';
import { BUNDLED_SKILLS, NODE_MODULES } from './paths.js';

/** Everything the demo runs, private to one temp folder. */
export interface Rig {
  dir: string;
  server: ModelServer;
  daemon: DaemonChild;
}

/** A problem the person can act on (the message says how); printed without a stack. */
export class DemoError extends Error {
  override readonly name = 'DemoError';
}

/**
 * Starts the scripted model server, a Codex home pointed at it and the real daemon with the
 * pinned Codex CLI, in a fresh temp folder. `track` receives each started part's stop at once, so
 * a failure or a signal halfway through still stops what had started.
 */
export async function startRig(script: ModelScript, track: (stop: () => Promise<void>) => void): Promise<Rig> {
  const codex = realEngineBins(NODE_MODULES).codex;
  if (codex === null) throw new DemoError(`the Codex CLI is not installed in ${NODE_MODULES} (it is a dev dependency: run npm ci, without --omit=dev)`);
  const dir = await makeTempFolder('skilld-demo-');
  track(() => removeFolder(dir));
  const server = await startModelServer({ script, onUnknown: () => undefined });
  track(() => server.close());
  const home = await makeCodexHome(server.url, { dir: join(dir, 'codex-home') });
  // The CLI lives in this checkout's node_modules, which may lie below /tmp or a home: its job's sandbox is shown it.
  const config = { engines: { codex: { command: [codex], env: home.env, sandbox: { read_only: [NODE_MODULES] } } }, max_concurrent: 2, kill_grace_ms: 2000, hard_timeout_sec: 300, session_timeout_sec: 1800 };
  const daemon = await startDaemon({ dir, skillsDir: BUNDLED_SKILLS, config }, (started) => track(() => stopDaemon(started)));
  return { dir, server, daemon };
}
