#!/usr/bin/env node
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { parseArgs } from 'node:util';
import { ConfigError, defaultConfigPath, loadConfig, LOG_FORMATS, LOG_LEVELS, type ConfigSources } from './base/config.js';
import { createLogger } from './base/logger.js';
import { BUNDLED_SKILLS_DIR, readVersion, startDaemon } from './main.js';
import { StateDirLockedError } from './state-lock.js';
import type { ListenTarget } from '../rpc/server.js';

const USAGE = 'usage: skilld [--config FILE] [--socket PATH] [--state-dir DIR] [--skills-dir DIR]... [--log-level LEVEL] [--log-format FORMAT]';

/** `skilld --help`: every flag, the environment, the config file this user would get, an example. */
function help(env: NodeJS.ProcessEnv, home: string): string {
  const configPath = defaultConfigPath(env, home);
  return `${USAGE}
       skilld --version | --help

Runs the skilld daemon in the foreground: it serves JSON-RPC 2.0 on a Unix socket (for skillctl,
scripts with socat, local agents) until SIGTERM or SIGINT. Each setting comes from its flag, else
its environment variable, else the config file, else the default.

Options:
  --config FILE        the JSON config file (every key: docs/configuration.md). Without it (and
                       without SKILLD_CONFIG): $XDG_CONFIG_HOME/skilld/config.json, else
                       ~/.config/skilld/config.json, if that file exists
  --socket PATH        the Unix socket to listen on. Default: $XDG_RUNTIME_DIR/skilld/skilld.sock,
                       else /tmp/skilld-<uid>/skilld.sock
  --state-dir DIR      where jobs and their run folders are kept. Default: $XDG_STATE_HOME/skilld,
                       else ~/.local/state/skilld
  --skills-dir DIR     a folder of skills; repeat it for several (the first one holding an id wins).
                       Default: $XDG_DATA_HOME/skilld/skills (else ~/.local/share/skilld/skills),
                       then the bundled examples
  --log-level LEVEL    ${LOG_LEVELS.join(', ')} (default info)
  --log-format FORMAT  ${LOG_FORMATS.join(', ')}. Default auto: readable lines when stdout is a
                       terminal, JSON lines otherwise (journald, pipes, files)
  -h, --help           print this help and exit
  -V, --version        print the version and exit

Environment:
  SKILLD_CONFIG, SKILLD_SOCKET, SKILLD_STATE_DIR, SKILLD_LOG_LEVEL, SKILLD_LOG_FORMAT
                       the settings of the flags above; a flag wins over its variable
  SKILLD_SKILLS_DIRS   skills folders, colon-separated (as --skills-dir)
  SKILLD_STORE         where jobs are kept: files (the default) or a PostgreSQL URL (config key store)
  SKILLD_HOST_ID       this daemon's name in a shared store; default the hostname (config key host_id)
  XDG_CONFIG_HOME, XDG_RUNTIME_DIR, XDG_STATE_HOME, XDG_DATA_HOME
                       where the defaults above live
  NO_COLOR             readable log lines without colours
  NOTIFY_SOCKET, LISTEN_FDS, LISTEN_PID
                       set by systemd: readiness (READY=1) and socket activation

Default config file for this user: ${configPath} (${existsSync(configPath) ? 'present' : 'absent'})

Exit status: 0 after a clean stop, 1 when it cannot start (the socket, its folder, the state),
2 for a bad flag or setting (the message names it, and the file it came from), 75 when starting
again later is right: another skilld holds the state folder (one daemon per state folder; the
message names its pid and socket), or the other daemons of a shared store took this one for gone
(see docs/cluster.md).

Example:
  skilld --socket ./run/skilld.sock --state-dir ./state --skills-dir ./my-skills
  skillctl --socket ./run/skilld.sock status`;
}

