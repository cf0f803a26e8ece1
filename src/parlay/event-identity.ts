// Event identity: one (signature, position among the transaction's events of the program) is one
// event. The first content seen for an identity (the SHA-256 of the event's bytes) is kept in
// `parlay_event_identities`; a later event with the same identity and other bytes conflicts and is
// not applied. An identical re-send claims nothing new and goes on to the actors, which answer it
// as a duplicate.
import type { Db } from '../db.ts';

export interface EventClaim {
  signature: string;
  index: number;
  hash: string;
}

export const identityOf = (c: { signature: string; index: number }) => `${c.signature}:${c.index}`;

export class EventIdentities {
  constructor(private db: () => Db) {}

  /**
   * Claims each identity for its content; returns the claims that conflict with the content kept
   * for their identity (by another delivery, or earlier in this list). Race-free: the claim is an
   * insert on the primary key, and what it did not insert is read back by a later statement, which
   * sees the concurrent claim that won.
   */
  async claim(claims: EventClaim[]): Promise<Set<EventClaim>> {
    const conflicts = new Set<EventClaim>();
    // The first of each identity in the list is the one claimed; what it keeps decides for every copy.
    const first = new Map<string, EventClaim>();
    for (const c of claims) if (!first.has(identityOf(c))) first.set(identityOf(c), c);
    if (!first.size) return conflicts;
    const kept = new Map<string, string>();
    // Only what the insert did not claim comes back (a new identity, the usual case, costs no row).
    const notClaimed = await this.db().execute(
      `with t as (select * from jsonb_to_recordset(?::jsonb) as t(s text, i int, h text)),
         ins as (insert into parlay_event_identities (signature, event_index, content_hash, created_at)
           select t.s, t.i, t.h, now() from t on conflict (signature, event_index) do nothing returning signature, event_index)
       select t.s, t.i from t where not exists (select 1 from ins where ins.signature = t.s and ins.event_index = t.i)`,
      [JSON.stringify([...first.values()].map((c) => ({ s: c.signature, i: c.index, h: c.hash })))],
    );
    const missed = new Set(notClaimed.map((r: { s: string; i: number }) => `${r.s}:${r.i}`));
    for (const c of first.values()) if (!missed.has(identityOf(c))) kept.set(identityOf(c), c.hash);
    const existing = [...first.values()].filter((c) => !kept.has(identityOf(c)));
    if (existing.length) {
      const rows = await this.db().execute(
        `select p.signature, p.event_index, p.content_hash from parlay_event_identities p
         join jsonb_to_recordset(?::jsonb) as t(s text, i int) on p.signature = t.s and p.event_index = t.i`,
        [JSON.stringify(existing.map((c) => ({ s: c.signature, i: c.index })))],
      );
      for (const r of rows) kept.set(`${r.signature}:${r.event_index}`, r.content_hash);
    }
    for (const c of claims) if (kept.get(identityOf(c)) !== c.hash) conflicts.add(c);
    return conflicts;
  }
}
