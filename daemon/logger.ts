import { pino } from 'pino';

/** The logging surface the daemon uses; pino's logger fits it. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  flush?(cb?: (err?: Error) => void): void;
}

/** JSON lines on stdout (journald under systemd). */
export function createLogger(level: string): Logger {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
