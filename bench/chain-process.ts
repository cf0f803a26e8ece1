// The local chain of a benchmark in a process of its own, so that its CPU (every settlement's
// execution) is measured apart from the client's. Reads one JSON line on stdin,
//   { "markets": n, "wallets": [[secret key bytes], …] }
// starts the chain, creates n markets' YES / NO mints, funds every wallet (SOL, collateral, YES
// tokens of every market) and answers one JSON line on stdout,
//   { "url", "collateralMint", "tokens": [{ "yes", "no" }, …] }
// then serves until its stdin ends (the benchmark exited) or a signal.
import { createInterface } from 'node:readline';
import { Keypair } from '@solana/web3.js';
import { startLocalChain } from '../src/chain/local/index.ts';
import { OutcomeTokens } from '../test/helpers/chain-market.ts';
import { exitOnSignals } from '../test/helpers/children.ts';
exitOnSignals();

export interface ChainSetup {
  markets: number;
  wallets: number[][];
}
export interface ChainReady {
  url: string;
  collateralMint: string;
  tokens: { yes: string; no: string }[];
}

const lines = createInterface({ input: process.stdin });
const first = await new Promise<string>((resolve) => lines.once('line', resolve));
const setup = JSON.parse(first) as ChainSetup;
const chain = await startLocalChain();
const boot = await chain.bootstrap();
const tokens: OutcomeTokens[] = [];
for (let m = 0; m < setup.markets; m++) tokens.push(await new OutcomeTokens(chain).create());
for (const secret of setup.wallets) {
  const w = Keypair.fromSecretKey(Uint8Array.from(secret));
  await chain.fundWallet(w.publicKey, 10n ** 9n, 10_000_000n * 1_000_000n);
  for (const t of tokens) await t.give(w.publicKey, t.yes.publicKey, 1_000_000n * 1_000_000n);
}
const ready: ChainReady = {
  url: chain.url,
  collateralMint: boot.collateralMint.toBase58(),
  tokens: tokens.map((t) => ({ yes: t.yes.publicKey.toBase58(), no: t.no.publicKey.toBase58() })),
};
process.stdout.write(JSON.stringify(ready) + '\n');
lines.once('close', () => void chain.close().finally(() => process.exit(0)));
