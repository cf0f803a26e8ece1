// Ed25519 through Node's crypto (OpenSSL): verifying a signature natively costs a small fraction of
// a pure-JS implementation, and the front door verifies one per order and per sign-in.
import { createPrivateKey, createPublicKey, sign as cryptoSign, verify as cryptoVerify, type KeyObject } from 'node:crypto';

const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');

/** Public keys already imported (a wallet signs in and orders many times; importing is half the cost of a check). */
const keys = new Map<string, KeyObject>();

/** A public key from its 32 raw bytes. */
function publicKey(raw: Uint8Array): KeyObject {
  const x = b64url(raw);
  let key = keys.get(x);
  if (!key) {
    key = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
    if (keys.size >= 50_000) keys.clear();
    keys.set(x, key);
  }
  return key;
}

/** true when `signature` (64 bytes) is `publicKey`'s (32 bytes) signature of `message`; never throws. */
export function verifyDetached(message: Uint8Array, signature: Uint8Array, publicKeyRaw: Uint8Array): boolean {
  if (signature.length !== 64 || publicKeyRaw.length !== 32) return false;
  try {
    return cryptoVerify(null, message, publicKey(publicKeyRaw), signature);
  } catch {
    return false; // not a point on the curve
  }
}

/** Signs with a 64-byte secret key (seed ‖ public key, as Solana keypairs hold it). */
export function signDetached(message: Uint8Array, secretKey: Uint8Array): Uint8Array {
  const key = createPrivateKey({
    key: { kty: 'OKP', crv: 'Ed25519', d: b64url(secretKey.subarray(0, 32)), x: b64url(secretKey.subarray(32, 64)) },
    format: 'jwk',
  });
  return cryptoSign(null, message, key);
}
