// A commit script on PGlite without the result handling of `exec`: a commit's results are never
// read, and PGlite's `exec` parses every protocol message and then builds a result set with a copy
// of its ~400 type parsers per call (in the embedded order path, a tenth of the node's CPU went
// there). Here the script goes to the engine as one simple-query message, under the same locks
// `exec` takes, and the answer's bytes are only scanned for an ErrorResponse.

/** The members of PGlite (0.5.x) this uses: public, or underscored but stable across the 0.x line. */
export interface PgliteEngine {
  /** Throws once the engine is closing or closed (as `exec` and `query` do), waits while it starts. */
  _checkReady(): Promise<void>;
  _runExclusiveTransaction<T>(fn: () => Promise<T>): Promise<T>;
  _runExclusiveQuery<T>(fn: () => Promise<T>): Promise<T>;
  execProtocolRaw(message: Uint8Array): Promise<Uint8Array>;
}

/** A script's failure: the server's message, its SQLSTATE in `code`. */
export class ScriptError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
  ) {
    super(message);
    this.name = 'ScriptError';
  }
}

/** The simple-query message ('Q') of a script. */
export function queryMessage(sql: string): Uint8Array {
  const body = Buffer.byteLength(sql);
  const out = Buffer.allocUnsafe(1 + 4 + body + 1);
  out[0] = 0x51;
  out.writeInt32BE(4 + body + 1, 1);
  out.write(sql, 5, 'utf8');
  out[5 + body] = 0;
  return out;
}

/** The first ErrorResponse ('E') among the answer's messages, or null. */
export function errorIn(answer: Uint8Array): ScriptError | null {
  const b = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  let at = 0;
  while (at + 5 <= b.length) {
    const type = b[at];
    const len = b.readInt32BE(at + 1);
    if (type === 0x45) {
      const fields = new Map<string, string>();
      let p = at + 5;
      const end = at + 1 + len;
      while (p < end && b[p] !== 0) {
        const field = String.fromCharCode(b[p]);
        const stop = b.indexOf(0, p + 1);
        if (stop < 0 || stop >= end) break;
        fields.set(field, b.toString('utf8', p + 1, stop));
        p = stop + 1;
      }
      return new ScriptError(fields.get('M') ?? 'the script failed', fields.get('C'));
    }
    at += 1 + len;
  }
  return null;
}

/** Runs `sql` (one implicit transaction: all of it or none) and throws the server's error if it failed. */
export async function runScript(engine: PgliteEngine, sql: string): Promise<void> {
  const message = queryMessage(sql);
  await engine._checkReady();
  const error = await engine._runExclusiveTransaction(() =>
    engine._runExclusiveQuery(async () => errorIn(await engine.execProtocolRaw(message))),
  );
  if (error) throw error;
}

/** The members of PGlite a read takes besides a script's: its parsers by type OID (what `query` converts with). */
export interface PgliteReadEngine extends PgliteEngine {
  parsers: Record<number, (text: string, typeId: number) => unknown>;
}

/** What a parameter can be on this path: anything else goes through PGlite's own `query`. */
export type TextParam = string | number | bigint | boolean | null;

export const textParams = (params: unknown[]): params is TextParam[] =>
  params.every((p) => p === null || typeof p === 'string' || typeof p === 'number' || typeof p === 'bigint' || typeof p === 'boolean');

/**
 * [Parse +] Bind (text parameters, types inferred) + Describe + Execute + Sync, as one buffer. With
 * `name`, the statement is the named one (`parse` false: already prepared on this engine).
 */
