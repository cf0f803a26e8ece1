// Benchmark (not a test): what a webhook event's command costs on its way through a bulk record on
// Kafka, with creations as objects and packed (topics/parlay-events.ts `packParlayCommand`), on the
// ingest benches' deliveries. The sender's part (each command's JSON, joined into a record's text)
// and the owner's (the record parsed, each command unpacked and checked by its kind) are timed in
// this process with the runtime's own functions; the bytes are the records' text. Kafka's own
// encoding, the broker and the sockets carry those bytes on top.
// Usage: npx tsx bench/bulk-wire.ts [events=20000] [rounds=7]
import { bulkEnvelopeJson, bulkPartJson, commandsOf } from '../src/runtime/envelope.ts';
import { decodeDelivery } from '../src/parlay/ingest.ts';
import { parlayKinds } from '../src/parlay/kinds.ts';
import { PARLAY_PROGRAM_ID } from '../src/chain/program.ts';
import { packParlayCommand, type ParlayCommand } from '../topics/parlay-events.ts';
import { makeDeliveries } from './webhook-load.ts';

const [events = 20_000, rounds = 7] = process.argv.slice(2).map(Number);
const PER_RECORD = 21; // a delivery of 250 events over 12 partitions
const log = { warn: () => undefined };
const commands: { key: string; cmd: ParlayCommand }[] = [];
for (const body of makeDeliveries(events, 250)) {
  const d = decodeDelivery({ programId: PARLAY_PROGRAM_ID.toBase58(), log }, JSON.parse(body));
  for (const c of d.claims)
    for (const r of c.event.commands) if (r.target === 'parlay') commands.push({ key: r.key, cmd: r.cmd as ParlayCommand });
}
const kind = parlayKinds('parlay.events').find((k) => k.owns('1'))!.kind;

function send(pack: boolean): string[] {
  const records: string[] = [];
  for (let i = 0; i < commands.length; i += PER_RECORD) {
    const parts = commands.slice(i, i + PER_RECORD).map((c) => bulkPartJson(c.key, pack ? packParlayCommand(c.cmd) : c.cmd));
    records.push(bulkEnvelopeJson(parts, Date.now()));
  }
  return records;
}

function receive(records: string[]): number {
  let n = 0;
  for (const value of records)
    for (const c of commandsOf('1', value)) {
      kind.parse(c.envelope.cmd, c.envelope);
      n++;
    }
  return n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const pack of [false, true]) {
  const sendUs: number[] = [];
  const receiveUs: number[] = [];
  let records: string[] = [];
  for (let r = 0; r < rounds + 1; r++) {
    let t = performance.now();
    records = send(pack);
    const s = performance.now() - t;
    t = performance.now();
    if (receive(records) !== commands.length) throw new Error('a command was lost');
    const v = performance.now() - t;
    if (r === 0) continue; // warm-up
    sendUs.push((s * 1000) / commands.length);
    receiveUs.push((v * 1000) / commands.length);
  }
  const bytes = records.reduce((a, x) => a + Buffer.byteLength(x), 0) / commands.length;
  rows.push({
    creations: pack ? 'packed' : 'objects',
    'bytes/event': Math.round(bytes),
    'sender µs/event': median(sendUs).toFixed(2),
    'owner µs/event': median(receiveUs).toFixed(2),
    'both µs/event': (median(sendUs) + median(receiveUs)).toFixed(2),
  });
}
console.log(`${commands.length} ParlayCreated commands, ${PER_RECORD} per bulk record, median of ${rounds} rounds`);
console.table(rows);
