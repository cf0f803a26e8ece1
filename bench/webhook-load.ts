// The ingest benches' load: webhook deliveries of ParlayCreated transactions (`perDelivery` per
// body) and a client that posts them with `concurrency` requests in flight.
import { Keypair } from '@solana/web3.js';
import { parlayCreated, rawTx } from '../test/helpers/events.ts';

export function makeDeliveries(events: number, perDelivery: number): string[] {
  const users = Array.from({ length: 500 }, () => Keypair.generate().publicKey);
  const deliveries: string[] = [];
  for (let i = 0; i < events; i += perDelivery) {
    const txs = [];
    for (let j = i; j < Math.min(events, i + perDelivery); j++)
      txs.push(rawTx(`sig-${j}`, 10_000 + j, [parlayCreated(j + 1, users[j % users.length], 10_000 + j)]));
    deliveries.push(JSON.stringify(txs));
  }
  return deliveries;
}

/** Posts every delivery (each must answer 200; several urls take turns); returns each delivery's latency in ms. */
export async function deliverAll(url: string | string[], deliveries: string[], concurrency: number, secret = 'w'): Promise<number[]> {
  const urls = Array.isArray(url) ? url : [url];
  let next = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < deliveries.length) {
        const i = next++;
        const body = deliveries[i];
        const t0 = performance.now();
        const r = await fetch(urls[i % urls.length], {
          method: 'POST',
          headers: { authorization: secret, 'content-type': 'application/json' },
          body,
        });
        if (r.status !== 200) throw new Error(`delivery failed ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return latencies;
}
