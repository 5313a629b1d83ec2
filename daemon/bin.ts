#!/usr/bin/env node
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig, type ConfigSources } from './config.js';
import { createLogger } from './logger.js';
import { BUNDLED_SKILLS_DIR, startDaemon } from './main.js';
import type { ListenTarget } from '../rpc/server.js';

const USAGE = `usage: skilld [--config FILE] [--socket PATH] [--state-dir DIR] [--skills-dir DIR]... [--log-level LEVEL]

Runs the skilld daemon in the foreground. Environment: SKILLD_CONFIG, SKILLD_SOCKET,
SKILLD_STATE_DIR, SKILLD_SKILLS_DIRS (colon-separated), SKILLD_LOG_LEVEL.`;

/** systemd socket activation: the first inherited descriptor is fd 3 (sd_listen_fds). */
function inheritedSocket(env: NodeJS.ProcessEnv): ListenTarget | null {
  if (env['LISTEN_PID'] !== String(process.pid) || Number(env['LISTEN_FDS'] ?? '0') < 1) return null;
  return { kind: 'fd', fd: 3 };
}

async function main(): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        config: { type: 'string' },
        socket: { type: 'string' },
        'state-dir': { type: 'string' },
        'skills-dir': { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`skilld: ${(error as Error).message}\n${USAGE}\n`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const flags: ConfigSources['flags'] = {};
  if (values.config !== undefined) flags.config = values.config;
  if (values.socket !== undefined) flags.socket = values.socket;
  if (values['state-dir'] !== undefined) flags.state_dir = values['state-dir'];
  if (values['skills-dir'] !== undefined) flags.skills_dirs = values['skills-dir'];
  if (values['log-level'] !== undefined) flags.log_level = values['log-level'] as NonNullable<ConfigSources['flags']['log_level']>;
  let config;
  try {
    config = await loadConfig({ flags, env: process.env, bundledSkillsDir: BUNDLED_SKILLS_DIR, uid: process.getuid?.() ?? 0, home: homedir() });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`skilld: ${error.message}\n`);
    return 2;
  }
  const logger = createLogger(config.log_level);
  const listen = inheritedSocket(process.env) ?? { kind: 'path', path: config.socket, mode: config.socket_mode };
  let daemon;
  try {
    daemon = await startDaemon(config, logger, listen);
  } catch (error) {
    logger.error({ err: error }, 'skilld could not start');
    process.stderr.write(`skilld: cannot start: ${(error as Error).message}\n`);
    return 1;
  }
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'stopping');
      void daemon.close().then(resolve);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`skilld: fatal: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
