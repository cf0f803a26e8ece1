// Hot reads (the routes users poll) as named prepared statements: PostgreSQL plans each once per
// connection instead of once per request, and parameters travel apart from the text. On PostgreSQL
// a small pool of its own; on PGlite the ORM's engine, the same `$n` parameters.
import pg from 'pg';
import { CompiledQuery } from 'kysely';
import { pgliteEngineOf, type Orm } from './orm.ts';
import { readRows, textParams } from './pglite-script.ts';

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
  // PGlite: the statement prepared once per name and run in one trip through the engine, its rows
  // read straight from the answer (src/store/pglite-script.ts); `query` costs several trips and a
  // result set built with a copy of every type parser, about 270 µs more per read.
  const client = () => (orm.em.getConnection() as any).getClient();
  const engine = pgliteEngineOf(orm)!;
  return {
    async query(name, text, values) {
      if (textParams(values)) return (await readRows(await engine, text, values, name)) as any[];
      return (await client().executeQuery(CompiledQuery.raw(text, values))).rows;
    },
    close: async () => undefined,
  };
}
