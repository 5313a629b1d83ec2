import { probeHere } from '../../daemon/sandbox/probe.js';
import { runShort } from '../../daemon/process/run-short.js';
import { definedEnv } from '../../daemon/process/env.js';

const probe = await probeHere(runShort, definedEnv(process.env));

/** Why the tests that need a job sandbox skip here (the daemon's own probe, in its words); false where it runs. */
export const NO_SANDBOX: string | false = probe.available ? false : `no job sandbox here: ${probe.reason}`;
