import { pino, type DestinationStream } from 'pino';
import { prettyFactory } from 'pino-pretty';
import type { Config } from './config.js';

/** The logging surface the daemon uses; pino's logger fits it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  flush?(cb?: (err?: Error) => void): void;
}

/**
 * pino on stdout. `json`: JSON lines (journald under systemd, pipes, files). `pretty`: one
 * readable line per entry, coloured only on a terminal that wants colours (`hasColors` honours
 * NO_COLOR, FORCE_COLOR and TERM). `auto`: `pretty` when stdout is a terminal, else `json`.
 * Both write synchronously to fd 1, so nothing logged before an exit is lost.
 */
export function createLogger(level: string, format: Config['log_format'] = 'json'): Logger {
  const out = pino.destination({ dest: 1, sync: true });
  const options = { level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  const terminal = process.stdout.isTTY === true;
  if (format === 'json' || (format === 'auto' && !terminal)) return pino(options, out);
  const pretty = prettyFactory({
    colorize: terminal && process.stdout.hasColors(),
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname',
    singleLine: true,
  });
  const stream: DestinationStream & Pick<Logger, 'flush'> = {
    write: (line: string) => {
      out.write(pretty(line));
    },
    flush: (cb) => out.flush(cb),
  };
  return pino(options, stream);
}
