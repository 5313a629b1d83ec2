import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { DaemonUnreachableError, RpcCallError, type RpcClient } from '../../rpc/client.js';
import { clientVersion } from '../version.js';
import { canRun, type EngineView, type SkillView } from '../wire.js';
import { callSkill, type CallScope } from './call.js';
import type { CallExtra } from './call-extra.js';
import { DaemonLink } from './daemon-link.js';
import { jobTool, replyTool } from './job-tools.js';
import { failureResult } from './results.js';
import { listResources, readResource, RESOURCE_TEMPLATES } from './resources.js';
import { StdioLineTransport } from './stdio-transport.js';
import { JOB_TOOL, JOB_TOOLS, REPLY_TOOL, skillTool, toolName, type SkillDetail } from './tools.js';

/** Exit codes of `skillctl mcp`: its input ended or SIGTERM (0), Ctrl-C (130, as skillctl's other commands). */
const EXIT = { done: 0, interrupted: 130 } as const;

const INSTRUCTIONS =
  'Each tool but the two skilld_ ones runs one skill of the local skilld daemon as a job and returns its validated output. ' +
  `A job that waits for an answer the user did not give here returns {job_id, status: "waiting_user", pending}: answer it with ${REPLY_TOOL}; ` +
  `${JOB_TOOL} shows where a job stands. Results and artifacts are resources: skilld://jobs/<job_id>/result and …/artifacts/<name>.`;

/**
 * `skillctl mcp`: an MCP server on stdin/stdout that maps the protocol onto the daemon's methods
 * and keeps no job state of its own. Resolves to the exit code once stdin ends or a signal stops
 * it; jobs it started keep running in the daemon. `first` is connected already; `warn` is stderr.
 */
export async function serveMcp(first: RpcClient, socket: string, warn: (text: string) => void): Promise<number> {
  let initialized = false;
  let closing = false;
  const server = new Server({ name: 'skilld', version: clientVersion() }, { capabilities: { tools: { listChanged: true }, resources: {} }, instructions: INSTRUCTIONS });
  server.oninitialized = () => {
    initialized = true;
    // Clients on the MCP TypeScript SDK (1.32 at least) drop a notifications/cancelled for request
    // id 0 (typescript-sdk issue #2283): id 0 goes to a ping, so that no question is ever asked
    // with an id whose withdrawal the client would ignore.
    server.ping().catch(() => undefined);
  };
  server.onerror = (error) => warn(`skillctl mcp: ${error.message}`);
  const link = new DaemonLink(first, socket, () => {
    if (initialized && !closing) server.sendToolListChanged().catch((error: Error) => warn(`skillctl mcp: ${error.message}`));
  });
  const scope = (extra: CallExtra): CallScope => ({ link, server, extra, closing: () => closing });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...(await daemonAnswer(link, skillTools)), ...JOB_TOOLS] }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args = {} } = request.params;
    if (name === REPLY_TOOL) return replyTool(scope(extra), args);
    if (name === JOB_TOOL) return jobTool(scope(extra), args);
    let skill: SkillView | undefined;
    try {
      skill = (await (await link.client()).request<{ skills: SkillView[] }>('skills/list')).skills.find((s) => s.status === 'ok' && toolName(s.id) === name);
    } catch (error) {
      return failureResult(error, socket);
    }
    if (skill === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool "${name}": no loaded, valid skill has that name`);
    return callSkill(scope(extra), skill, args);
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: [...RESOURCE_TEMPLATES] }));
  server.setRequestHandler(ListResourcesRequestSchema, (request) => daemonAnswer(link, (client) => listResources(client, request.params?.cursor)));
  server.setRequestHandler(ReadResourceRequestSchema, (request) => daemonAnswer(link, (client) => readResource(client, request.params.uri)));

  await link.start();
  const stopped = untilStopped(async () => {
    closing = true; // calls in flight are aborted by the close: their jobs stay as they are
    await server.close().finally(() => link.close());
  });
  await server.connect(new StdioLineTransport());
  return stopped;
}

/** Resolves to the exit code once stdin ends or a signal comes, after `close` (run once). */
function untilStopped(close: () => Promise<void>): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    const stop = (code: number): void => {
      if (stopping) return;
      stopping = true;
      void close().finally(() => resolve(code));
    };
    // The transport only reads lines: the end of its input is noticed here.
    process.stdin.once('end', () => stop(EXIT.done));
    process.stdin.once('close', () => stop(EXIT.done));
    process.once('SIGTERM', () => stop(EXIT.done));
    process.once('SIGINT', () => stop(EXIT.interrupted));
  });
}

/** Every loaded, valid skill as a tool, from the daemon as it is now. */
async function skillTools(client: RpcClient): Promise<Tool[]> {
  const { skills } = await client.request<{ skills: SkillView[] }>('skills/list');
  const { engines } = await client.request<{ engines: EngineView[] }>('engines/list');
  const runnable = new Set(engines.filter(canRun).map((engine) => engine.name));
  const details = await Promise.all(skills.filter((s) => s.status === 'ok').map((s) => skillDetail(client, s.id)));
  const tools = new Map<string, Tool>();
  for (const skill of details) {
    const tool = skill?.status === 'ok' ? skillTool(skill, runnable) : undefined;
    // Two ids that make the same name: the first (by id) keeps it, as a call finds it.
    if (tool !== undefined && !tools.has(tool.name)) tools.set(tool.name, tool);
  }
  return [...tools.values()];
}

/** `skills/get`; null for a skill removed since it was listed. */
async function skillDetail(client: RpcClient, id: string): Promise<SkillDetail | null> {
  try {
    return await client.request<SkillDetail>('skills/get', { skill_id: id });
  } catch (error) {
    if (error instanceof RpcCallError && error.dataCode === 'SKILL_NOT_FOUND') return null;
    throw error;
  }
}

/** A request answered from the daemon; a daemon that cannot be reached is an MCP error saying so. */
async function daemonAnswer<T>(link: DaemonLink, ask: (client: RpcClient) => Promise<T>): Promise<T> {
  try {
    return await ask(await link.client());
  } catch (error) {
    if (error instanceof DaemonUnreachableError) throw new McpError(ErrorCode.InternalError, `cannot reach the skilld daemon at ${link.socket}: ${error.message}`);
    throw error;
  }
}
