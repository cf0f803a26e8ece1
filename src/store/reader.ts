// Hot reads (the routes users poll) as named prepared statements: PostgreSQL plans each once per
// connection instead of once per request, and parameters travel apart from the text. On PostgreSQL
// a small pool of its own; on PGlite the ORM's connection with the same `$n` parameters.
import pg from 'pg';
import { CompiledQuery } from 'kysely';
import type { Orm } from './orm.ts';

export interface Reader {
  /** `sql` uses `$1…$n`; `name` identifies the statement (one text per name). */
  query<R = any>(name: string, sql: string, params: unknown[]): Promise<R[]>;
  close(): Promise<void>;
}

export function openReader(orm: Orm, databaseUrl: string | undefined, poolMax = 4): Reader {
  if (databaseUrl) {
    const pool = new pg.Pool({ connectionString: databaseUrl, max: poolMax });
    pool.on('error', () => undefined); // an idle client that lost its server is dropped; the next query opens another
    return {
      async query(name, text, values) {
        return (await pool.query({ name, text, values })).rows;
      },
      close: () => pool.end(),
    };
  }
  const client = () => (orm.em.getConnection() as any).getClient();
  return {
    async query(_name, text, values) {
      return (await client().executeQuery(CompiledQuery.raw(text, values))).rows;
    },
    close: async () => undefined,
  };
}
