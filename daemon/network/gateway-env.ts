import type { EngineName } from '../model/job.js';

/** The variable Codex reads the token from, named by the provider the gateway gives it (`env_key`). */
export const CODEX_TOKEN_VARIABLE = 'SKILLD_GATEWAY_TOKEN';

/** What an engine is given to call its model through the gateway: variables to set, variables to drop, and arguments after its command. */
export interface GatewayEngineSetup {
  env: Record<string, string>;
  unset: string[];
  args: string[];
}

/**
 * How each engine is pointed at the gateway (docs/network.md, "What each engine is given"):
 * `base` is the gateway's address inside the job's network and the upstream's path
 * (`http://127.0.0.1:3128`, or with `/v1` when the upstream names it), `token` the job's token in
 * the place of a key. Variables that would send another credential are dropped. Codex is given a
 * provider of its own on its command line (`-c`, before its subcommand), whose `env_key` names the
 * token's variable; without a path in the upstream it gets OpenAI's `/v1`. iFlow: none (the
 * config refuses a gateway for it: where it reads a key and a base URL is not established).
 */
export function gatewayEngineSetup(engine: EngineName, base: string, upstreamPath: string, token: string): GatewayEngineSetup | null {
  const url = `${base}${upstreamPath}`;
  switch (engine) {
    case 'claude':
      return { env: { ANTHROPIC_BASE_URL: url, ANTHROPIC_API_KEY: token }, unset: ['ANTHROPIC_AUTH_TOKEN'], args: [] };
    case 'gemini':
      return { env: { GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: token }, unset: ['GOOGLE_API_KEY'], args: [] };
    case 'iflow':
      return null;
    case 'codex': {
      const provider = (key: string, value: string): string[] => ['-c', `model_providers.skilld.${key}=${JSON.stringify(value)}`];
      return {
        env: { [CODEX_TOKEN_VARIABLE]: token },
        unset: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
        args: ['-c', 'model_provider="skilld"', ...provider('name', 'skilld'), ...provider('base_url', upstreamPath === '' ? `${base}/v1` : url), ...provider('env_key', CODEX_TOKEN_VARIABLE), ...provider('wire_api', 'responses')],
      };
    }
  }
}
