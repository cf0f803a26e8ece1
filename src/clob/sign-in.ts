// Wallet sign-in (contracts/clob.md): an ed25519 signature over `clob-auth:v1:<address>:<timestamp>`
// buys a short-lived bearer token. Each signed message is accepted once.
import bs58 from 'bs58';
import { signDetached, verifyDetached } from './ed25519.ts';
import jwt from 'jsonwebtoken';
import { createSecretKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { BASE58_ADDRESS, BASE58_SIGNATURE, base58Text } from './base58.ts';

export const signInBody = z
  .object({
    address: base58Text(BASE58_ADDRESS.min, BASE58_ADDRESS.max, 'address'),
    timestamp: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    signature: base58Text(BASE58_SIGNATURE.min, BASE58_SIGNATURE.max, 'signature'),
  })
  .strict();

export type SignInBody = z.infer<typeof signInBody>;

export const authMessage = (address: string, timestamp: number) => `clob-auth:v1:${address}:${timestamp}`;

export type SignInCheck = { ok: true } | { ok: false; reason: string };

/** How far a sign-in message's timestamp may be from the server clock. */
export const SIGN_IN_SKEW_SECONDS = 60;

export function checkSignIn(b: SignInBody, nowSeconds: number, skewSeconds = SIGN_IN_SKEW_SECONDS): SignInCheck {
  if (Math.abs(nowSeconds - b.timestamp) > skewSeconds)
    return { ok: false, reason: `timestamp is not within ${skewSeconds} s of the server clock` };
  // Bounded again here (callers may skip the schema): base58 decoding costs the square of the length.
  if (b.address.length > BASE58_ADDRESS.max || b.signature.length > BASE58_SIGNATURE.max)
    return { ok: false, reason: 'malformed address or signature' };
  let key: Uint8Array;
  let sig: Uint8Array;
  try {
    key = bs58.decode(b.address);
    sig = bs58.decode(b.signature);
  } catch {
    return { ok: false, reason: 'address and signature must be base58' };
  }
  if (key.length !== 32 || sig.length !== 64) return { ok: false, reason: 'malformed address or signature' };
  const ok = verifyDetached(Buffer.from(authMessage(b.address, b.timestamp), 'utf8'), sig, key);
  return ok ? { ok: true } : { ok: false, reason: 'signature does not match the address' };
}

export class ClobTokens {
  private key: KeyObject;

  constructor(
    secret: string,
    readonly ttlSeconds: number,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  get secretKey(): KeyObject {
    return this.key;
  }

  issue(address: string): { access_token: string; token_type: 'Bearer'; expires_in: number } {
    const access_token = jwt.sign({ sub: address, scope: 'clob' }, this.key, { algorithm: 'HS256', expiresIn: this.ttlSeconds });
    return { access_token, token_type: 'Bearer', expires_in: this.ttlSeconds };
  }
}

/** Signs a sign-in message (clients and tests). */
export function signIn(address: string, secretKey: Uint8Array, timestamp = Math.floor(Date.now() / 1000)): SignInBody {
  return { address, timestamp, signature: bs58.encode(signDetached(Buffer.from(authMessage(address, timestamp), 'utf8'), secretKey)) };
}
