// Development only (never loaded in production): with APP_ENV=development and no SOLANA_RPC_URL,
// `npm start` runs the local chain beside the service, creates the collateral mint and the vault,
// initializes the program and points the chain's webhooks at this node, so that a newcomer can
// place a parlay with `tsx scripts/dev-chain.ts …` and see it in the REST API.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { startLocalChain, type LocalChain } from '../chain/local/index.ts';
import { Web3Gateway } from '../chain/gateway.ts';

export const DEV_STATE_FILE = '.cache/dev-chain.json';

export interface DevChain {
  chain: LocalChain;
  gateway: Web3Gateway;
  close(): Promise<void>;
}

export async function startDevChain(o: { serviceUrl: string; webhookSecret: string; port: number; log: Logger }): Promise<DevChain> {
  let chain: LocalChain;
  try {
    chain = await startLocalChain({ port: o.port, webhooks: [{ url: `${o.serviceUrl}/api/parlays/webhooks/indexer/`, authorization: o.webhookSecret }] });
  } catch {
    chain = await startLocalChain({ port: 0, webhooks: [{ url: `${o.serviceUrl}/api/parlays/webhooks/indexer/`, authorization: o.webhookSecret }] });
  }
  const boot = await chain.bootstrap();
  mkdirSync('.cache', { recursive: true });
  writeFileSync(DEV_STATE_FILE, JSON.stringify({
    rpc: chain.url,
    authority: Array.from(boot.authority.secretKey),
    mintAuthority: Array.from(boot.mintAuthority.secretKey),
    collateralMint: boot.collateralMint.toBase58(),
  }, null, 2));
  o.log.info({ rpc: chain.url, vault: boot.vault.toBase58(), collateralMint: boot.collateralMint.toBase58(), keys: DEV_STATE_FILE },
    'local chain started (development): try `npx tsx scripts/dev-chain.ts new-wallet --out .cache/alice.json`');
  return { chain, gateway: new Web3Gateway(chain.url, boot.authority), close: () => chain.close() };
}
