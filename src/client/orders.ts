// Signed orders as contracts/clob.md defines them: amounts from a decimal price and size, the order
// hash (SHA-256 of `clob-order-v1` and the fixed-width fields), the ed25519 signature, the id.
import { decimalToMicro, microToDecimal } from '../../topics/units.ts';
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import { orderHash, orderId as idOfHash, signOrder, type SignedOrder } from '../clob/signed-order.ts';

export type { SignedOrder };
export type Side = 'BUY' | 'SELL';
export type OrderType = 'GTC' | 'FOK' | 'GTD';

/** The system program address: "anyone may take". */
export const ANY_TAKER = '11111111111111111111111111111111';

/** A wallet: an ed25519 secret key of 64 bytes (its last 32 bytes are the public key), e.g. a web3.js Keypair. */
export interface WalletKey {
  secretKey: Uint8Array;
}

export const addressOf = (w: WalletKey) => bs58.encode(w.secretKey.slice(32, 64));

/** `"0.55"` → 550000n (at most 6 places). */
export function micro(v: string | number): bigint {
  const n = decimalToMicro(String(v));
  if (n === null) throw new Error(`not a decimal with at most 6 places: ${v}`);
  return n;
}

/** 550000n → `"0.55"`. */
export function decimal(v: bigint | string | number): string {
  return microToDecimal(v);
}

export interface OrderInput {
  /** The outcome token (yes_token_id or no_token_id of the market). */
  tokenId: string;
  side: Side;
  /** Decimal price of one token in collateral units, on the market's tick: `"0.55"`. */
  price: string | number;
  /** Decimal number of tokens: `"10"`. */
  size: string | number;
  feeRateBps?: number;
  /** Unix seconds; 0 (default) for none. */
  expiration?: number;
  nonce?: string;
  salt?: string;
  taker?: string;
}

/**
 * Builds and signs an order. BUY: makerAmount = price × size collateral, takerAmount = size tokens;
 * SELL: the reverse. Price × size must be exact in micro-units.
 */
export function buildOrder(wallet: WalletKey, o: OrderInput): SignedOrder {
  const size = micro(o.size);
  const price = micro(o.price);
  if (price <= 0n || price >= 1_000_000n) throw new Error('price must lie strictly between 0 and 1');
  if ((price * size) % 1_000_000n !== 0n) throw new Error('price × size is not a whole number of micro-units');
  const collateral = (price * size) / 1_000_000n;
  const maker = addressOf(wallet);
  return signOrder(
    {
      salt: o.salt ?? BigInt('0x' + randomBytes(7).toString('hex')).toString(),
      maker,
      signer: maker,
      taker: o.taker ?? ANY_TAKER,
      tokenId: o.tokenId,
      makerAmount: (o.side === 'BUY' ? collateral : size).toString(),
      takerAmount: (o.side === 'BUY' ? size : collateral).toString(),
      side: o.side,
      expiration: String(o.expiration ?? 0),
      nonce: o.nonce ?? '0',
      feeRateBps: String(o.feeRateBps ?? 0),
    },
    wallet.secretKey,
  );
}

/** The order id: `0x` + the order hash in lowercase hex. */
export function orderIdOf(o: Omit<SignedOrder, 'signature'>): string {
  return idOfHash(orderHash(o));
}

export { orderHash };
