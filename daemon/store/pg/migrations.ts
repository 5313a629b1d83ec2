import type { Pool, PoolClient } from './pool.js';
import { inTransaction } from './pool.js';

/** One step of the schema; steps are applied in order and never edited once released. */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The schema is `skilld`, so that the database can hold other things too. Ids and times compare as bytes ("C"), as in the files store. */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs, documents, events, processes',
    sql: `
      CREATE TABLE skilld.jobs (
        job_id text COLLATE "C" PRIMARY KEY,
        status text NOT NULL,
        skill_id text NOT NULL,
        created_at text COLLATE "C" NOT NULL,
        last_seq integer NOT NULL DEFAULT 0,
        doc json NOT NULL
      );
      CREATE INDEX jobs_by_creation ON skilld.jobs (created_at, job_id);
      CREATE INDEX jobs_active ON skilld.jobs (created_at, job_id) WHERE status IN ('queued', 'running', 'waiting_user');
      CREATE TABLE skilld.job_docs (
        job_id text COLLATE "C" PRIMARY KEY REFERENCES skilld.jobs ON DELETE CASCADE,
        request json NOT NULL,
        history json NOT NULL DEFAULT '[]',
        pending json,
        result json
      );
      CREATE TABLE skilld.job_files (
        job_id text COLLATE "C" NOT NULL REFERENCES skilld.jobs ON DELETE CASCADE,
        path text NOT NULL,
        bytes bytea NOT NULL,
        PRIMARY KEY (job_id, path)
      );
      CREATE TABLE skilld.events (
        job_id text COLLATE "C" NOT NULL REFERENCES skilld.jobs ON DELETE CASCADE,
        seq integer NOT NULL,
        ts text NOT NULL,
        type text NOT NULL,
        data json,
        PRIMARY KEY (job_id, seq)
      );
      CREATE TABLE skilld.processes (
        host_id text NOT NULL,
        pid integer NOT NULL,
        job_id text COLLATE "C" NOT NULL,
        pgid integer NOT NULL,
        start_time text NOT NULL,
        PRIMARY KEY (host_id, pid)
      );`,
  },
  {
    version: 2,
    name: 'hosts, and which host holds a job',
    sql: `
      CREATE TABLE skilld.hosts (
        host_id text COLLATE "C" PRIMARY KEY,
        epoch bigint NOT NULL,
        boot_token text NOT NULL,
        state text NOT NULL CHECK (state IN ('live', 'stopped', 'reaped')),
        lease_until timestamptz NOT NULL,
        renewing_since timestamptz NOT NULL,
        left_at timestamptz,
        engines text[] NOT NULL,
        info json NOT NULL
      );
      ALTER TABLE skilld.jobs ADD COLUMN engine text, ADD COLUMN owner_host text COLLATE "C", ADD COLUMN owner_epoch bigint;
      UPDATE skilld.jobs SET engine = doc->>'engine';
      ALTER TABLE skilld.jobs ALTER COLUMN engine SET NOT NULL;
      CREATE INDEX jobs_claimable ON skilld.jobs (created_at, job_id) WHERE status = 'queued' AND owner_host IS NULL;
      CREATE INDEX jobs_held ON skilld.jobs (owner_host) WHERE status IN ('queued', 'running', 'waiting_user');`,
  },
  {
    version: 3,
    name: 'requests one host leaves for the host that holds a job',
    sql: `
      CREATE TABLE skilld.requests (
        request_id text COLLATE "C" PRIMARY KEY,
        seq bigserial NOT NULL,
        job_id text COLLATE "C" NOT NULL,
        from_host text COLLATE "C" NOT NULL,
        to_host text COLLATE "C" NOT NULL,
        method text NOT NULL,
        params json NOT NULL,
        state text NOT NULL DEFAULT 'sent' CHECK (state IN ('sent', 'taken', 'answered')),
        answer json,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE INDEX requests_waiting ON skilld.requests (to_host, seq) WHERE state = 'sent';`,
  },
  {
    version: 4,
    name: 'the gone host a job was taken from, to be failed',
    sql: `ALTER TABLE skilld.jobs ADD COLUMN taken_from text COLLATE "C";`,
  },
  {
    version: 5,
    name: 'when a job finished, for retention',
    // Read from the document's text, not with a JSON operator: a finished job's document may hold
    // an escaped NUL, which those operators refuse (docs/state.md).
    sql: `
      ALTER TABLE skilld.jobs ADD COLUMN finished_at text COLLATE "C";
      UPDATE skilld.jobs SET finished_at = substring(doc::text from '"finished_at":"([^"]+)"') WHERE status IN ('succeeded', 'failed', 'canceled');
      CREATE INDEX jobs_finished ON skilld.jobs (finished_at, job_id) WHERE finished_at IS NOT NULL;`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;

/** The database was set up by a newer daemon: this one would misread it. Start-up stops. */
export class SchemaVersionError extends Error {
  override readonly name = 'SchemaVersionError';
}

/** An arbitrary constant: daemons starting together take turns to migrate. */
const MIGRATION_LOCK = 0x736b6c64;

/**
 * Brings the schema to this daemon's version (or `upTo`, an older one: an upgrade can be tried
 * from there) in one transaction (PostgreSQL's DDL is transactional: a failed step leaves nothing
 * behind). Returns the versions applied.
 */
export function migrate(pool: Pool, daemonVersion: string, upTo = SCHEMA_VERSION): Promise<number[]> {
  return inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE SCHEMA IF NOT EXISTS skilld');
    await client.query(`CREATE TABLE IF NOT EXISTS skilld.schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), daemon_version text NOT NULL)`);
    const current = await currentVersion(client);
    if (current > SCHEMA_VERSION) throw new SchemaVersionError(`the database schema is version ${current}, newer than this daemon's (${SCHEMA_VERSION}); run a skilld of that version or later`);
    const applied: number[] = [];
    for (const step of MIGRATIONS.filter((m) => m.version > current && m.version <= upTo)) {
      await client.query(step.sql);
      await client.query('INSERT INTO skilld.schema_migrations (version, name, daemon_version) VALUES ($1, $2, $3)', [step.version, step.name, daemonVersion]);
      applied.push(step.version);
    }
    return applied;
  });
}

async function currentVersion(client: PoolClient): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM skilld.schema_migrations');
  return rows[0]?.version ?? 0;
}
