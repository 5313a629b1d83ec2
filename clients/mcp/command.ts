import { stringOpt } from '../args.js';
import type { Command } from '../command.js';
import { socketPath } from '../socket-path.js';

/** `mcp`: the daemon's skills as MCP tools, served on stdin/stdout (docs/mcp.md). */
export const mcpCommand: Command = {
  name: 'mcp',
  usage: 'mcp',
  summary: "serve the daemon's skills as MCP tools on stdin/stdout, for agents (Claude Code, Codex, Gemini CLI)",
  options: {},
  positionals: [0, 0],
  examples: ['mcp --socket "$XDG_RUNTIME_DIR/skilld/skilld.sock"  # as an agent starts it: pass the socket, agents start servers with a reduced environment'],
  details: [
    'Each loaded, valid skill is a tool named by its id; a call runs it as a job and returns its output. skilld_reply answers a job that waits for a ' +
      'reply and skilld_job shows where a job stands. Results and artifacts are resources (skilld://jobs/<id>/result, …/artifacts/<name>).',
    'stdout carries only MCP messages; problems go to stderr. The daemon must be running: without it mcp exits 3 at once. mcp ends when its input ' +
      'ends; jobs it started keep running in the daemon.',
  ],
  // The MCP SDK (about 28 MiB resident) is loaded by this command alone, not by every skillctl command.
  run: async (ctx, inv) => (await import('./server.js')).serveMcp(ctx.client, socketPath(stringOpt(inv.values, 'socket')), ctx.warn),
};
