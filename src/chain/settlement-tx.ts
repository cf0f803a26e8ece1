// Settlement transactions of the order book (issue 5): per trade one transaction that moves the
// makers' and the taker's tokens with SPL Token instructions signed by the program delegate
// (CLOB_DELEGATE) under the wallets' standing allowances, the taker fee included, with a
// ComputeBudget limit and priority fee. MINT and MERGE trades mint or burn the YES+NO pair against
// collateral held in escrow.
//
// Who holds what (the local chain plays the program's part; see src/settlement/README.md):
// - the delegate is the mint authority of every market's outcome mints, and owns the collateral
//   escrow (its own collateral associated token account) that backs every YES+NO pair in circulation;
// - fees go to the collateral account of the fee recipient (CLOB_FEE_RECIPIENT, default the delegate).
//
// Amounts (micro-units): leg i of a trade fills q_i tokens at the taker's effective price e_i
// (the maker's price for COMPLEMENTARY, 1 − maker price for MINT/MERGE). The taker's collateral
// side of leg i is floor(Σ_{j≤i} e_j q_j / 1e6) − floor(Σ_{j<i} e_j q_j / 1e6), so the legs sum
// exactly to the trade's notional; a MINT/MERGE maker's side is q_i minus that (a pair is worth 1).
// The taker fee (the trade's `fee`) is paid from the taker's collateral when it buys, and kept
// out of its proceeds (first legs first) when it sells.
//
// The settlement transaction creates no token account: every account it credits must exist
// before it is built. The executor sees to that with separate preparatory transactions of
// idempotent creations (planAccountCreations), which move no funds; so the settlement
// transaction stays small (the book's maker caps follow from its size, src/settlement/README.md).
import {
  ComputeBudgetProgram,
  PublicKey,
  TransactionMessage,
  VersionedTransaction,
  type Keypair,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createBurnInstruction,
  createMintToInstruction,
  createTransferInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import bs58 from 'bs58';

const ONE = 1_000_000n;

export interface SettlementLeg {
  order_id: string;
  owner: string;
  /** decimal string or bigint of token micro-units */
  matched_amount: string | bigint;
  /** the maker's own price, micro-units */
  price: number;
  asset_id: string;
  side: 'BUY' | 'SELL';
}

/** The trade as the `trades` read model holds it (exact micro-units). */
export interface SettlementTrade {
  id: string;
  taker_order_id: string;
  /** the taker's outcome mint */
  asset_id: string;
  side: 'BUY' | 'SELL';
  owner: string;
  notional: string | bigint;
  fee: string | bigint;
  match_type: 'COMPLEMENTARY' | 'MINT' | 'MERGE';
  maker_orders: SettlementLeg[];
}

export interface SettlementAccounts {
  collateralMint: PublicKey;
  /** signs every transfer, mint and burn; pays the transaction fee and rent of created accounts */
  delegate: PublicKey;
  feeRecipient: PublicKey;
}

export interface PlannedSettlement {
  /** without the ComputeBudget instructions */
  instructions: TransactionInstruction[];
  /** per instruction: the order whose wallet it draws on (to blame when it fails), or null */
  blame: (string | null)[];
  /** associated token accounts the instructions credit, which must exist before the transaction
   *  runs (planAccountCreations makes the missing ones, in transactions of their own) */
  destinations: Destination[];
}

/** An associated token account a settlement credits: its address, owner and mint. */
export interface Destination {
  account: PublicKey;
  owner: PublicKey;
  mint: PublicKey;
}

const pk = (s: string | PublicKey) => (typeof s === 'string' ? new PublicKey(s) : s);
export const ataOf = (mint: PublicKey | string, owner: PublicKey | string) => getAssociatedTokenAddressSync(pk(mint), pk(owner), true);

/** The escrow that backs minted pairs: the delegate's collateral account. */
export const escrowOf = (a: Pick<SettlementAccounts, 'collateralMint' | 'delegate'>) => ataOf(a.collateralMint, a.delegate);

/**
 * Plans the instructions of one trade's settlement: transfers, mints and burns only. The token
 * accounts they credit (`destinations`) must exist by then: none is created here.
 */
export function planSettlement(t: SettlementTrade, a: SettlementAccounts): PlannedSettlement {
  const body: TransactionInstruction[] = [];
  const blame: (string | null)[] = [];
  const dests = new Map<string, Destination>();
  const dest = (mint: PublicKey, owner: PublicKey) => {
    const account = ataOf(mint, owner);
    dests.set(account.toBase58(), { account, owner, mint });
    return account;
  };
  const push = (ix: TransactionInstruction, who: string | null) => {
    body.push(ix);
    blame.push(who);
  };
  const transfer = (mint: PublicKey, from: PublicKey, to: PublicKey, amount: bigint, who: string | null) => {
    if (amount <= 0n) return;
    const src = from.equals(a.delegate) ? escrowOf(a) : ataOf(mint, from);
    push(createTransferInstruction(src, dest(mint, to), a.delegate, amount), who);
  };
  const C = a.collateralMint;
  const taker = pk(t.owner);
  const takerAsset = pk(t.asset_id);
  const feeTotal = BigInt(t.fee);
  let feeLeft = feeTotal;
  let cum = 0n;
  let paid = 0n;
  const escrowParty = a.delegate;
  if (t.match_type !== 'COMPLEMENTARY') dest(C, escrowParty); // the escrow takes or gives collateral

  for (const m of t.maker_orders) {
    const q = BigInt(m.matched_amount);
    const maker = pk(m.owner);
    const eff = t.match_type === 'COMPLEMENTARY' ? BigInt(m.price) : ONE - BigInt(m.price);
    cum += eff * q;
    const takerPart = cum / ONE - paid;
    paid += takerPart;
    const makerAsset = pk(m.asset_id);
    if (t.match_type === 'COMPLEMENTARY') {
      if (t.side === 'BUY') {
        transfer(makerAsset, maker, taker, q, m.order_id);
        transfer(C, taker, maker, takerPart, t.taker_order_id);
      } else {
        transfer(takerAsset, taker, maker, q, t.taker_order_id);
        const cut = takerPart < feeLeft ? takerPart : feeLeft;
        feeLeft -= cut;
        transfer(C, maker, taker, takerPart - cut, m.order_id);
        transfer(C, maker, a.feeRecipient, cut, m.order_id);
      }
    } else if (t.match_type === 'MINT') {
      // both sides buy: their collateral goes to escrow, a fresh pair is minted
      transfer(C, taker, escrowParty, takerPart, t.taker_order_id);
      transfer(C, maker, escrowParty, q - takerPart, m.order_id);
      push(createMintToInstruction(takerAsset, dest(takerAsset, taker), a.delegate, q), null);
      push(createMintToInstruction(makerAsset, dest(makerAsset, maker), a.delegate, q), null);
    } else {
      // MERGE: both sides sell: the pair is burnt, the escrow pays out its collateral
      push(createBurnInstruction(ataOf(takerAsset, taker), takerAsset, a.delegate, q), t.taker_order_id);
      push(createBurnInstruction(ataOf(makerAsset, maker), makerAsset, a.delegate, q), m.order_id);
      const cut = takerPart < feeLeft ? takerPart : feeLeft;
      feeLeft -= cut;
      transfer(C, escrowParty, taker, takerPart - cut, null);
      transfer(C, escrowParty, a.feeRecipient, cut, null);
      transfer(C, escrowParty, maker, q - takerPart, null);
    }
  }
  if (t.side === 'BUY') transfer(C, taker, a.feeRecipient, feeTotal, t.taker_order_id);
  else if (feeLeft > 0n) transfer(C, taker, a.feeRecipient, feeLeft, t.taker_order_id); // proceeds smaller than the fee (rounding)
  if (paid !== BigInt(t.notional)) throw new Error(`trade ${t.id}: legs sum to ${paid}, notional is ${t.notional}`);

  return { instructions: body, blame, destinations: [...dests.values()] };
}

/** The most bytes of a serialized transaction (packet data size of the Solana runtime). */
export const MAX_TRANSACTION_BYTES = 1232;

/**
 * The preparatory transactions of a settlement: idempotent creations (`CreateIdempotent` of the
 * Associated Token Account program, paid by `payer`) of the `missing` accounts, as many per
 * transaction as fit in MAX_TRANSACTION_BYTES when signed by signWithBudget (each list of the
 * result is one transaction). They move no funds and may be sent any number of times: an account
 * that exists by then is left as it is.
 */
export function planAccountCreations(payer: Keypair, missing: Destination[]): TransactionInstruction[][] {
  const out: TransactionInstruction[][] = [];
  const fits = (ixs: TransactionInstruction[]) => {
    try {
      return (
        signWithBudget(payer, ixs, { blockhash: SIZE_PROBE_BLOCKHASH, cuLimit: MAX_COMPUTE_UNITS, cuPrice: 1n }).raw.length <=
        MAX_TRANSACTION_BYTES
      );
    } catch {
      return false; // too large to serialize
    }
  };
  let cur: TransactionInstruction[] = [];
  for (const d of missing) {
    const ix = createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, d.account, d.owner, d.mint);
    if (cur.length && !fits([...cur, ix])) {
      out.push(cur);
      cur = [];
    }
    cur.push(ix);
  }
  if (cur.length) out.push(cur);
  return out;
}

