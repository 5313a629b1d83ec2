import { join } from 'node:path';
import { makeClaudeHome, makeCodexHome, makeGeminiHome, type EngineHome } from '../fixtures/engine-homes.js';
import { startModelServer, type ModelReply, type ModelRequest, type ModelServer } from '../fixtures/model-server.js';
import type { RpcClient } from '../../rpc/client.js';
import { ENGINE_NAMES, FIXTURES, TestDaemon } from './daemon.js';

// What the tests of the real CLIs share: the scripted model, and (from the benchmarks' helpers) a
// look at what runs in a job's folder.
export { processesIn } from '../../bench/lib/proc.js';

/** A made-up key the scripted provider quotes back when it refuses one (`key_refused`), as OpenAI's API does. */
export const REFUSED_KEY = 'sk-proj-refused0123456789abcdefghijklmnopqrstuvwxyzAB';

/** The scripted model: the scenario comes from the first-turn prompt's `- scenario:` line. */
export function model(request: ModelRequest): ModelReply {
  const first = request.userTexts.find((text) => text.startsWith('Run the skill')) ?? '';
  const scenario = /- scenario: "([a-z_]+)"/.exec(first)?.[1] ?? 'ok';
  const resumed = request.prompt !== null && !request.prompt.startsWith('Run the skill');
  const done = (extra: Record<string, unknown> = {}): ModelReply => ({ text: `Here you are.\n\`\`\`json\n${JSON.stringify({ greeting: 'from a real CLI', ...extra, __SKILL_DONE__: true })}\n\`\`\`` });
  if (resumed) return done({ reply: request.prompt });
  switch (scenario) {
    case 'ask':
      return { text: 'Which city should I use?' };
    case 'tool':
      return request.afterToolResult ? done() : { toolCall: { command: 'mkdir -p artifacts && echo written by the engine > artifacts/out.txt' } };
    case 'read_other': {
      // A command that reads the path in the `target` input (another job's file) into an artifact, with its exit status.
      const target = /- target: "([^"]+)"/.exec(first)?.[1] ?? '';
      return request.afterToolResult ? done() : { toolCall: { command: `mkdir -p artifacts; cat '${target}' > artifacts/read.txt 2>&1; echo "exit=$?" >> artifacts/read.txt` } };
    }
    case 'reach_out': {
      // From inside the job, each way out a prompt-injected agent would try (`target` is the host's LAN address and a port with a listener): straight, and through the proxy the environment names.
      const [lan, port] = (/- target: "([^"]+)"/.exec(first)?.[1] ?? '').split(' ');
      const tries = [
        ['loopback-direct', `--noproxy '*' http://127.0.0.1:${port}/`],
        ['lan-direct', `--noproxy '*' http://${lan}:${port}/`],
        ['metadata-direct', `--noproxy '*' http://169.254.169.254/`],
        ['lan-proxy', `http://${lan}:${port}/`],
        ['metadata-proxy', 'http://169.254.169.254/'],
        ['name-proxy', 'https://exfiltrate.example/'],
      ];
      const command = tries.map(([name, url]) => `curl -s -m 5 -o /dev/null -w '%{http_code}' ${url}; echo " ${name} exit=$?"`).join('; ');
      return request.afterToolResult ? done() : { toolCall: { command: `mkdir -p artifacts; { ${command}; } > artifacts/reach.txt 2>&1` } };
    }
    case 'two_tools': {
      // Two commands in one turn: a person allows the first and denies the second.
      const results = request.conversation.filter((entry) => entry.role === 'tool_result').length;
      if (results === 0) return { toolCall: { command: 'touch allowed.txt' } };
      if (results === 1) return { toolCall: { command: 'touch denied.txt' } };
      return done();
    }
    case 'sleep_tool':
      return request.afterToolResult ? { hang: true } : { toolCall: { command: 'sleep 1000' } };
    case 'hang':
      return { hang: true };
    case 'key_refused':
      return { error: { status: 401, message: `Incorrect API key provided: ${REFUSED_KEY}` } };
    case 'rate_limited':
      return { error: { status: 429, message: 'Rate limit reached for requests' } };
    default:
      return done();
  }
}

