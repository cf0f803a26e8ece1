// The raw Kafka request-reply of the service's own client: the same Asker and KafkaBus, answered
// by a consumer that only echoes — what one ask costs with nothing behind it (bench/cluster-orders.ts,
// bench/order-floor.ts).
import { KafkaBus } from '../src/runtime/kafka-bus.ts';
import { cpuMeter } from './cpu.ts';
import { Asker } from '../src/runtime/asker.ts';
import { CORRELATION, REPLY_TO } from '../src/runtime/partition-worker.ts';

export const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : 0;
};

/** `n` asks with `window` in flight on a fresh 12-partition topic; the rate and latency. */
export async function rawRequestReply(brokers: string, prefix: string, n: number, window: number) {
  const bus = new KafkaBus({ brokers: brokers.split(','), clientId: 'bench-raw' });
  const topic = `${prefix}echo`;
  await bus.ensureTopics([{ topic, partitions: 12 }]);
  const echo = await bus.consume({
    groupId: `${prefix}echo`,
    topics: [topic],
    fromBeginning: true,
    onBatch: async (b) => {
      const out = new Map<string, { key: string; value: string }[]>();
      for (const r of b.records) {
        const to = r.headers?.[REPLY_TO];
        if (!to) continue;
        const list = out.get(to) ?? [];
        list.push({ key: r.headers![CORRELATION], value: JSON.stringify({ corr: r.headers![CORRELATION], reply: 'ok' }) });
        out.set(to, list);
      }
      await Promise.all([...out].map(([t, recs]) => bus.send(t, recs)));
      return { done: true };
    },
  });
  const asker = new Asker(bus, `${prefix}raw`, 30_000);
  await asker.start();
  await asker.ask({ topic, key: 'warm', cmd: {} });
  const lat: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: window }, async () => {
      while (next < n) {
        const i = next++;
        const s = performance.now();
        await asker.ask({ topic, key: `k${i % 1000}`, cmd: { i } });
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  await asker.stop();
  await echo.stop();
  await bus.close();
  return { perSec: n / secs, p50: pct(lat, 0.5), p99: pct(lat, 0.99), latencies: lat };
}

/**
 * Warms the broker until an ask stops getting cheaper: a young broker's JIT makes the echo cost
 * 450–585 µs of machine a request in its first minutes and ~180 µs twenty minutes later, and one
 * warm-up run left the floor measured on a fresh broker at half of what it is once warm (a floor
 * measured cold flatters every ratio to it). Runs of `n` asks until two in a row are not `within`
 * cheaper than the cheapest before them (at most `rounds`); answers each run's machine µs per ask.
 */
export async function warmBroker(
  brokers: string,
  prefix: string,
  n: number,
  window: number,
  rounds = 10,
  within = 0.05,
): Promise<number[]> {
  const costs: number[] = [];
  let flat = 0;
  for (let i = 0; i < rounds && flat < 2; i++) {
    const meter = cpuMeter({});
    await rawRequestReply(brokers, `${prefix}${i}.`, n, window);
    const us = (meter.stop().machineBusy * 1e6) / n;
    flat = us < Math.min(Infinity, ...costs) * (1 - within) ? 0 : flat + 1;
    costs.push(us);
  }
  return costs;
}
