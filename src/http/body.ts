// Request bodies, bounded before any work: a route reads its JSON body only after its guards
// (authentication, rate limits) have passed, and never more than its own byte limit; the bytes must
// be strict UTF-8, the JSON nested at most `depth` levels (checked on the text, before JSON.parse)
// and no string may hold a NUL or an unpaired surrogate (PostgreSQL text cannot store either).
import { isUtf8 } from 'node:buffer';
import type { Context, Next } from 'koa';
import { edgeError } from './errors.ts';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body, once a route's `jsonBody` has read it. */
    body?: any;
    rawBody?: string;
  }
}

export interface BodyBounds {
  /** Most bytes a body may have (413 beyond). */
  bytes: number;
  /** Most nesting levels of arrays and objects (400 beyond). */
  depth: number;
  /**
   * Whether every string of the body is checked for NUL and unpaired surrogates (default). Off only
   * where the route's schema checks each string it keeps and strips the rest (the webhook, whose
   * log lines are most of its bytes: walking them twice cost 3 µs an event).
   */
  checkStrings?: boolean;
}

/** The client went away while its body was being read: nothing to answer, not an error of ours. */
export class ClientGone extends Error {
  readonly clientGone = true;
  constructor(
    readonly code: string,
    message = 'the client closed the connection',
  ) {
    super(message);
  }
}

const JSON_TYPE = /^application\/([\w.+-]*\+)?json\b|^application\/csp-report\b/i;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Middleware that parses the JSON body into ctx.request.body. Mount it after the route's guards:
 * `r.post('/x', auth, jsonBody(bounds), handler)`. A body that is not declared JSON is `{}`, unread.
 */
export function jsonBody(bounds: BodyBounds) {
  return async (ctx: Context, next: Next) => {
    if (!BODY_METHODS.has(ctx.method) || ctx.request.body !== undefined) return next();
    if (!JSON_TYPE.test(ctx.get('content-type'))) {
      ctx.request.body = {};
      return next();
    }
    const raw = await readRaw(ctx, bounds.bytes);
    if (!isUtf8(raw)) throw edgeError(ctx, 400, 'malformed_body', 'the body is not valid UTF-8');
    const text = raw.toString('utf8');
    if (text.trim() === '') {
      ctx.request.body = {};
      return next();
    }
    if (nestedDeeperThan(text, bounds.depth))
      throw edgeError(ctx, 400, 'malformed_body', `the body is nested deeper than ${bounds.depth} levels`);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e: any) {
      throw edgeError(ctx, 400, 'malformed_body', `the body is not valid JSON: ${e.message}`);
    }
    const bad = bounds.checkStrings === false ? null : uncleanStringIn(text, value);
    if (bad !== null) throw edgeError(ctx, 400, 'malformed_body', `the body holds a string with ${bad}`);
    ctx.request.body = value;
    ctx.request.rawBody = text;
    return next();
  };
}

/** The body's bytes, at most `limit` of them: 413 as soon as it is known to be larger. */
export function readRaw(ctx: Context, limit: number): Promise<Buffer> {
  const declared = ctx.get('content-length');
  if (declared && Number(declared) > limit) return Promise.reject(tooLarge(ctx, limit));
  const req = ctx.req;
  if (req.readableEnded) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: Error | null) => {
      if (settled) return;
      settled = true;
      req.off('data', onData).off('end', onEnd).off('aborted', onAborted).off('error', onError).off('close', onClose);
      if (err) {
        // What is left is read and dropped by Node (the request is answered meanwhile); never kept.
        req.resume();
        reject(err);
      } else resolve(Buffer.concat(chunks, size));
    };
    const onData = (c: Buffer) => {
      size += c.length;
      if (size > limit) {
        chunks.length = 0;
        finish(tooLarge(ctx, limit));
        return;
      }
      chunks.push(c);
    };
    const onEnd = () => finish(null);
    const onAborted = () => finish(new ClientGone('ECONNABORTED', 'request aborted'));
    const onError = (e: any) => finish(new ClientGone(e?.code ?? 'ECONNRESET', e?.message ?? 'request error'));
    const onClose = () => {
      if (!req.complete) finish(new ClientGone('ECONNABORTED', 'request aborted'));
    };
    req.on('data', onData).on('end', onEnd).on('aborted', onAborted).on('error', onError).on('close', onClose);
  });
}

function tooLarge(ctx: Context, limit: number): Error {
  return edgeError(ctx, 413, 'payload_too_large', `the body is larger than this route's limit of ${limit} bytes`);
}

/**
 * True when arrays/objects nest deeper than `max` (a linear scan of the text). Strings are skipped
 * with indexOf from quote to quote (a quote preceded by an odd run of backslashes is escaped):
 * most of a webhook body is log lines, which a character-by-character walk cost 6 µs an event.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34) {
      // To the closing quote: the next quote not escaped by an odd run of backslashes.
      let j = i;
      for (;;) {
        j = text.indexOf('"', j + 1);
        if (j < 0) return false; // an unterminated string: JSON.parse refuses the body
        let k = j - 1;
        while (text.charCodeAt(k) === 92) k--;
        if ((j - 1 - k) % 2 === 0) break;
      }
      i = j;
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/**
 * `uncleanString(value)` for `value = JSON.parse(text)`, where `text` is valid UTF-8: without a
 * `\u` escape in the text no string of it can hold a NUL (JSON refuses raw control characters) or
 * an unpaired surrogate (valid UTF-8 encodes none), so the walk is skipped. A webhook delivery has
 * none: the walk cost 1.5–2.6 µs an event, more than `JSON.parse` of the body (1.2–1.7).
 */
export function uncleanStringIn(text: string, value: unknown): string | null {
  return text.includes('\\u') ? uncleanString(value) : null;
}

/** What is wrong with the first unclean string (key or value) of a parsed JSON value, or null. Iterative. */
export function uncleanString(value: unknown): string | null {
  const stack: unknown[] = [value];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v === 'string') {
      const bad = uncleanText(v);
      if (bad) return bad;
    } else if (Array.isArray(v)) {
      for (const x of v) stack.push(x);
    } else if (v !== null && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        const bad = uncleanText(k);
        if (bad) return bad;
        stack.push(x);
      }
    }
  }
  return null;
}

/** 'a NUL character' / 'an unpaired surrogate' / null. */
export function uncleanText(s: string): string | null {
  if (s.includes('\u0000')) return 'a NUL character';
  if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) return 'an unpaired surrogate';
  return null;
}
