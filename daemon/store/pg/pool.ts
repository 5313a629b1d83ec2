import pg from 'pg';
import type { Logger } from '../../logger.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/**
 * The daemon's connections to PostgreSQL. A connection that breaks is dropped and the next query
 * opens a new one, so the pool needs nothing after the server comes back; an `error` event
 * without a listener would end the process, so every one is logged.
 */
export function openPool(url: string, logger: Logger): Pool {
  const pool = new pg.Pool({ connectionString: url, max: 8, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000 });
  pool.on('error', (error) => logger.warn({ err: error }, 'a database connection failed'));
  return pool;
}

/** Runs `work` in one transaction on one connection: committed when it resolves, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    // A connection whose rollback failed is not given to the next caller.
    client.release(broken);
  }
}
