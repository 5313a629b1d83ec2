import pg from 'pg';
import type { Logger } from '../../base/logger.js';
import { isDatabaseFault } from './db-faults.js';

export type Pool = pg.Pool;
export type PoolClient = pg.PoolClient;

/**
 * The daemon's connections to PostgreSQL. A connection that breaks is dropped and the next query
 * opens a new one, so the pool needs nothing after the server comes back; an `error` event
 * without a listener would end the process, so every one is logged.
 *
 * `waitMs` bounds two waits on the server: a statement waiting for a row lock (`lock_timeout`,
 * 55P03), and a transaction left open between statements (`idle_in_transaction_session_timeout`,
 * which ends the session). A host that froze in the middle of a transaction (SIGSTOP, a stalled
 * VM) would otherwise hold its locks for as long as it is frozen, and every host that touches
 * those rows would wait with it. The daemon passes a third of its lease.
 */
export function openPool(url: string, logger: Logger, waitMs = 5000): Pool {
  const pool = new pg.Pool({
    connectionString: url, max: 8, connectionTimeoutMillis: 5000, idleTimeoutMillis: 30_000,
    lock_timeout: waitMs, idle_in_transaction_session_timeout: waitMs,
  });
  pool.on('error', (error) => logger.warn({ err: error }, 'a database connection failed'));
  return pool;
}

/**
 * The connection broke while the server was committing: the transaction may or may not have been
 * kept. Still a database fault (its cause is the connection's error); a caller that must know
 * reads back what it wrote.
 */
export class CommitInDoubtError extends Error {
  override readonly name = 'CommitInDoubtError';

  constructor(cause: unknown) {
    super('the database connection broke during a commit: the transaction may or may not have been kept', { cause });
  }
}

/**
 * Runs `work` in one transaction on one connection: committed when it resolves, rolled back when
 * it throws; a commit whose connection broke is a CommitInDoubtError. While the connection is
 * checked out the pool does not listen to it, so an error the server sends between statements
 * (the transaction ended by idle_in_transaction_session_timeout) is caught here instead of ending
 * the process, and that connection is not used again.
 */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken = false;
  let committing = false;
  const onError = (): void => {
    broken = true;
  };
  client.on('error', onError);
  try {
    await client.query('BEGIN');
    const result = await work(client);
    committing = true;
    await client.query('COMMIT');
    return result;
  } catch (error) {
    if (committing && isDatabaseFault(error)) {
      broken = true;
      throw new CommitInDoubtError(error);
    }
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.off('error', onError);
    // A connection whose rollback failed, or that broke, is not given to the next caller.
    client.release(broken);
  }
}