const SIZE_PROBE_BLOCKHASH = '11111111111111111111111111111111';

/** mint_tokens (SPEC 4.3): n collateral of `owner` into escrow, n YES and n NO minted to it. */
export function planMint(owner: PublicKey, yes: PublicKey, no: PublicKey, amount: bigint, a: SettlementAccounts): TransactionInstruction[] {
  const C = a.collateralMint;
  return [
    createAssociatedTokenAccountIdempotentInstruction(a.delegate, escrowOf(a), a.delegate, C),
    createAssociatedTokenAccountIdempotentInstruction(a.delegate, ataOf(yes, owner), owner, yes),
    createAssociatedTokenAccountIdempotentInstruction(a.delegate, ataOf(no, owner), owner, no),
    createTransferInstruction(ataOf(C, owner), escrowOf(a), a.delegate, amount),
    createMintToInstruction(yes, ataOf(yes, owner), a.delegate, amount),
    createMintToInstruction(no, ataOf(no, owner), a.delegate, amount),
  ];
}

/** merge_tokens (SPEC 4.3): n YES and n NO of `owner` burnt, n collateral paid out of escrow. */
export function planMerge(
  owner: PublicKey,
  yes: PublicKey,
  no: PublicKey,
  amount: bigint,
  a: SettlementAccounts,
): TransactionInstruction[] {
  const C = a.collateralMint;
  return [
    createAssociatedTokenAccountIdempotentInstruction(a.delegate, ataOf(C, owner), owner, C),
    createBurnInstruction(ataOf(yes, owner), yes, a.delegate, amount),
    createBurnInstruction(ataOf(no, owner), no, a.delegate, amount),
    createTransferInstruction(escrowOf(a), ataOf(C, owner), a.delegate, amount),
  ];
}

