// Writes the next migration from the difference between the entities and a scratch database
// migrated to the current head: `npx tsx scripts/make-migration.ts`.
import pg from 'pg';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { openOrm, migrate } from '../src/store/orm.ts';

const admin = process.env.TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const c = new pg.Client({ connectionString: admin });
await c.connect();
await c.query('drop database if exists mig_scratch');
await c.query('create database mig_scratch');
await c.end();
const url = new URL(admin);
url.pathname = '/mig_scratch';
const orm = await openOrm({ databaseUrl: url.toString() });
const initial = (await orm.migrator.getExecuted()).length === 0 && (await orm.migrator.getPending()).length === 0;
await migrate(orm, url.toString());
const r = await orm.migrator.create(new URL('../src/store/migrations', import.meta.url).pathname, false, initial);
console.log(r.fileName || '(no changes)', r.diff.up.length, 'statements');
// Rewrite the list the ORM loads (src/store/migrations/index.ts).
const dir = new URL('../src/store/migrations/', import.meta.url).pathname;
const names = readdirSync(dir)
  .filter((f) => /^Migration\d+\.ts$/.test(f))
  .map((f) => f.slice(0, -3))
  .sort();
writeFileSync(
  `${dir}index.ts`,
  `// Every migration, in order. \`npm start\` applies the pending ones.\n${names.map((n) => `import { ${n} } from './${n}.ts';`).join('\n')}\n\nexport const migrationsList = [\n${names.map((n) => `  { name: '${n}', class: ${n} },`).join('\n')}\n];\n`,
);
for (const f of readdirSync('.')) if (f.startsWith('.snapshot-')) rmSync(f);
await orm.close();
