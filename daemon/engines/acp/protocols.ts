import { LazyMaker } from '../deferred-session.js';
import type { LiveProtocol } from '../live-session.js';

/** The ACP SDK (and zod, which it validates with) is loaded by the first ACP session, not at the daemon's start. */
const acp = new LazyMaker(async () => {
  const { AcpSession } = await import('./session.js');
  return (io, start) => new AcpSession(io, start);
});
const load = async (): Promise<void> => {
  await acp.get();
};

/**
 * `gemini --acp`: the Agent Client Protocol on stdio. `--skip-trust` spares exit 55 in a folder
 * Gemini has not been told to trust; in `auto` mode `--yolo` keeps it from ever asking, as the
 * one-shot turns run. Without `GEMINI_CLI_NO_RELAUNCH` it relaunches itself in a second process
 * that handles SIGTERM differently.
 */
export const geminiAcp: LiveProtocol = {
  argv: ({ model, approvals }) => ['--acp', '--skip-trust', ...(model === null ? [] : [`--model=${model}`]), ...(approvals === 'auto' ? ['--yolo'] : [])],
  env: { GEMINI_CLI_NO_RELAUNCH: 'true' },
  connect: (io, start) => acp.connect(io, start),
  load,
};

/**
 * `iflow --experimental-acp`: the same protocol (iFlow derives from Gemini). Its flags mirror the
 * one-shot adapter's, which passes no model and asks for thinking; unverified against the real
 * CLI, which is not installable here.
 */
export const iflowAcp: LiveProtocol = {
  argv: ({ approvals }) => ['--experimental-acp', ...(approvals === 'auto' ? ['--yolo'] : []), '--thinking'],
  env: {},
  connect: (io, start) => acp.connect(io, start),
  load,
};