/** systemd socket activation: the first inherited descriptor is fd 3 (sd_listen_fds). */
function inheritedSocket(env: NodeJS.ProcessEnv): ListenTarget | null {
  if (env['LISTEN_PID'] !== String(process.pid) || Number(env['LISTEN_FDS'] ?? '0') < 1) return null;
  return { kind: 'fd', fd: 3 };
}

/**
 * The flags as config sources, or the exit code when the command line is all there is to do:
 * --help and --version (0), a bad flag (2).
 */
async function readCommandLine(): Promise<ConfigSources['flags'] | number> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        config: { type: 'string' },
        socket: { type: 'string' },
        'state-dir': { type: 'string' },
        'skills-dir': { type: 'string', multiple: true },
        'log-level': { type: 'string' },
        'log-format': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'V' },
      },
      strict: true,
    }));
  } catch (error) {
    process.stderr.write(`skilld: ${(error as Error).message}\n${USAGE}\n(skilld --help describes every flag)\n`);
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(`${help(process.env, homedir())}\n`);
    return 0;
  }
  if (values.version === true) {
    process.stdout.write(`skilld ${await readVersion()}\n`);
    return 0;
  }
  const flags: ConfigSources['flags'] = {};
  if (values.config !== undefined) flags.config = values.config;
  if (values.socket !== undefined) flags.socket = values.socket;
  if (values['state-dir'] !== undefined) flags.state_dir = values['state-dir'];
  if (values['skills-dir'] !== undefined) flags.skills_dirs = values['skills-dir'];
  if (values['log-level'] !== undefined) flags.log_level = values['log-level'] as NonNullable<ConfigSources['flags']['log_level']>;
  if (values['log-format'] !== undefined) flags.log_format = values['log-format'] as NonNullable<ConfigSources['flags']['log_format']>;
  return flags;
}

async function main(): Promise<number> {
  const flags = await readCommandLine();
  if (typeof flags === 'number') return flags;
  let config;
  try {
    config = await loadConfig({ flags, env: process.env, bundledSkillsDir: BUNDLED_SKILLS_DIR, uid: process.getuid?.() ?? 0, home: homedir() });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`skilld: ${error.message}\n`);
    return 2;
  }
  const logger = createLogger(config.log_level, config.log_format);
  const listen = inheritedSocket(process.env) ?? { kind: 'path', path: config.socket, mode: config.socket_mode };
  let daemon;
  try {
    daemon = await startDaemon(config, logger, listen);
  } catch (error) {
    if (error instanceof StateDirLockedError) {
      // Before its socket is bound: the daemon that holds the folder goes on untouched.
      logger.error({ code: error.code, state_dir: error.stateDir, holder: error.holder }, 'the state folder is in use by another skilld');
      process.stderr.write(`skilld: ${error.message}\n`);
      return EXIT_TEMPFAIL;
    }
    logger.error({ err: error }, 'skilld could not start');
    process.stderr.write(`skilld: cannot start: ${(error as Error).message}\n`);
    return 1;
  }
  return new Promise<number>((resolve) => {
    const stop = (signal: string, engines?: 'keep' | 'stop'): void => {
      logger.info({ signal, engines: engines ?? config.engines_on_stop }, 'stopping');
      void daemon.close(engines).then(() => resolve(0));
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    void daemon.stopRequested.then((engines) => stop('daemon/stop', engines));
    // Taken for gone by the other hosts: its jobs went to others, so its engines are stopped, and a
    // service manager starts it again as a new epoch (systemd's Restart=on-failure).
    void daemon.fenced.then(() => daemon.close('stop').then(() => resolve(EXIT_TEMPFAIL)));
  });
}

/**
 * EX_TEMPFAIL: starting again later is right. Either another daemon holds the state folder (this
 * one never started), or the other hosts of the shared store took this one for gone.
 */
const EXIT_TEMPFAIL = 75;

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`skilld: fatal: ${(error as Error).stack ?? String(error)}\n`);
    process.exit(1);
  },
);