/** A first compute-unit limit for `n` instructions: generous for SPL Token, far below the 1.4M cap. */
export function estimateComputeUnits(instructions: TransactionInstruction[]): number {
  let units = 10_000;
  for (const ix of instructions) units += ix.programId.equals(TOKEN_PROGRAM) ? 8_000 : 30_000;
  return Math.min(units, MAX_COMPUTE_UNITS);
}

export const MAX_COMPUTE_UNITS = 1_400_000;
const TOKEN_PROGRAM = new PublicKey('TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA');

export interface SignedSettlement {
  signature: string;
  raw: Buffer;
  tx: VersionedTransaction;
}

/** Signs `instructions` behind a ComputeBudget limit and price (micro-lamports per unit). */
export function signWithBudget(
  payer: Keypair,
  instructions: TransactionInstruction[],
  o: { blockhash: string; cuLimit: number; cuPrice: bigint },
): SignedSettlement {
  const message = new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: o.blockhash,
    instructions: [
      ComputeBudgetProgram.setComputeUnitLimit({ units: o.cuLimit }),
      ComputeBudgetProgram.setComputeUnitPrice({ microLamports: o.cuPrice }),
      ...instructions,
    ],
  }).compileToV0Message();
  const tx = new VersionedTransaction(message);
  tx.sign([payer]);
  const raw = Buffer.from(tx.serialize());
  return { signature: bs58.encode(tx.signatures[0]), raw, tx };
}

/** How many ComputeBudget instructions signWithBudget puts in front (to map an instruction index back). */
export const BUDGET_INSTRUCTIONS = 2;

/** The compute-unit limit and price a signed transaction carries (tests and logs). */
export function budgetOf(tx: VersionedTransaction): { cuLimit: number | null; cuPrice: bigint | null } {
  const keys = tx.message.staticAccountKeys;
  let cuLimit: number | null = null;
  let cuPrice: bigint | null = null;
  for (const ci of tx.message.compiledInstructions) {
    if (!keys[ci.programIdIndex].equals(ComputeBudgetProgram.programId)) continue;
    const d = Buffer.from(ci.data);
    if (d[0] === 2) cuLimit = d.readUInt32LE(1);
    if (d[0] === 3) cuPrice = d.readBigUInt64LE(1);
  }
  return { cuLimit, cuPrice };
}
