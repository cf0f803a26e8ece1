// Bearer tokens already verified, by their exact text. A wallet sends the same token with every
// request until it expires, and verifying it again each time (base64, JSON, HMAC-SHA256, the claims)
// took about 3.5% of the embedded node's one thread under an order load (issue 15). Only a token
// that passed verification is kept, with the claims it carried, until its `exp`: the text includes
// the signature, so no other text can hit its entry, and past `exp` it is refused exactly as the
// verifier would (jsonwebtoken: expired once the whole second reaches `exp`). Bounded: past `max`
// entries the oldest goes first. A token without `exp`, or with `nbf`, is never kept.

interface Entry<C> {
  claims: C;
  /** `exp` in seconds */
  exp: number;
}

export class VerifiedTokens<C extends { exp?: unknown; nbf?: unknown }> {
  private readonly entries = new Map<string, Entry<C>>();

  constructor(
    private readonly max = 10_000,
    private readonly nowMs: () => number = Date.now,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** The claims of `token` if it was verified and has not expired; else undefined (verify it). */
  get(token: string): C | undefined {
    const e = this.entries.get(token);
    if (!e) return undefined;
    if (Math.floor(this.nowMs() / 1000) >= e.exp) {
      this.entries.delete(token);
      return undefined;
    }
    return e.claims;
  }

  /** Keeps `token`, which the verifier just accepted with `claims`. */
  add(token: string, claims: C): void {
    if (typeof claims.exp !== 'number' || claims.nbf !== undefined) return;
    if (this.entries.size >= this.max) {
      // Expired entries first; if none, the oldest.
      const now = Math.floor(this.nowMs() / 1000);
      for (const [k, e] of this.entries) if (now >= e.exp) this.entries.delete(k);
      if (this.entries.size >= this.max) this.entries.delete(this.entries.keys().next().value!);
    }
    this.entries.set(token, { claims, exp: claims.exp });
  }
}

/** The token of an `Authorization: Bearer <token>` header, as koa-jwt reads it; else null. */
export function bearerOf(header: string | undefined): string | null {
  if (!header) return null;
  const parts = header.trim().split(' ');
  return parts.length === 2 && /^Bearer$/i.test(parts[0]) ? parts[1] : null;
}
