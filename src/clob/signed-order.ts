// The signed order of contracts/clob.md: validation, the order hash, the signature check, and the
// price and size it implies.
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { signDetached, verifyDetached } from './ed25519.ts';
import type { SignatureVerifier } from './sigverify.ts';
import { z } from 'zod';
import { BASE58_ADDRESS, BASE58_SIGNATURE, base58Text } from './base58.ts';

const U64_MAX = (1n << 64n) - 1n;
// Every field is bounded by its length and charset before it is decoded: base58 decoding costs the
// square of the length (a 60,000-character signer would hold the event loop for seconds).
const u64 = z
  .string()
  .refine((s) => s.length <= 20 && /^\d{1,20}$/.test(s) && BigInt(s) <= U64_MAX, 'must be a decimal string in u64 range');
const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** Addresses lately decoded (a wallet's, its market's token, the open taker): an order names four, each read three times. */
const keys = new Map<string, Uint8Array>();
const MAX_KEYS = 10_000;

/**
 * The 32 bytes of a base58 address, or null when it is not one. Bounded by length and charset
 * first; an address decoded before comes from memory (never handed out to be written: callers copy
 * or only read it).
 */
export function addressBytes(s: string): Uint8Array | null {
  const known = keys.get(s);
  if (known) return known;
  if (s.length < BASE58_ADDRESS.min || s.length > BASE58_ADDRESS.max || !BASE58.test(s)) return null;
  let b: Uint8Array;
  try {
    b = bs58.decode(s);
  } catch {
    return null;
  }
  if (b.length !== 32) return null;
  if (keys.size >= MAX_KEYS) keys.clear();
  keys.set(s, b);
  return b;
}

const pubkey = z
  .string()
  .refine((s) => addressBytes(s) !== null, `must be a base58 32-byte address (${BASE58_ADDRESS.min} to ${BASE58_ADDRESS.max} characters)`);

export const signedOrder = z
  .object({
    salt: u64,
    maker: pubkey,
    signer: pubkey,
    taker: pubkey,
    tokenId: pubkey,
    makerAmount: u64,
    takerAmount: u64,
    side: z.enum(['BUY', 'SELL']),
    expiration: u64,
    nonce: u64,
    feeRateBps: z
      .string()
      .refine((s) => s.length <= 5 && /^\d{1,5}$/.test(s) && Number(s) <= 65_535, 'must be a decimal string in u16 range'),
    signature: base58Text(BASE58_SIGNATURE.min, BASE58_SIGNATURE.max, 'signature'),
  })
  .strict();

export const orderType = z.enum(['GTC', 'FOK', 'GTD']);

export const placeOrderBody = z.object({ order: signedOrder, orderType: orderType.default('GTC') }).strict();

export type SignedOrder = z.infer<typeof signedOrder>;

const u64le = (v: string) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(v));
  return b;
};

/** An address of a parsed order (the schema checked it decodes). */
function address(s: string): Uint8Array {
  const b = addressBytes(s);
  if (!b) throw new Error(`not a base58 32-byte address: ${s.slice(0, 60)}`);
  return b;
}

/** SHA-256 of `clob-order-v1` ‖ salt ‖ maker ‖ signer ‖ taker ‖ tokenId ‖ amounts ‖ expiration ‖ nonce ‖ fee ‖ side. */
export function orderHash(o: Omit<SignedOrder, 'signature'>): Buffer {
  const fee = Buffer.alloc(2);
  fee.writeUInt16LE(Number(o.feeRateBps));
  return createHash('sha256')
    .update(
      Buffer.concat([
        Buffer.from('clob-order-v1', 'ascii'),
        u64le(o.salt),
        address(o.maker),
        address(o.signer),
        address(o.taker),
        address(o.tokenId),
        u64le(o.makerAmount),
        u64le(o.takerAmount),
        u64le(o.expiration),
        u64le(o.nonce),
        fee,
        Buffer.from([o.side === 'BUY' ? 0 : 1]),
      ]),
    )
    .digest();
}

export const orderId = (hash: Buffer) => `0x${hash.toString('hex')}`;

/** The order's signature and signer as bytes, or null when either does not decode. */
function signatureParts(o: SignedOrder): { sig: Uint8Array; signer: Uint8Array } | null {
  if (o.signature.length > BASE58_SIGNATURE.max || o.signer.length > BASE58_ADDRESS.max) return null;
  let sig: Uint8Array;
  try {
    sig = bs58.decode(o.signature);
  } catch {
    return null;
  }
  const signer = addressBytes(o.signer);
  return signer ? { sig, signer } : null;
}

export function verifyOrderSignature(o: SignedOrder, hash: Buffer): boolean {
  const parts = signatureParts(o);
  return parts !== null && verifyDetached(hash, parts.sig, parts.signer);
}

/** As verifyOrderSignature, the check itself done by `verifier` (src/clob/sigverify.ts). */
export async function checkOrderSignature(verifier: SignatureVerifier, o: SignedOrder, hash: Buffer): Promise<boolean> {
  const parts = signatureParts(o);
  return parts !== null && verifier.verify(hash, parts.sig, parts.signer);
}

export const PRICE_SCALE = 1_000_000n;

/** Price in micro-units of collateral per token unit, rounded down; null when not exact on the scale. */
export function priceAndSize(o: SignedOrder): { price: bigint; size: bigint; exact: boolean } {
  const maker = BigInt(o.makerAmount);
  const taker = BigInt(o.takerAmount);
  if (o.side === 'BUY') {
    return {
      price: taker === 0n ? 0n : (maker * PRICE_SCALE) / taker,
      size: taker,
      exact: taker !== 0n && (maker * PRICE_SCALE) % taker === 0n,
    };
  }
  return {
    price: maker === 0n ? 0n : (taker * PRICE_SCALE) / maker,
    size: maker,
    exact: maker !== 0n && (taker * PRICE_SCALE) % maker === 0n,
  };
}

/** Signs an order (clients, tests, the reference market maker). */
export function signOrder(o: Omit<SignedOrder, 'signature'>, secretKey: Uint8Array): SignedOrder {
  const hash = orderHash(o);
  return { ...o, signature: bs58.encode(signDetached(hash, secretKey)) };
}
