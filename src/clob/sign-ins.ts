// The sign-in use case (contracts/clob.md): a checked signature buys a bearer token, and each signed
// message is accepted once across every node (the primary key of `auth_signins` says who was first).
// The replay memory is bounded in time: a message is only acceptable within the skew window of its
// timestamp, so a row older than twice the window can never be needed again; each node purges those
// on a sign-in at most once per window (deterministically, not by chance).
import { checkSignIn, SIGN_IN_SKEW_SECONDS, type ClobTokens, type SignInBody } from './sign-in.ts';

import type { Db } from '../db.ts';

export type SignInResult = { ok: true; token: ReturnType<ClobTokens['issue']> } | { ok: false; reason: string };

export class SignIns {
  private purgedAt = Number.NEGATIVE_INFINITY;
  readonly skewSeconds: number;

  constructor(private o: { db: () => Db; tokens: ClobTokens; now?: () => number; skewSeconds?: number }) {
    this.skewSeconds = o.skewSeconds ?? SIGN_IN_SKEW_SECONDS;
  }

  private now(): number {
    return this.o.now?.() ?? Math.floor(Date.now() / 1000);
  }

  async signIn(body: SignInBody): Promise<SignInResult> {
    const now = this.now();
    const check = checkSignIn(body, now, this.skewSeconds);
    if (!check.ok) return check;
    if (now - this.purgedAt >= this.skewSeconds) {
      this.purgedAt = now;
      await this.purge();
    }
    const rows = await this.o
      .db()
      .execute(`insert into auth_signins (address, timestamp, created_at) values (?, ?, now()) on conflict do nothing returning address`, [
        body.address,
        body.timestamp,
      ]);
    if (!rows.length) return { ok: false, reason: 'this sign-in message was already used' };
    return { ok: true, token: this.o.tokens.issue(body.address) };
  }

  /** Forgets messages older than twice the skew window (by the database's clock); how many. */
  async purge(): Promise<number> {
    const [row] = await this.o
      .db()
      .execute(
        `with gone as (delete from auth_signins where created_at < now() - make_interval(secs => ?) returning 1) select count(*)::int as n from gone`,
        [this.skewSeconds * 2],
      );
    return Number(row?.n ?? 0);
  }
}
