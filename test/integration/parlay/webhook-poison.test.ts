// Issue 19: an event the store refuses at commit (here a trigger standing for any data error
// PostgreSQL raises) is dead-lettered by the runtime (bisect), its partition goes on, and the
// webhook answers the delivery as the contract says (200, the other events applied), never a 5xx
// that the provider would retry for ever.
import test from 'ava';
import { Keypair } from '@solana/web3.js';
import { testNode, call, WEBHOOK_SECRET, KAFKA_BROKERS } from '../../helpers/node.ts';
import { freshDatabase } from '../../helpers/db.ts';
import { parlayCreated, rawTx } from '../../helpers/events.ts';

const WEBHOOK = '/api/parlays/webhooks/indexer/';

for (const transport of ['in-process', 'kafka'] as const) {
  test(`${transport}: a delivery with an event the database refuses is answered 200; the rest is applied and the partition goes on`, async (t) => {
    const db = await freshDatabase();
    const node = await testNode({ DATABASE_URL: db.url, KAFKA_BROKERS: transport === 'kafka' ? KAFKA_BROKERS : '', TOPIC_PARTITIONS: '1' });
    t.teardown(async () => {
      await node.close();
      await db.drop();
    });
    const sql = (q: string, params: unknown[] = []) => (node.orm.em.fork() as any).execute(q, params) as Promise<any[]>;
    await sql(`create function refuse_parlay_66() returns trigger language plpgsql as $$
      begin if new.parlay_id = 66 then raise exception 'parlay 66 refused' using errcode = '22023'; end if; return new; end $$`);
    await sql('create trigger refuse_parlay_66 before insert on parlays for each row execute function refuse_parlay_66()');
    const user = Keypair.generate().publicKey;
    const post = (body: unknown) => call(node.url, 'POST', WEBHOOK, { auth: WEBHOOK_SECRET, body });

    const started = Date.now();
    const r = await post([
      rawTx('poison-65', 700, [parlayCreated(65, user, 700)]),
      rawTx('poison-66', 701, [parlayCreated(66, user, 701)]),
      rawTx('poison-67', 702, [parlayCreated(67, user, 702)]),
    ]);
    t.is(r.status, 200, JSON.stringify(r.body));
    t.deepEqual(r.body, { processed: 3, skipped: 0 });
    t.true(Date.now() - started < 15_000, `answered in ${Date.now() - started} ms`);
    t.deepEqual(
      (await sql('select parlay_id::int as id from parlays order by parlay_id')).map((x) => x.id),
      [65, 67],
    );
    // The delivery's events of one partition went as one bulk record: refused whole, it was split
    // (kept as such, never applied) and its events asked again one by one; only 66 failed alone.
    const dead = await sql(`select reason, payload from dead_letters where reason like '%parlay 66 refused%' order by id`);
    t.is(dead.filter((d) => !d.reason.startsWith('split:')).length, 1, 'the refused event is kept with its reason');
    const alone = dead.find((d) => !d.reason.startsWith('split:'));
    t.regex(alone.payload, /"parlayId":"66"/);
    t.notRegex(alone.payload, /"parlayId":"65"/);

    // The partition (one: every parlay shares it) goes on: a later delivery is applied at once.
    const later = await post([rawTx('poison-68', 703, [parlayCreated(68, user, 703)])]);
    t.is(later.status, 200);
    t.deepEqual(
      (await sql('select parlay_id::int as id from parlays order by parlay_id')).map((x) => x.id),
      [65, 67, 68],
    );
  });
}
