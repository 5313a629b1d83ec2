import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type ElicitRequestFormParams, type ElicitResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { SKILLCTL_BIN } from './daemon.js';

/** How the test client answers `elicitation/create` (`signal` aborts when the server withdraws it); without one it does not declare the capability. */
export type Elicit = (params: ElicitRequestFormParams, signal: AbortSignal) => ElicitResult | Promise<ElicitResult>;

export interface McpOptions {
  elicit?: Elicit;
  /** Called with the new tool list after each `notifications/tools/list_changed`. */
  onToolsChanged?: (tools: Tool[]) => void;
}

/** The SDK's own client, connected over stdio to the built `skillctl mcp --socket <socket>`. */
export interface McpSession {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  /** What the server wrote on stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Starts `skillctl mcp` as an agent would, with the socket on its command line and no variable that
 * names one, and connects to it. The rest of the environment is kept, so that tap measures the
 * server's coverage as it does the daemon's.
 */
export async function connectMcp(socket: string, options: McpOptions = {}): Promise<McpSession> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [SKILLCTL_BIN, 'mcp', '--socket', socket], env: serverEnv(), stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const { elicit, onToolsChanged } = options;
  const client = new Client(
    { name: 'skilld-test', version: '0' },
    {
      capabilities: elicit === undefined ? {} : { elicitation: { form: {} } },
      ...(onToolsChanged === undefined ? {} : { listChanged: { tools: { debounceMs: 0, onChanged: (_error, tools) => onToolsChanged(tools ?? []) } } }),
    },
  );
  if (elicit !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => (request.params.mode === 'url' ? { action: 'decline' } : elicit(request.params as ElicitRequestFormParams, extra.signal)));
  }
  await client.connect(transport);
  return { client, transport, stderr: () => stderr, close: () => client.close() };
}

/** `skillctl mcp` on raw pipes: the test writes MCP lines (or any text) and reads the server's lines. */
export interface RawServer {
  send(message: unknown): void;
  write(text: string): void;
  readonly lines: AsyncIterator<string>;
  readonly child: ChildProcess;
  stderr(): string;
}

/** Starts `skillctl mcp --socket <socket>` on raw pipes, as `connectMcp` does without a client. */
export function rawServer(socket: string): RawServer {
  const child = spawn(process.execPath, [SKILLCTL_BIN, 'mcp', '--socket', socket], { env: serverEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  const write = (text: string): void => void child.stdin?.write(text);
  return { send: (message) => write(`${JSON.stringify(message)}\n`), write, lines, child, stderr: () => stderr };
}

/** The first message of a raw session, from a client that declares no capability. */
export const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } };

/** A `callTool` that waits as long as a busy machine needs (the SDK's default is 60 s). */
export const LONG_CALL = { timeout: 600_000 } as const;

/** The test's environment without the variables that choose a socket. */
export function serverEnv(): Record<string, string> {
  const env = Object.fromEntries(Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined));
  delete env['SKILLD_SOCKET'];
  delete env['XDG_RUNTIME_DIR'];
  return env;
}
