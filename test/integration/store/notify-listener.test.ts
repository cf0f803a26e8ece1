// src/store/notify-listener.ts on PostgreSQL: `sync()` resolves only once every notification
// committed before its call has been handed over, also when many callers sync at once (they share
// tokens: fewer round trips than callers, none answered early).
import test from 'ava';
import pg from 'pg';
import { freshDatabase } from '../../helpers/db.ts';
import { NotifyListener } from '../../../src/store/notify-listener.ts';

const log = { warn() {} };

test('concurrent syncs: each waits for what was committed before it, and they share their tokens', async (t) => {
  const db = await freshDatabase('notify');
  const writer = new pg.Client({ connectionString: db.url });
  const watcher = new pg.Client({ connectionString: db.url });
  const received = new Set<string>();
  const listener = new NotifyListener({ url: db.url, channel: 'ch', onPayload: (p) => received.add(p), onGap() {}, log });
  try {
    await writer.connect();
    await watcher.connect();
    // Every token a sync sends, seen by a second listener of the channels.
    const tokens = new Map<string, number>();
    watcher.on('notification', (n) => {
      if (n.payload?.startsWith('sync:')) tokens.set(n.channel, (tokens.get(n.channel) ?? 0) + 1);
    });
    await watcher.query('listen ch');
    await watcher.query('listen together');
    await listener.start();
    t.true(listener.listening);

    const callers = 40;
    const early: number[] = [];
    await Promise.all(
      Array.from({ length: callers }, async (_, i) => {
        // Committed, then synced: the sync may not resolve before this payload was handed over.
        await writer.query('select pg_notify($1, $2)', ['ch', `p${i}`]);
        await listener.sync();
        if (!received.has(`p${i}`)) early.push(i);
      }),
    );
    t.deepEqual(early, [], 'no sync resolved before a notification committed before its call');
    t.is(received.size, callers);
    t.true((tokens.get('ch') ?? 0) <= callers);

    // Syncs called while one is out share the next token: called together, two tokens (the first
    // and the one after it), whatever the machine's load. (How many share when the calls are spread
    // as above depends on timing: on a loaded machine every one went alone.)
    const together = new NotifyListener({ url: db.url, channel: 'together', onPayload() {}, onGap() {}, log });
    try {
      await together.start();
      await Promise.all(Array.from({ length: callers }, () => together.sync()));
      await watcher.query('select 1'); // the watcher's notifications so far are in
      for (let i = 0; i < 50 && (tokens.get('together') ?? 0) < 2; i++) await new Promise((r) => setTimeout(r, 20));
      t.is(tokens.get('together'), 2, `${tokens.get('together')} tokens for ${callers} callers at once`);
    } finally {
      await together.close();
    }

    // Alone, a sync still makes its own round trip and waits for it.
    await writer.query('select pg_notify($1, $2)', ['ch', 'last']);
    await listener.sync();
    t.true(received.has('last'));
  } finally {
    await listener.close();
    await writer.end();
    await watcher.end();
    await db.drop();
  }
});

test('a sync while not listening (no connection yet) resolves at once', async (t) => {
  const listener = new NotifyListener({
    url: 'postgres://postgres@127.0.0.1:1/none',
    channel: 'ch',
    onPayload() {},
    onGap() {},
    log,
    reconnectMs: 60_000,
  });
  await listener.start(); // refused: not listening, reconnects later
  t.false(listener.listening);
  await listener.sync();
  await listener.close();
  t.pass();
});
