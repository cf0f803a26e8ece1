// Benchmark (not a test): this machine's floor for orders. Every order through the service needs at
// least (1) an HTTP request-reply whose body's ed25519 signature is checked and (2) one Kafka
// request-reply to the owner of its key. Each is measured alone, with the whole machine to itself
// and pre-signed bodies, as the CPU of the whole machine per request; their sum is what one order
// costs at the very least, before any reservation, matching, database write or ledger record.
// Usage: npx tsx bench/order-floor.ts [requests=20000] [httpConcurrency=64] [kafkaWindow=256]
//   KAFKA_BROKERS=… to use a running broker; otherwise one is started on 127.0.0.1:19592.
import { stackedBars } from './plot.ts';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Keypair } from '@solana/web3.js';
import { order } from '../test/helpers/clob.ts';
import { orderHash, verifyOrderSignature } from '../src/clob/signed-order.ts';
import { freePort } from '../test/helpers/process-node.ts';
import { cpuMeter } from './cpu.ts';
import { startBareServer } from './bare-server.ts';
import { pct, rawRequestReply, warmBroker } from './kafka-echo.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals(); // stopped by a signal, a bench takes its service nodes with it

const [n = 20_000, httpConcurrency = 64, kafkaWindow = 256] = process.argv.slice(2).map(Number);
const root = new URL('..', import.meta.url).pathname;
const cores = availableParallelism();
const goal = 10_000;

// 0. The signature check alone, in this process: parse, hash, ed25519 (Node's crypto, OpenSSL).
const signed = Array.from({ length: 5000 }, (_, i) =>
  JSON.stringify({
    order: order(Keypair.generate(), Keypair.generate().publicKey.toBase58(), 'BUY', '0.55', '3', { salt: String(i + 1) }),
  }),
);
const check = (b: string) => {
  const o = JSON.parse(b).order;
  if (!verifyOrderSignature(o, orderHash(o))) throw new Error('bad signature');
};
for (const b of signed) check(b); // warm (and each signer's key imported once, as the service caches them)
const tc = performance.now();
for (const b of signed) check(b);
const checkUs = ((performance.now() - tc) * 1000) / signed.length;

// 1. HTTP + signature check, on a bare server.
const wallets = Array.from({ length: 24 }, () => Keypair.generate());
const token = Keypair.generate().publicKey.toBase58();
const bodies = Array.from({ length: n }, (_, i) =>
  JSON.stringify({
    order: order(wallets[i % wallets.length], token, i % 2 ? 'BUY' : 'SELL', '0.55', '3', { salt: String(1_000_000 + i) }),
    orderType: 'GTC',
  }),
);
const port = await freePort();
const server = await startBareServer('bench/order-floor-server.ts', { PORT: String(port) });
const post = (body: string) =>
  fetch(`http://127.0.0.1:${port}/v1/order`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`answer ${r.status}`);
  });
for (const b of bodies.slice(0, 2000)) await post(b); // warm (not counted)
const lat: number[] = [];
let next = 0;
const m1 = cpuMeter({ server: () => [server.pid!], client: () => [process.pid] });
const t1 = performance.now();
await Promise.all(
  Array.from({ length: httpConcurrency }, async () => {
    while (next < bodies.length) {
      const b = bodies[next++];
      const s = performance.now();
      await post(b);
      lat.push(performance.now() - s);
    }
  }),
);
const httpSecs = (performance.now() - t1) / 1000;
const http = m1.stop();
server.kill('SIGTERM');

