// Why a batch's commit failed: because of what some record holds (the same records fail the same
// way every time: a value longer than its column, beyond its type's range, a NUL byte, a broken
// constraint, a projection that throws on it), or because of the moment (the database unreachable,
// a connection dropped, a serialization failure or deadlock, a lock not granted, a schema not
// migrated yet). Only the first kind is narrowed down to its record and dead-lettered; the second
// is retried with backoff, however long it lasts, and never dead-letters anything.

/** A kind's projection threw (plain code, no database involved yet): what it was given is at fault. */
export class ProjectionError extends Error {
  constructor(
    readonly kind: string,
    readonly cause: unknown,
  ) {
    super(`projection of ${kind} threw: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

export type CommitFailure = 'data' | 'transient';

/**
 * SQLSTATE classes caused by the values a statement carries: 22 data exception (too long, out of
 * range, invalid text representation, bad encoding), 23 integrity constraint violation, 54 program
 * limit exceeded (an index row or a nesting too large). 08P01 is PostgreSQL's answer to a NUL byte
 * inside a query's text ("invalid message format"); every other 08 code is a connection failure.
 */
const DATA_CLASSES = new Set(['22', '23', '54']);
const DATA_CODES = new Set(['08P01']);

export function sqlStateOf(err: unknown): string | undefined {
  for (let e: any = err, depth = 0; e && depth < 4; e = e.cause ?? e.previous, depth++) {
    const code = e.sqlState ?? e.code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}

export function classifyCommitFailure(err: unknown): CommitFailure {
  if (err instanceof ProjectionError) return 'data';
  const code = sqlStateOf(err);
  if (!code) return 'transient'; // ECONNREFUSED, "Connection terminated", timeouts, anything unknown
  return DATA_CLASSES.has(code.slice(0, 2)) || DATA_CODES.has(code) ? 'data' : 'transient';
}

/** Longest reason kept with a dead letter. */
export const REASON_MAX = 1_000;

/** The reason of a dead letter: `prefix: message (SQLSTATE code)`, one line, without NUL, cut to REASON_MAX. */
export function reasonOf(prefix: string, err: unknown): string {
  const code = err instanceof ProjectionError ? undefined : sqlStateOf(err);
  const message = String((err as Error)?.message ?? err)
    .replace(/\s+/g, ' ')
    .trim();
  return clip(`${prefix}: ${message}${code ? ` (SQLSTATE ${code})` : ''}`, REASON_MAX);
}

/** Text PostgreSQL accepts: NUL written as the six characters `\u0000`, cut to `max` characters. */
export function clip(s: string, max = Infinity): string {
  const clean = s.includes('\u0000') ? s.replace(/\u0000/g, '\\u0000') : s;
  return clean.length > max ? `${clean.slice(0, max - 1)}…` : clean;
}
