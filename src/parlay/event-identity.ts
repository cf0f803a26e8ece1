// Event identity: one (signature, position among the transaction's events of the program) is one
// event. The first content seen for an identity is kept in `parlay_event_identities`; a later event
// with the same identity and other bytes conflicts and is not applied. An identical re-send claims
// nothing new and goes on to the actors, which answer it as a duplicate. Both are kept as 128 bits
// (16-byte bytea columns): the identity's key is the start of SHA-256(`signature:index`), the
// content the start of the SHA-256 of the event's bytes.
import { hash } from 'node:crypto';
import type { Db } from '../db.ts';
import { isUniqueViolation } from '../store/sql-errors.ts';

export interface EventClaim {
  signature: string;
  index: number;
  /** SHA-256 of the event's bytes, hex. */
  hash: string;
}

export const identityOf = (c: { signature: string; index: number }) => `${c.signature}:${c.index}`;

/** The identity's key as 32 hex digits. */
export const identityKey = (c: { signature: string; index: number }) => hash('sha256', identityOf(c), 'hex').slice(0, 32);

const HEX = /^[0-9a-f]*$/;

/**
 * Rows of 16-byte values cut from one bytea literal of `width` values per row (32 hex digits
 * each). PostgreSQL reads a hex literal and cuts it with `substring` for less than it spent
 * parsing the same values as two uuid arrays: 250-row claims into a fresh table, three interleaved
 * rounds, 3.0–3.2 against 3.9–5.5 µs of backend CPU per row. Only hex digits of our own hashes
 * reach it (checked once over the whole literal: a check per value cost a third of the claim's
 * own time).
 */
function hexRows(hex: string, width: number): string {
  if (hex.length % (32 * width) !== 0 || !HEX.test(hex)) throw new Error('event identities: not 128-bit values in hex');
  const n = hex.length / (32 * width);
  const cols = Array.from({ length: width }, (_, c) => `substring(b from g * ${16 * width} + ${16 * c + 1} for 16)`);
  return `select ${cols.join(', ')} from (select '\\x${hex}'::bytea as b) s, generate_series(0, ${n - 1}) g`;
}

export class EventIdentities {
  constructor(private db: () => Db) {}

  /**
   * Claims each identity for its content; returns the claims that conflict with the content kept
   * for their identity (by another delivery, or earlier in this list). Race-free: the claim is an
   * insert on the primary key; when it did not insert them all, the kept contents are read back by
   * a later statement, which sees the concurrent claim that won.
   */
  async claim(claims: EventClaim[]): Promise<Set<EventClaim>> {
    const conflicts = new Set<EventClaim>();
    // The first of each identity in the list is the one claimed; what it keeps decides for every copy.
    const keyOf: string[] = new Array(claims.length);
    const contentOf: string[] = new Array(claims.length);
    const first = new Map<string, string>(); // key → content
    for (let i = 0; i < claims.length; i++) {
      const k = identityKey(claims[i]);
      keyOf[i] = k;
      contentOf[i] = claims[i].hash.slice(0, 32);
      if (!first.has(k)) first.set(k, contentOf[i]);
    }
    if (!first.size) return conflicts;
    const keys = [...first.keys()];
    // One statement claims every new identity and answers how many it claimed; the usual case (all
    // of them) needs nothing more. Otherwise the content kept for each identity is read back: a
    // concurrent claim that won is seen (the insert waited for it), and an identity claimed before
    // answers with its first content.
    //
    // Its commit does not wait for the disk (synchronous_commit off for this transaction alone; it
    // was a third of PostgreSQL's time per event). Nothing is answered on a claim alone: the events
    // it lets through are applied, or a conflict dead-lettered, by a later commit that does wait,
    // and PostgreSQL's log is one sequence, so that wait makes the claim durable first. A crash
    // before any such commit loses only claims whose events were never applied: the provider sends
    // the delivery again and it is claimed again.
    //
    // The usual claim is of identities never seen: a plain insert, which costs PostgreSQL a third
    // less per row than `on conflict do nothing` (one index descent instead of a check and then an
    // insert). When one of them was claimed before, the insert fails whole and the statement that
    // skips what is taken runs instead. The plain insert answers nothing: that it succeeded says it
    // claimed them all (counting returned rows cost PostgreSQL another 0.3–0.5 µs per row).
    //
    // The rows go in key order: neighbouring keys share their way down the index, so the pages a
    // row needs are still in the CPU's caches for the next (250-row claims on 8 connections into a
    // table of 200k–600k rows: 6.2–7.6 against 7.2–8.2 µs of PostgreSQL CPU a row, three rounds),
    // and two claims that share keys take their locks in the same order.
    let pairs = '';
    for (const k of [...first.keys()].sort()) pairs += k + first.get(k)!;
    const rows = hexRows(pairs, 2);
    const asyncCommit = `set_config('synchronous_commit', 'off', true) as async_commit`;
    let n = keys.length;
    try {
      await this.db().execute(`with ins as (insert into parlay_event_identities (key, content) ${rows}) select ${asyncCommit}`);
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      [{ n }] = await this.db().execute(
        `with ins as (insert into parlay_event_identities (key, content) ${rows} on conflict (key) do nothing returning 1)
         select count(*)::int as n, ${asyncCommit} from ins`,
      );
    }
    // All claimed by this statement: only a copy in this list with other bytes can conflict.
    let kept = first;
    if (n !== keys.length) {
      kept = new Map();
      const found = await this.db().execute(
        `select encode(p.key, 'hex') as k, encode(p.content, 'hex') as h from parlay_event_identities p
         where p.key in (${hexRows(keys.join(''), 1)})`,
      );
      for (const r of found) kept.set(r.k, r.h);
    } else if (first.size === claims.length) return conflicts;
    for (let i = 0; i < claims.length; i++) if (kept.get(keyOf[i]) !== contentOf[i]) conflicts.add(claims[i]);
    return conflicts;
  }
}
