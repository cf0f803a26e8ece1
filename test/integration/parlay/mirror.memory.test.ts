// The fixture deliveries through the in-process bus, on PGlite and on PostgreSQL.
import test from 'ava';
import { testNode } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { redeliverAll, runFixtureScenario } from '../../helpers/scenario.ts';

test('fixtures through the in-process bus on PGlite', async (t) => {
  const node = await testNode();
  t.teardown(() => node.close());
  await runFixtureScenario(t, node.url);
  await redeliverAll(t, node.url);
});

test('fixtures through the in-process bus on PostgreSQL', async (t) => {
  const db = await freshDatabase();
  const node = await testNode({ DATABASE_URL: db.url });
  t.teardown(async () => {
    await node.close();
    await db.drop();
  });
  await runFixtureScenario(t, node.url);
  await redeliverAll(t, node.url);
});