// 2. One Kafka request-reply (the service's Asker and KafkaBus against an echo), same machine.
let brokers = process.env.KAFKA_BROKERS;
const ownBroker = !brokers;
if (!brokers) {
  execFileSync('bash', ['deploy/kafka.sh', 'start', '--port', '19592'], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  brokers = '127.0.0.1:19592';
}
const warm = await warmBroker(brokers, `floorwarm${Date.now()}.`, n, kafkaWindow); // the broker's JIT, not counted
console.log('broker warm-up, machine µs per ask per run: %s', warm.map((r) => Math.round(r)).join(', '));
const m2 = cpuMeter({});
const echo = await rawRequestReply(brokers, `floor${Date.now()}.`, n, kafkaWindow);
const kafka = m2.stop();
if (ownBroker) execFileSync('bash', ['deploy/kafka.sh', 'stop', '--port', '19592'], { cwd: root, stdio: 'ignore' });

const us = (busy: number) => Math.round((busy * 1e6) / n);
const row = (
  part: string,
  perSec: number,
  p50: number,
  p99: number,
  m: { machineBusy: number; seconds: number; used: Record<string, number> },
) => ({
  part,
  'req/s': Math.round(perSec),
  'p50 ms': p50.toFixed(1),
  'p99 ms': p99.toFixed(1),
  'machine µs / request': us(m.machineBusy),
  'server µs': m.used.server === undefined ? '' : us(m.used.server),
  'client µs': m.used.client === undefined ? '' : us(m.used.client),
  'machine busy': `${Math.round((100 * m.machineBusy) / (m.seconds * cores))}%`,
});
console.log(`\norder floor on this machine (${cores} cores), ${n} requests each`);
console.table([
  row(`HTTP + ed25519 check, bare server (${httpConcurrency} in flight)`, n / httpSecs, pct(lat, 0.5), pct(lat, 0.99), http),
  row(`Kafka request-reply, echo (${kafkaWindow} in flight)`, echo.perSec, echo.p50, echo.p99, kafka),
]);
const floor = us(http.machineBusy) + us(kafka.machineBusy);
console.log('the signature check alone (parse, hash, ed25519; one core): %s µs per order', checkUs.toFixed(0));
console.log(
  'the signature check and one Kafka request-reply alone: %s µs per order, at most about %s orders/s with no HTTP, no database, no matching',
  Math.round(checkUs + us(kafka.machineBusy)),
  Math.round((cores * 1e6) / (checkUs + us(kafka.machineBusy))).toLocaleString(),
);
console.log(
  'without the load generator (the HTTP client), the server side alone: %s µs per order, at most about %s orders/s',
  us(http.used.server) + us(kafka.machineBusy),
  Math.round((cores * 1e6) / (us(http.used.server) + us(kafka.machineBusy))).toLocaleString(),
);
console.log(
  'one order costs at least %s µs of machine here (HTTP and signature %s + one Kafka request-reply %s): at most about %s orders/s on %s cores with nothing else done; the goal, %s orders/s, allows %s µs per order',
  floor,
  us(http.machineBusy),
  us(kafka.machineBusy),
  Math.round((cores * 1e6) / floor).toLocaleString(),
  cores,
  goal.toLocaleString(),
  Math.round((cores * 1e6) / goal),
);
const serverUs = us(http.used.server);
const clientUs = us(http.used.client);
console.log(
  'plot: %s',
  await stackedBars(
    'order-floor',
    'order floor: machine µs per order, each part alone',
    [
      { bar: 'signature check (one core)', part: 'signature check', value: checkUs },
      { bar: 'server side: HTTP + signature, one request-reply', part: 'HTTP server + signature', value: serverUs },
      { bar: 'server side: HTTP + signature, one request-reply', part: 'Kafka request-reply', value: us(kafka.machineBusy) },
      { bar: 'with the load generator', part: 'HTTP server + signature', value: serverUs },
      { bar: 'with the load generator', part: 'Kafka request-reply', value: us(kafka.machineBusy) },
      { bar: 'with the load generator', part: 'HTTP client', value: clientUs },
    ],
    { unit: `machine µs per order (${cores} cores)`, budget: { value: (cores * 1e6) / goal, label: `${goal.toLocaleString()} orders/s` } },
  ),
);
process.exit(0);
