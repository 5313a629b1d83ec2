import type { Pool } from '../../daemon/store/pg/pool.js';

/** What a `losingPool` does next; the test sets it. */
export interface LosingPool {
  pool: Pool;
  /** The next statement matching `sql` loses its connection: after the server ran it (`sent`), or before it got it. Once. */
  lose: { sql: RegExp; sent: boolean } | null;
  /** While false, every query on the pool itself fails, as when the database is away. */
  reads: boolean;
}

/**
 * The pool, with the driver's failures where they cannot be brought about on demand: a statement
 * (a COMMIT, an UPDATE on its own) whose connection is lost before or after the server ran it.
 */
export function losingPool(pool: Pool): LosingPool {
  const lost = (): Error => new Error('Connection terminated unexpectedly');
  const control: LosingPool = { pool, lose: null, reads: true };
  const losing = (query: (...args: unknown[]) => Promise<unknown>) => async (...args: unknown[]): Promise<unknown> => {
    const lose = control.lose;
    if (lose === null || typeof args[0] !== 'string' || !lose.sql.test(args[0])) return query(...args);
    control.lose = null;
    if (lose.sent) await query(...args);
    throw lost();
  };
  control.pool = new Proxy(pool, {
    get(target, key) {
      if (key === 'query') {
        const query = losing((...args) => (target.query as (...a: unknown[]) => Promise<unknown>)(...args));
        return (...args: unknown[]) => (control.reads ? query(...args) : Promise.reject(lost()));
      }
      if (key !== 'connect') return Reflect.get(target, key, target) as unknown;
      return async () => {
        const client = await target.connect();
        (client as unknown as { query: unknown }).query = losing(client.query.bind(client) as (...a: unknown[]) => Promise<unknown>);
        return client;
      };
    },
  });
  return control;
}
