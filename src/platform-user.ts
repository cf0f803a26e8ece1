// Who calls the parlay routes: the claims of a Platform JWT (HS256; sub, wallet, is_superuser, exp),
// checked like any input. The front door verifies the token (src/http/auth.ts); use cases read these.
import { z } from 'zod';

/** Claims are input like any other: bounded (users.id and users.wallet are varchar(255)), no control characters. */
const claimText = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .regex(/^[^\p{Cc}]+$/u, 'must hold no control character')
    .refine((s) => (s as unknown as { isWellFormed(): boolean }).isWellFormed(), 'must be well-formed Unicode');

export const platformClaims = z.object({
  sub: claimText(255),
  /** A wallet address (base58, 32–44 characters; any letters or digits up to 64 are taken as given). */
  wallet: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z0-9]+$/, 'must be an address')
    .nullable()
    .optional(),
  is_superuser: z.boolean().optional().default(false),
  /** Required: a token without an expiry would be valid forever (401 without it). */
  exp: z.number(),
});

export type PlatformUser = z.infer<typeof platformClaims>;