/** Every engine on its fake, for the engines a test does not run for real. */
export function fakeEngines(): Record<string, { command: string[] }> {
  return Object.fromEntries(ENGINE_NAMES.map((name) => [name, { command: [join(FIXTURES, `fake-${name}.mjs`)] }]));
}

/** How each real CLI's home is made, offline against the scripted model server. */
export const HOMES = { codex: makeCodexHome, gemini: makeGeminiHome, claude: makeClaudeHome } as const;
export type RealEngine = keyof typeof HOMES;

/** A daemon with `engine` on its real CLI (`bin`, configured with `config`) and the other engines on their fakes, the scripted model behind it. */
export interface RealEngineRig {
  server: ModelServer;
  home: EngineHome;
  daemon: TestDaemon;
  client: RpcClient;
  /** SIGKILLs the daemon and starts another on the same folder and config (docs/restarts.md); stopped at the test's end. */
  restart(): Promise<{ daemon: TestDaemon; client: RpcClient }>;
}

/** The variable of the test daemon's environment that holds the provider's key, where the engine calls through the gateway. */
export const GATEWAY_KEY_VARIABLE = 'SKILLD_TEST_PROVIDER_KEY';

/** What each home gives its CLI to find and pay the scripted model itself: left out where the gateway does it. */
const OWN_MODEL_ACCESS: Record<RealEngine, readonly string[]> = {
  codex: ['FAKE_MODEL_API_KEY'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_GEMINI_BASE_URL'],
  claude: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
};

/** The engine calls the scripted model through the daemon's gateway: `key` only in the daemon's environment, `retry_max_sec` as given. */
export interface GatewayRig {
  key: string;
  retryMaxSec?: number;
}

/** Starts a `RealEngineRig`; everything is stopped and removed at the test's end. With `gateway`, the engine has no key nor model address of its own. */
export async function realEngineRig(t: { teardown(fn: () => unknown): void }, engine: RealEngine, bin: string, config: Record<string, unknown> = {}, gateway?: GatewayRig): Promise<RealEngineRig> {
  const server = await startModelServer({ script: model });
  const home = await HOMES[engine](server.url);
  const env = gateway === undefined ? home.env : Object.fromEntries(Object.entries(home.env).filter(([name]) => !OWN_MODEL_ACCESS[engine].includes(name)));
  const viaGateway = gateway === undefined ? {} : { gateway: { upstream: server.url, api_key_env: GATEWAY_KEY_VARIABLE, retry_max_sec: gateway.retryMaxSec ?? 120 } };
  const engines = { ...fakeEngines(), [engine]: { command: [bin], env, ...viaGateway, ...config } };
  const daemonConfig = { engines, kill_grace_ms: 2000, max_concurrent: 2 };
  const daemonEnv = gateway === undefined ? {} : { env: { [GATEWAY_KEY_VARIABLE]: gateway.key } };
  const daemon = await TestDaemon.start({ config: daemonConfig, ...daemonEnv });
  const later: TestDaemon[] = [];
  t.teardown(async () => {
    for (const again of later) await again.stop();
    await daemon.cleanup();
    await server.close();
    await home.cleanup();
  });
  const restart = async (): Promise<{ daemon: TestDaemon; client: RpcClient }> => {
    await (later[later.length - 1] ?? daemon).kill();
    const again = await TestDaemon.start({ dir: daemon.dir, config: daemonConfig, ...daemonEnv });
    later.push(again);
    return { daemon: again, client: await again.client() };
  };
  return { server, home, daemon, client: await daemon.client(), restart };
}

/** SIGKILL to each process; one already gone (it died with its parent) is not an error. */
export function killEach(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}
