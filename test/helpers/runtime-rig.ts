// A runtime on its own (toy kinds, no service): a fresh database, the runtime on `bus`, an asker;
// everything stopped and dropped when the test ends.
import type { ExecutionContext } from 'ava';
import pino from 'pino';
import { Runtime } from '../../src/runtime/runtime.ts';
import { Asker } from '../../src/runtime/asker.ts';
import type { ReplyServerOptions } from '../../src/runtime/direct-replies.ts';
import { SqlRuntimeStore } from '../../src/store/runtime-store.ts';
import { openOrm, migrate } from '../../src/store/orm.ts';
import type { ActorKind, Bus } from '../../src/runtime/types.ts';
import { freshDatabase } from './db.ts';

export async function startRuntime(
  t: ExecutionContext,
  o: {
    bus: Bus;
    prefix: string;
    nodeId: string;
    kinds: ActorKind<any, any, any, any>[];
    partitions: Record<string, number>;
    /** The asker's reply server (direct replies), if any. */
    direct?: ReplyServerOptions;
  },
) {
  const db = await freshDatabase();
  const orm = await openOrm({ databaseUrl: db.url });
  await migrate(orm, db.url);
  const runtime = new Runtime({
    bus: o.bus,
    store: new SqlRuntimeStore(orm),
    nodeId: o.nodeId,
    groupId: `${o.prefix}g`,
    kinds: o.kinds.map((kind) => ({ kind, owns: () => true })),
    partitions: o.partitions,
    log: pino({ level: 'silent' }),
  });
  await runtime.start();
  const asker = new Asker(o.bus, `${o.prefix}${o.nodeId}`, 20_000, o.direct);
  await asker.start();
  t.teardown(async () => {
    await asker.stop();
    await runtime.stop();
    await orm.close();
    await o.bus.close();
    await db.drop();
  });
  return { orm, runtime, asker };
}
