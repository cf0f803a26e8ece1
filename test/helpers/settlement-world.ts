// An order-book world whose trades settle: the local chain (collateral mint, outcome mints whose
// mint authority is the settlement delegate), a node on Kafka and PostgreSQL that holds the
// delegate's key (so it runs the executor), a market, two funded wallets signed in.
import { Keypair, PublicKey } from '@solana/web3.js';
import { AccountLayout, AuthorityType, createSetAuthorityInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { startLocalChain, type LocalChain } from '../../src/chain/local/index.ts';
import { Web3Gateway } from '../../src/chain/gateway.ts';
import { testNode, KAFKA_BROKERS, call } from './node.ts';
import { freshDatabase } from './db.ts';
import { bearer, createMarket } from './clob.ts';
import { approve, fundedPair, OutcomeTokens } from './chain-market.ts';
import type { ServiceNode } from '../../src/node.ts';

export const U = 1_000_000n;

export interface SettlementWorld {
  chain: LocalChain;
  node: ServiceNode;
  tokens: OutcomeTokens;
  market: any;
  delegate: Keypair;
  feeRecipient: Keypair;
  collateral: PublicKey;
  yes: PublicKey;
  no: PublicKey;
  alice: Keypair;
  bob: Keypair;
  A: string;
  B: string;
  dbUrl: string;
  env: Record<string, string>;
  /** token balance of `owner` in `mint` (0 without an account) */
  bal(owner: PublicKey, mint: PublicKey): bigint;
  account(owner: PublicKey, mint: PublicKey): { amount: bigint; delegate: string | null; delegatedAmount: bigint } | null;
  /** standing allowance of `owner` to the delegate on collateral, YES and NO */
  approveAll(owner: Keypair, amount?: bigint): Promise<void>;
  close(): Promise<void>;
}

export async function settlementWorld(
  env: Record<string, string> = {},
  o: { startNode?: boolean } = {},
): Promise<SettlementWorld & { nodeEnv: Record<string, string> }> {
  const chain = await startLocalChain();
  const boot = await chain.bootstrap();
  const db = await freshDatabase();
  const delegate = Keypair.generate();
  const feeRecipient = Keypair.generate();
  await chain.fundWallet(delegate.publicKey, 10n ** 11n, 0n); // pays fees and rent; its collateral account is the escrow
  const tokens = await new OutcomeTokens(chain).create();
  const [alice, bob] = await fundedPair(chain, tokens);
  // The delegate becomes the mint authority of the outcome mints (it mints and burns pairs).
  for (const m of [tokens.yes, tokens.no]) {
    const r = chain.dev.send(
      [createSetAuthorityInstruction(m.publicKey, tokens.authority.publicKey, AuthorityType.MintTokens, delegate.publicKey)],
      [tokens.authority],
    );
    if (r.err) throw new Error(`set authority failed: ${JSON.stringify(r.err)}`);
  }
  const nodeEnv: Record<string, string> = {
    DATABASE_URL: db.url,
    KAFKA_BROKERS,
    CLOB_COLLATERAL_MINT: boot.collateralMint.toBase58(),
    CLOB_DELEGATE_KEYPAIR: JSON.stringify(Array.from(delegate.secretKey)),
    CLOB_FEE_RECIPIENT: feeRecipient.publicKey.toBase58(),
    CLOB_INTERNAL_TOKEN: 'internal-secret',
    CLOB_SETTLEMENT_POLL_MS: '100',
    SOLANA_RPC_URL: chain.url,
    ...env,
  };
  const node =
    o.startNode === false
      ? (null as unknown as ServiceNode)
      : await testNode(nodeEnv, { chain: new Web3Gateway(chain.url, boot.authority) });
  const collateral = boot.collateralMint;
  const account = (owner: PublicKey, mint: PublicKey) => {
    const acc = chain.chain.svm.get(getAssociatedTokenAddressSync(mint, owner, true));
    if (!acc || acc.data.length !== AccountLayout.span) return null;
    const u = AccountLayout.decode(acc.data);
    return { amount: u.amount, delegate: u.delegateOption ? u.delegate.toBase58() : null, delegatedAmount: u.delegatedAmount };
  };
  const w = {
    chain,
    node,
    tokens,
    market: null as any,
    delegate,
    feeRecipient,
    collateral,
    yes: tokens.yes.publicKey,
    no: tokens.no.publicKey,
    alice,
    bob,
    A: '',
    B: '',
    dbUrl: db.url,
    env: nodeEnv,
    nodeEnv,
    bal: (owner: PublicKey, mint: PublicKey) => account(owner, mint)?.amount ?? 0n,
    account,
    async approveAll(owner: Keypair, amount = 10n ** 12n) {
      for (const m of [collateral, tokens.yes.publicKey, tokens.no.publicKey]) await approve(chain, owner, m, delegate.publicKey, amount);
    },
    close: async () => {
      await node?.close();
      await chain.close();
      await db.drop();
    },
  };
  if (node) {
    w.market = await createMarket(node.url, {
      yes_token_id: w.yes.toBase58(),
      no_token_id: w.no.toBase58(),
      taker_fee_bps: 100,
      min_size: '1',
    });
    w.A = await bearer(node.url, alice);
    w.B = await bearer(node.url, bob);
  }
  return w;
}

/** Polls `f` until it returns a truthy value (or throws after `ms`). */
export async function until<T>(f: () => Promise<T> | T, ms = 20_000, what = 'condition'): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function tradeOf(base: string, token: string, market: string, id: string) {
  const r = await call(base, 'GET', `/v1/trades?market=${market}&id=${encodeURIComponent(id)}`, { token });
  return r.body?.[0] ?? null;
}
