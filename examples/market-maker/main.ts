// The reference market maker from the command line; several wallets make it a load generator.
//
//   npx tsx examples/market-maker/main.ts --urls http://127.0.0.1:8080,http://127.0.0.1:8081 \
//     --market 0x… --keypair .cache/alice.json [--keypair .cache/bob.json …] \
//     [--mid 0.5] [--half-spread 2] [--levels 2] [--size 5] [--refresh-ms 1000] [--walk 1] \
//     [--take-every 3] [--seconds 0]
//
// Each --keypair (a JSON secret-key array, as `scripts/dev-chain.ts new-wallet` writes) runs one
// maker; the wallets need collateral and YES tokens. --seconds 0 runs until Ctrl-C. On exit it
// cancels its quotes, reconciles its fills with the ledger and prints a table per wallet.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { MarketMaker } from './market-maker.ts';

async function main() {
  const { values } = parseArgs({
    options: {
      urls: { type: 'string' },
      market: { type: 'string' },
      keypair: { type: 'string', multiple: true },
      mid: { type: 'string' },
      'half-spread': { type: 'string' },
      levels: { type: 'string' },
      size: { type: 'string' },
      'refresh-ms': { type: 'string' },
      walk: { type: 'string' },
      'take-every': { type: 'string' },
      seconds: { type: 'string' },
      quiet: { type: 'boolean' },
    },
  });
  if (!values.urls || !values.market || !values.keypair?.length) {
    throw new Error('usage: --urls URL[,URL…] --market 0x… --keypair FILE [--keypair FILE …] [options]; see the file header');
  }
  const num = (v: string | undefined) => (v === undefined ? undefined : Number(v));
  const makers = values.keypair.map(
    (file) =>
      new MarketMaker({
        urls: values.urls!.split(','),
        market: values.market!,
        wallet: { secretKey: Uint8Array.from(JSON.parse(readFileSync(file, 'utf8'))) },
        mid: values.mid,
        halfSpreadTicks: num(values['half-spread']),
        levels: num(values.levels),
        size: values.size,
        refreshMs: num(values['refresh-ms']),
        walkTicks: num(values.walk),
        takeEvery: num(values['take-every']),
        log: values.quiet ? undefined : (line) => console.error(line),
      }),
  );
  for (const m of makers) await m.start();
  console.error(`${makers.length} maker(s) quoting ${values.market}`);
  const report = setInterval(() => {
    const s = makers.map((m) => m.stats);
    const secs = (Date.now() - s[0].startedAt) / 1000;
    const placed = s.reduce((a, x) => a + x.placed, 0);
    console.error(
      `${secs.toFixed(0)} s: ${placed} orders (${(placed / secs).toFixed(1)}/s), ${s.reduce((a, x) => a + x.fills, 0)} fills, ${s.reduce((a, x) => a + x.errors, 0)} errors`,
    );
  }, 5000);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    clearInterval(report);
    const results = await Promise.all(makers.map((m) => m.stop()));
    console.table(
      makers.map((m, i) => ({
        wallet: m.address,
        orders: m.stats.placed,
        canceled: m.stats.canceled,
        'not canceled': JSON.stringify(m.stats.notCanceled),
        rejected: JSON.stringify(m.stats.rejected),
        fills: m.fills.size,
        'from stream': m.stats.fromStream,
        'from REST': m.stats.fromRest,
        'sign-ins': m.stats.signIns,
        failovers: m.stats.failovers,
        reconnects: m.stats.reconnects,
        'live requotes': m.stats.liveRequotes,
        'stream alone == ledger': results[i].missing.length === 0 && results[i].extra.length === 0,
      })),
    );
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
  const seconds = Number(values.seconds ?? 0);
  if (seconds > 0) setTimeout(() => void stop(), seconds * 1000);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
