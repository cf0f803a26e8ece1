// Wiring of the settlement side into a node: the delegate's key, the executor and the mint/merge
// operations (src/node.ts calls these; everything else lives in this folder and src/chain/).
import { existsSync, readFileSync } from 'node:fs';
import { Connection, PublicKey, type Keypair } from '@solana/web3.js';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Bus } from '../runtime/types.ts';
import type { Orm } from '../store/orm.ts';
import { parseKeypair, Web3Gateway, type ChainGateway } from '../chain/gateway.ts';
import { SettlementExecutor } from './executor.ts';

/**
 * The delegate's keypair from CLOB_DELEGATE_KEYPAIR (a JSON secret-key array or a file holding
 * one). CLOB_DELEGATE, when also set, must name the same key (the node then names this key's
 * public key as the delegate; the settings are not changed).
 */
export function delegateKeypair(cfg: Config): Keypair | null {
  if (!cfg.delegateKeypair) return null;
  const v = cfg.delegateKeypair;
  let kp: Keypair;
  try {
    kp = parseKeypair(existsSync(v) ? readFileSync(v, 'utf8') : v);
  } catch (e) {
    throw new Error(`CLOB_DELEGATE_KEYPAIR is neither a JSON secret-key array nor a file holding one: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const pub = kp.publicKey.toBase58();
  if (cfg.delegate && cfg.delegate !== pub)
    throw new Error(`CLOB_DELEGATE (${cfg.delegate}) is not the key of CLOB_DELEGATE_KEYPAIR (${pub})`);
  return kp;
}

/**
 * A web3.js connection to the node's chain (the gateway's RPC endpoint, or SOLANA_RPC_URL) whose
 * every request gives up after `timeoutMs`: a hung RPC must not hold a settlement step (and its
 * lease on the trade) for ever.
 */
export function connectionOf(cfg: Config, chain: () => ChainGateway | null, timeoutMs = 10_000): () => Connection | null {
  let own: Connection | null = null;
  return () => {
    const c = chain();
    const url = c instanceof Web3Gateway ? c.connection.rpcEndpoint : cfg.solanaRpcUrl;
    if (!url) return null;
    if (own?.rpcEndpoint !== url) {
      own = new Connection(url, {
        commitment: 'confirmed',
        disableRetryOnRateLimit: true,
        fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) }),
      });
    }
    return own;
  };
}

export interface SettlementWiring {
  cfg: Config;
  orm: Orm;
  bus: Bus;
  log: Logger;
  url: string;
  delegate: Keypair;
  connection: () => Connection | null;
  collateralMint: () => Promise<string | null>;
  bookTopic: string;
  tradesTopic: string;
  /** Wakes the outbox relay (the executor's status news for the books go through the outbox). */
  onOutbox?: () => void;
}

export async function startSettlement(w: SettlementWiring): Promise<SettlementExecutor> {
  const ex = new SettlementExecutor({
    orm: w.orm,
    bus: w.bus,
    onOutbox: w.onOutbox,
    log: w.log.child({ part: 'settlement' }),
    connection: w.connection,
    delegate: w.delegate,
    feeRecipient: w.cfg.feeRecipient ? new PublicKey(w.cfg.feeRecipient) : w.delegate.publicKey,
    collateralMint: w.collateralMint,
    bookTopic: w.bookTopic,
    tradesTopic: w.tradesTopic,
    groupId: `${w.cfg.topicPrefix}${w.cfg.groupId}.settlement`,
    fromBus: !!w.cfg.databaseUrl, // the ledger relay runs with PostgreSQL; embedded, the executor reads the ledger table
    maxAttempts: w.cfg.settlementMaxAttempts,
    cuPrice: BigInt(w.cfg.settlementCuPrice),
    pollMs: w.cfg.settlementPollMs,
    crashPoint: w.cfg.crashPoints.settlement,
    sizeUpdate: async (body) => {
      const r = await fetch(`${w.url}/v1/orders/size-update`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-internal-token': w.cfg.clobInternalToken },
        body: JSON.stringify(body),
      });
      if (!r.ok) throw new Error(`size-update answered ${r.status}: ${await r.text()}`);
    },
  });
  await ex.start();
  return ex;
}
