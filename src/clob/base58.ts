// Bounds of base58 fields, checked before any decoding: base58 decoding costs the square of the
// length, so a field is refused by its length (and printable ASCII) first; whether it decodes is
// the decoder's answer, as before (401 for sign-in, INVALID_SIGNATURE for an order).
import { z } from 'zod';

/** Text of `min` to `max` printable ASCII characters: what a base58 field may be before it is decoded. */
export const base58Text = (min: number, max: number, what: string) =>
  z
    .string()
    .min(min, `${what}: at least ${min} characters`)
    .max(max, `${what}: at most ${max} characters`)
    .regex(/^[\x21-\x7e]*$/, `${what} must be printable ASCII (base58)`);

/** An ed25519 public key (32 bytes) in base58: 32 to 44 characters. */
export const BASE58_ADDRESS = { min: 32, max: 44 } as const;
/** An ed25519 signature (64 bytes) in base58: at most 88 characters. */
export const BASE58_SIGNATURE = { min: 1, max: 88 } as const;
