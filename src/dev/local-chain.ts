// Development only (never loaded in production): with APP_ENV=development and no SOLANA_RPC_URL,
// `npm start` runs the local chain beside the service, creates the collateral mint and the vault,
// initializes the program and hands the chain's webhook deliveries to this node's mirror in process
// (the webhook route answers 503 to every caller while PARLAY_WEBHOOK_AUTH_SECRET is unset), so
// that a newcomer can place a parlay with `tsx scripts/dev-chain.ts …` and see it in the REST API. It also funds the
// node's settlement delegate (src/node.ts makes one up when none is given), so trades settle here.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Keypair } from '@solana/web3.js';
import { startLocalChain, type LocalChain, type WebhookTarget } from '../chain/local/index.ts';
import { Web3Gateway } from '../chain/gateway.ts';
import { DomainError } from '../errors.ts';

export const DEV_STATE_FILE = '.cache/dev-chain.json';

export interface DevChain {
  chain: LocalChain;
  gateway: Web3Gateway;
  close(): Promise<void>;
}

/** What `npm start` writes to DEV_STATE_FILE for scripts/dev-chain.ts (keys as JSON secret-key arrays). */
export interface DevState {
  rpc: string;
  authority: number[];
  mintAuthority: number[];
  collateralMint: string;
  /** the node's base URL, its settlement delegate and its Platform JWT secret (superuser tokens for the admin API) */
  service?: string;
  delegate?: number[];
  platformJwtSecret?: string;
}

/** What takes the chain's webhook deliveries: the node's parlay mirror (ParlayService.deliver). */
export interface DevMirror {
  deliver(body: unknown): Promise<unknown>;
}

/** A webhook target that hands each delivery to the mirror in process, answering as the route would. */
export function inProcessWebhook(mirror: DevMirror): WebhookTarget {
  return {
    url: 'in-process:/api/parlays/webhooks/indexer/',
    deliver: async (body) => {
      try {
        await mirror.deliver(JSON.parse(body));
        return 200;
      } catch (e) {
        if (e instanceof DomainError) return e.kind === 'invalid' ? 400 : 503; // 503 deferred: retried, as the provider does
        throw e;
      }
    },
  };
}

export async function startDevChain(o: {
  serviceUrl: string;
  mirror: DevMirror;
  port: number;
  log: Logger;
  /** the node's settlement delegate: funded with SOL here (fees, rent), its collateral account (the escrow) created */
  delegate?: Keypair | null;
  platformJwtSecret?: string;
}): Promise<DevChain> {
  let chain: LocalChain;
  const webhooks = [inProcessWebhook(o.mirror)];
  try {
    chain = await startLocalChain({ port: o.port, webhooks });
  } catch {
    chain = await startLocalChain({ port: 0, webhooks });
  }
  const boot = await chain.bootstrap();
  if (o.delegate) await chain.fundWallet(o.delegate.publicKey, 100n * 1_000_000_000n, 0n);
  mkdirSync('.cache', { recursive: true });
  const state: DevState = {
    rpc: chain.url,
    authority: Array.from(boot.authority.secretKey),
    mintAuthority: Array.from(boot.mintAuthority.secretKey),
    collateralMint: boot.collateralMint.toBase58(),
    service: o.serviceUrl,
    ...(o.delegate ? { delegate: Array.from(o.delegate.secretKey) } : {}),
    ...(o.platformJwtSecret ? { platformJwtSecret: o.platformJwtSecret } : {}),
  };
  writeFileSync(DEV_STATE_FILE, JSON.stringify(state, null, 2));
  o.log.info(
    {
      rpc: chain.url,
      vault: boot.vault.toBase58(),
      collateralMint: boot.collateralMint.toBase58(),
      delegate: o.delegate?.publicKey.toBase58(),
      keys: DEV_STATE_FILE,
    },
    'local chain started (development): try `npx tsx scripts/dev-chain.ts new-wallet --out .cache/alice.json`',
  );
  return { chain, gateway: new Web3Gateway(chain.url, boot.authority), close: () => chain.close() };
}