export function extendedQuery(sql: string, params: TextParam[], name = '', parse = true): Uint8Array {
  const values = params.map((p) => (p === null ? null : Buffer.from(typeof p === 'boolean' ? (p ? 't' : 'f') : String(p), 'utf8')));
  const text = Buffer.from(sql, 'utf8');
  const id = Buffer.from(name, 'utf8');
  const parseLen = parse ? 4 + id.length + 1 + text.length + 1 + 2 : 0;
  const bindLen = 4 + 1 + id.length + 1 + 2 + 2 + values.reduce((n, v) => n + 4 + (v ? v.length : 0), 0) + 2;
  const out = Buffer.allocUnsafe((parse ? 1 + parseLen : 0) + 1 + bindLen + 1 + 6 + 1 + 9 + 1 + 4);
  let at = 0;
  const u8 = (v: number) => (out[at++] = v);
  const i16 = (v: number) => (at = out.writeInt16BE(v, at));
  const i32 = (v: number) => (at = out.writeInt32BE(v, at));
  if (parse) {
    u8(0x50); // Parse
    i32(parseLen);
    at += id.copy(out, at);
    u8(0);
    at += text.copy(out, at);
    u8(0);
    i16(0);
  }
  u8(0x42); // Bind
  i32(bindLen);
  u8(0);
  at += id.copy(out, at);
  u8(0);
  i16(0);
  i16(values.length);
  for (const v of values) {
    if (v === null) i32(-1);
    else {
      i32(v.length);
      at += v.copy(out, at);
    }
  }
  i16(0);
  u8(0x44); // Describe the portal
  i32(6);
  u8(0x50);
  u8(0);
  u8(0x45); // Execute, all rows
  i32(9);
  u8(0);
  i32(0);
  u8(0x53); // Sync
  i32(4);
  return out;
}

/** The rows of an answer (RowDescription, DataRow…), values converted with `parsers`; throws its ErrorResponse. */
export function rowsIn(answer: Uint8Array, parsers: PgliteReadEngine['parsers']): Record<string, unknown>[] {
  const b = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  const rows: Record<string, unknown>[] = [];
  let names: string[] = [];
  let types: number[] = [];
  let at = 0;
  while (at + 5 <= b.length) {
    const type = b[at];
    const len = b.readInt32BE(at + 1);
    const body = at + 5;
    if (type === 0x45) throw errorIn(b.subarray(at))!;
    if (type === 0x54) {
      const n = b.readInt16BE(body);
      names = new Array(n);
      types = new Array(n);
      let p = body + 2;
      for (let i = 0; i < n; i++) {
        const stop = b.indexOf(0, p);
        names[i] = b.toString('utf8', p, stop);
        types[i] = b.readInt32BE(stop + 1 + 6);
        p = stop + 1 + 18;
      }
    } else if (type === 0x44) {
      const n = b.readInt16BE(body);
      const row: Record<string, unknown> = {};
      let p = body + 2;
      for (let i = 0; i < n; i++) {
        const l = b.readInt32BE(p);
        p += 4;
        if (l < 0) row[names[i]] = null;
        else {
          const text = b.toString('utf8', p, p + l);
          const parse = parsers[types[i]];
          row[names[i]] = parse ? parse(text, types[i]) : text;
          p += l;
        }
      }
      rows.push(row);
    }
    at += 1 + len;
  }
  return rows;
}

/** The named statements prepared on each engine (PGlite is one session: they last as long as it). */
const prepared = new WeakMap<object, Set<string>>();

/**
 * One statement with `$n` parameters, its rows as PGlite's `query` gives them, in one trip through
 * the engine. With `name` (one text per name), the statement is prepared on first use and planned
 * once, not per call.
 */
export async function readRows(
  engine: PgliteReadEngine,
  sql: string,
  params: TextParam[],
  name?: string,
): Promise<Record<string, unknown>[]> {
  let names = prepared.get(engine);
  if (!names) prepared.set(engine, (names = new Set()));
  const statement = name ? `r_${name}` : '';
  await engine._checkReady();
  return engine._runExclusiveQuery(async () => {
    const parse = !statement || !names.has(statement);
    const answer = await engine.execProtocolRaw(extendedQuery(sql, params, statement, parse));
    // Prepared once its Parse completed, even if what followed failed (a parameter the type refuses).
    if (statement && parse && answer[0] === 0x31) names.add(statement);
    return rowsIn(answer, engine.parsers);
  });
}
