// A fresh PostgreSQL database per test file (the machine's server, trust auth), dropped afterwards.
import pg from 'pg';
import { randomBytes } from 'node:crypto';

export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export async function freshDatabase(prefix = 't'): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database "${name}"`);
  await admin.end();
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists "${name}" with (force)`);
      await c.end();
    },
  };
}
