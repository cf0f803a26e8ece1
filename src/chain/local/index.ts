// A local Solana chain for development and tests: LiteSVM (real System and SPL Token programs)
// behind a JSON-RPC 2.0 endpoint on loopback, with the parlay program emulated in TypeScript at
// its IDL address, raw-transaction webhook delivery and fault injection.
//
//   const chain = await startLocalChain({ port: 0, webhooks: [{ url, authorization }] });
//   const boot = await chain.bootstrap();
//   const conn = new Connection(chain.url, 'confirmed'); // ws on port + 1, as a validator
import { Connection, type Commitment, type Keypair, type PublicKey } from '@solana/web3.js';
import type { LiteSVM } from 'litesvm';
import type { ParlayAccountData, U64, UpdateConfigArgs } from '../program.ts';
import { Chain } from './chain.ts';
import { DevHelpers, type Bootstrap, type BootstrapOptions, type LegSpec, type SendOptions, type TxResult } from './dev-helpers.ts';
import type { Faults } from './faults.ts';
import type { ConfigState } from './parlay/state.ts';
import { RpcServer } from './rpc/server.ts';
import { WebhookDelivery, type WebhookOptions, type WebhookTarget } from './webhooks.ts';

export type { Bootstrap, BootstrapOptions, LegSpec, SendOptions, TxResult } from './dev-helpers.ts';
export type { Faults, RpcErrorFault, RpcHangFault, FaultStats } from './faults.ts';
export type { WebhookDelivery, WebhookOptions, WebhookStats, WebhookTarget, WebhookAttempt } from './webhooks.ts';
export type { ConfigState } from './parlay/state.ts';
export type { TransactionErrorJson, InstructionErrorJson } from './tx-errors.ts';
export { BLOCKHASH_VALID_SLOTS } from './ledger.ts';

export interface LocalChainOptions {
  /** 0 (default) = a free port; the WebSocket endpoint is also served on port + 1 when free */
  port?: number;
  host?: string;
  webhooks?: WebhookTarget[];
  webhookShuffle?: boolean;
  webhookDuplicate?: boolean;
  /** retry/backoff/timeout of webhook delivery */
  webhookOptions?: WebhookOptions;
  /** advance the slot on a timer instead of once per landed transaction */
  slotMs?: number;
  /** program id of the emulated parlay program (default: the IDL's address) */
  programId?: PublicKey;
}

export interface LocalChain {
  url: string;
  /** WebSocket endpoint (port + 1 when it was free, else the RPC port itself) */
  wsUrl: string;
  port: number;
  svm: LiteSVM;
  chain: Chain;
  faults: Faults;
  webhooks: WebhookDelivery;
  /** WebSocket subscriptions held by the chain's RPC, of one kind (for tests) */
  subscriptions(kind: 'account' | 'signature' | 'slot' | 'logs'): number;
  /** cuts every WebSocket connection at once, as a network failure would (the endpoint stays up) */
  dropWebSockets(): void;
  /** a web3.js Connection to this chain */
  connection(commitment?: Commitment): Connection;
  close(): Promise<void>;
  bootstrap(opts?: BootstrapOptions): Promise<Bootstrap>;
  fundWallet(owner: PublicKey, lamports: bigint, collateralAmount: bigint): Promise<PublicKey>;
  createParlay(user: Keypair, args: { parlayId: U64; stake: U64; legs: LegSpec[] }, opts?: SendOptions): Promise<TxResult>;
  settleLeg(parlayId: U64, legIndex: number, status: number | 'won' | 'lost' | 'voided', resolver?: Keypair): Promise<TxResult>;
  claimParlay(user: Keypair, parlayId: U64): Promise<TxResult>;
  voidParlay(parlayId: U64, authority?: Keypair): Promise<TxResult>;
  updateConfig(args: UpdateConfigArgs, authority?: Keypair): Promise<TxResult>;
  seedVault(depositor: Keypair, amount: bigint): Promise<TxResult>;
  withdrawVault(amount: bigint, authority?: Keypair, recipientToken?: PublicKey): Promise<TxResult>;
  /** the wallet's collateral ATA */
  tokenAccount(owner: PublicKey): PublicKey;
  tokenBalance(account: PublicKey): bigint;
  vaultBalance(): bigint;
  readParlay(parlayId: U64): ParlayAccountData | null;
  readConfig(): ConfigState | null;
  advanceSlots(n: number): void;
  /** moves the chain clock by `seconds` */
  warpTime(seconds: number): void;
  dev: DevHelpers;
}

export async function startLocalChain(opts: LocalChainOptions = {}): Promise<LocalChain> {
  const chain = new Chain({ slotMs: opts.slotMs, programId: opts.programId });
  const server = new RpcServer(chain);
  const host = opts.host ?? '127.0.0.1';
  const { port, wsPort } = await server.listen(opts.port ?? 0, host);
  const webhooks = new WebhookDelivery(opts.webhooks ?? [], {
    ...opts.webhookOptions,
    shuffle: opts.webhookShuffle ?? opts.webhookOptions?.shuffle,
    duplicate: opts.webhookDuplicate ?? opts.webhookOptions?.duplicate,
  });
  chain.onLanded((rec) => {
    if (chain.touchesProgram(rec)) webhooks.enqueue(rec);
  });
  const dev = new DevHelpers(chain);
  const urlHost = host.includes(':') ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  const wsUrl = `ws://${urlHost}:${wsPort}`;
  return {
    url,
    wsUrl,
    port,
    svm: chain.svm.svm,
    chain,
    faults: chain.faults,
    webhooks,
    dev,
    subscriptions: (kind) => server.pubsub.count(kind),
    dropWebSockets: () => server.dropWebSockets(),
    connection: (commitment = 'confirmed') => new Connection(url, { commitment, wsEndpoint: wsUrl }),
    async close() {
      chain.stop();
      webhooks.close();
      await server.close();
    },
    bootstrap: async (o) => dev.bootstrap(o),
    fundWallet: async (owner, lamports, amount) => dev.fundWallet(owner, lamports, amount),
    createParlay: async (user, args, o) => dev.createParlay(user, args, o),
    settleLeg: async (id, leg, status, resolver) => dev.settleLeg(id, leg, status, resolver),
    claimParlay: async (user, id) => dev.claimParlay(user, id),
    voidParlay: async (id, authority) => dev.voidParlay(id, authority),
    updateConfig: async (args, authority) => dev.updateConfig(args, authority),
    seedVault: async (depositor, amount) => dev.seedVault(depositor, amount),
    withdrawVault: async (amount, authority, recipient) => dev.withdrawVault(amount, authority, recipient),
    tokenAccount: (owner) => dev.tokenAccount(owner),
    tokenBalance: (account) => dev.tokenBalance(account),
    vaultBalance: () => dev.vaultBalance(),
    readParlay: (id) => dev.readParlay(id),
    readConfig: () => dev.readConfig(),
    advanceSlots: (n) => chain.ledger.advance(n),
    warpTime: (seconds) => chain.ledger.warpTime(seconds),
  };
}
