// Property-based hostile input for every edge of a running node (issue 19): webhook bodies and log
// lines, Platform JWTs, sign-in, signed orders, cancels and query strings. Each property sends one
// generated input and checks that the answer is one the contract allows for it (never a 5xx, never
// a hang), while a /healthz probe runs beside it and records how long the node took to answer.
// Used by test/integration/edge/fuzz.test.ts (bounded for CI) and bench/fuzz.ts (a minute or more).
import fc from 'fast-check';
import jwt from 'jsonwebtoken';
import { createHmac } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { signOrder, type SignedOrder } from '../../src/clob/signed-order.ts';
import { fastestTry } from './fastest-try.ts';
import { fixture } from './fixtures.ts';

export interface FuzzTarget {
  url: string;
  webhookSecret: string;
  platformSecret: string;
  /** An order-book bearer token of `wallet`. */
  clobToken: string;
  wallet: Keypair;
}

export interface Sent {
  status: number;
  body: string;
  ms: number;
  probeMs: number;
}

/** Every probe's answer time, and what was sent when a probe was slow. */
export class Responsiveness {
  readonly probes: number[] = [];
  slowest: { ms: number; what: string } = { ms: 0, what: '' };

  note(ms: number, what: string): void {
    this.probes.push(ms);
    if (ms > this.slowest.ms) this.slowest = { ms, what };
  }

  quantile(q: number): number {
    const s = [...this.probes].sort((a, b) => a - b);
    return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
  }
}

/** A probe slower than this is tried again with the same input (see `send`). */
const SLOW_PROBE_MS = 100;

/**
 * Sends a request with a /healthz probe fired alongside it. When the probe takes longer than
 * SLOW_PROBE_MS the same input is sent again with a new probe, up to three tries, and the fastest
 * probe is what counts: an input that freezes the node holds back its probe on every try, while a
 * loaded machine's hiccup (GC, another process on the core) does not repeat.
 */
export async function send(
  url: string,
  method: string,
  path: string,
  o: { headers?: Record<string, string>; body?: string | Uint8Array },
  seen: Responsiveness,
): Promise<Sent> {
  const sent = await fastestTry(
    () => sendOnce(url, method, path, o),
    (x) => x.probeMs / SLOW_PROBE_MS,
  );
  seen.note(sent.probeMs, `${method} ${path.slice(0, 120)} (${typeof o.body === 'string' ? o.body.length : (o.body?.length ?? 0)} bytes)`);
  return sent;
}

async function sendOnce(
  url: string,
  method: string,
  path: string,
  o: { headers?: Record<string, string>; body?: string | Uint8Array },
): Promise<Sent> {
  const started = performance.now();
  const probe = (async () => {
    await new Promise((r) => setImmediate(r)); // after the request is on its way
    const t0 = performance.now();
    await (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(30_000) })).arrayBuffer();
    return performance.now() - t0;
  })();
  const res = await fetch(url + path, { method, headers: o.headers, body: o.body as any, signal: AbortSignal.timeout(30_000) });
  const body = await res.text();
  const ms = performance.now() - started;
  const probeMs = await probe;
  return { status: res.status, body, ms, probeMs };
}

const json = (headers: Record<string, string> = {}) => ({ 'content-type': 'application/json', ...headers });

/** Strings an attacker likes: control characters, NUL, lone surrogates, very long runs, base58 look-alikes. */
export const hostileString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\uffff',
    '💥',
    '../../etc/passwd',
    "' or 1=1 --",
    '%00',
    '0x',
    '-1',
    '1e309',
    'NaN',
    '[object Object]',
  ),
  fc.integer({ min: 1, max: 70_000 }).map((n) => '2'.repeat(n)),
  fc.integer({ min: 200, max: 5_000 }).map((n) => 'A'.repeat(n)),
  fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{30,100}$/),
  fc.stringMatching(/^0x[0-9a-f]{0,80}$/),
);

/** Any JSON value (deep nesting comes as text: see hostileBody). */
const hostileJson = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }) },
  {
    weight: 2,
    arbitrary: fc.dictionary(hostileString, fc.oneof(hostileString, fc.integer(), fc.double(), fc.boolean(), fc.constant(null)), {
      maxKeys: 6,
    }),
  },
);

/** A raw body: JSON text (maybe deeply nested), or bytes that are not UTF-8 or not JSON. */
const hostileBody = fc.oneof(
  { weight: 4, arbitrary: hostileJson.map((v) => JSON.stringify(v) as string | Uint8Array) },
  { weight: 1, arbitrary: fc.integer({ min: 1_000, max: 30_000 }).map((d) => '{"a":'.repeat(d) + '1' + '}'.repeat(d)) },
  { weight: 1, arbitrary: fc.integer({ min: 50, max: 30_000 }).map((d) => '['.repeat(d) + ']'.repeat(d)) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }) },
  { weight: 1, arbitrary: fc.constantFrom('{"slot":', '\u0000', '{"a":"\u00ff"}', 'null', '[]', '{}', '"x"') },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom('{"s":"', '["'), fc.constantFrom([0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80]))
      .map(([pre, bad]) => new Uint8Array([...Buffer.from(pre), ...bad, ...Buffer.from('"' + (pre[0] === '[' ? ']' : '}'))])),
  },
);

/** A log line of a transaction: the program's own shapes with hostile contents, or anything. */
const logLine = fc.oneof(
  hostileString,
  fc.tuple(hostileString, fc.integer({ min: -1, max: 1_000 })).map(([p, d]) => `Program ${p} invoke [${d}]`),
  hostileString.map((p) => `Program ${p} success`),
  fc.constantFrom('Log truncated', 'Program data: ', 'Program data: \u0000', 'Program log: Instruction: CreateParlay'),
  fc.base64String({ maxLength: 400 }).map((b) => `Program data: ${b}`),
  fc.uint8Array({ minLength: 8, maxLength: 300 }).map((b) => `Program data: ${Buffer.from(b).toString('base64')}`),
);

const base58Signature = fc.uint8Array({ minLength: 64, maxLength: 64 }).map((b) => bs58encode(b));

/** An HS256 JWT of any claims (jsonwebtoken refuses to sign claims of the wrong types). */
function hs256(claims: object, secret: string): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const head = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${head}.${createHmac('sha256', secret).update(head).digest('base64url')}`;
}

/** A query value sent as typed: `%` escapes kept as they are (invalid ones too, `%00`, `%FF`), other
 *  characters a URL cannot carry escaped. */
function rawQueryValue(v: string): string {
  return [...v.replace(/[\ud800-\udfff]/g, '')].map((c) => (/[A-Za-z0-9%._~!$'()*+,;:@/?-]/.test(c) ? c : encodeURIComponent(c))).join('');
}

function bs58encode(b: Uint8Array): string {
  const A = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
  let n = BigInt('0x' + (Buffer.from(b).toString('hex') || '0'));
  let s = '';
  while (n > 0n) {
    s = A[Number(n % 58n)] + s;
    n /= 58n;
  }
  for (const x of b) {
    if (x !== 0) break;
    s = '1' + s;
  }
  return s;
}

/**
 * The reproductions of issue 19, tried first by every run (fast-check `examples`), then the
 * generated input. Each is the argument tuple of its property.
 */
export function knownHostile(t: Pick<FuzzTarget, 'wallet' | 'platformSecret'>) {
  const address = t.wallet.publicKey.toBase58();
  const now = Math.floor(Date.now() / 1000);
  const deepLog = '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000);
  return {
    webhookBodies: [
      [`[{"slot":1,"meta":{"err":null,"logMessages":["Log truncated"],"x":${deepLog}},"transaction":{"signatures":["x"]}}]`],
      [new Uint8Array([0x5b, 0x22, 0xff, 0x22, 0x5d])],
      [new Uint8Array([0x5b, 0x22, 0xc3, 0x28, 0x22, 0x5d])],
    ],
    webhookLogs: [
      [
        [[9, 'Program data: \u0000']],
        '5hNHJzEk9MLS8ECVipb6p6vVtfJg2XqN3AKcARuVoGoozDUkKpvxqCjqaVg6Fbq1diSu8iBqqf2bkRbuuVyv5A4c',
        'A'.repeat(300),
        undefined,
      ],
    ],
    platformJwts: [
      [`Bearer ${hs256({ sub: 'x', wallet: 'W'.repeat(300), exp: now + 3600 }, t.platformSecret)}`, '/api/parlays/user/'],
      [`Bearer ${hs256({ sub: 'a\u0000b', exp: now + 3600 }, '')}`, '/api/parlays/user/'],
    ],
    signIn: [[JSON.stringify({ address, timestamp: now, signature: '2'.repeat(80_000) })]],
    orders: [[JSON.stringify({ order: { signer: 'x'.repeat(60_000) }, orderType: 'GTC' })]],
    cancels: [
      [['/v1/orders/cancel', JSON.stringify({ orderID: 'a\u0000b' })]],
      [['/v1/orders/cancel-batch', JSON.stringify({ orderIDs: ['\u0000'] })]],
    ],
    queries: [
      [['/v1/trades', ['taker']], [[0, 'a%00b', true]]],
      // Found by bench/fuzz.ts: a time beyond PostgreSQL's timestamps was a 500.
      [
        ['/v1/trades', ['before', 'after']],
        [
          [0, '2222222222222222', false],
          [1, '9'.repeat(30), false],
        ],
      ],
      [['/api/parlays/admin/', ['page']], [[0, '2222222222222222222', false]]],
      [['/api/parlays/admin/', ['page']], [[0, '1e300', false]]],
      [
        ['/v1/trades', ['id', 'maker', 'asset_id']],
        [
          [0, 'a\u0000b', false],
          [1, 'a\u0000b', false],
          [2, '%00', true],
        ],
      ],
    ],
  } as Record<string, unknown[][]>;
}

/** One property per edge. `rowsBefore` / no-row checks are the test's (it knows the database). */
export function edgeProperties(t: FuzzTarget, seen: Responsiveness) {
  const hook = (body: string | Uint8Array) =>
    send(t.url, 'POST', '/api/parlays/webhooks/indexer/', { headers: json({ authorization: t.webhookSecret }), body }, seen);
  const created = fixture('03')[0];
  const ok = (r: Sent, allowed: number[], what: string) => {
    if (!allowed.includes(r.status))
      throw new Error(`${what}: answered ${r.status} (allowed ${allowed.join(', ')}): ${r.body.slice(0, 300)}`);
    if (
      r.status >= 400 &&
      ![413, 414, 429, 431].includes(r.status) &&
      r.status !== 401 &&
      r.status !== 403 &&
      !/"(error|code)"/.test(r.body)
    ) {
      throw new Error(`${what}: a ${r.status} without the contract's error shape: ${r.body.slice(0, 300)}`);
    }
  };

  return {
    /** Anything as a webhook body: nothing is stored, never a 5xx. */
    webhookBodies: fc.asyncProperty(hostileBody, async (body) => {
      ok(await hook(body), [200, 400, 413], 'webhook body');
    }),

    /** A real ParlayCreated delivery with hostile log lines and fields spliced in. */
    webhookLogs: fc.asyncProperty(
      fc.array(fc.tuple(fc.nat(), logLine), { maxLength: 8 }),
      base58Signature,
      fc.option(hostileString, { nil: undefined }),
      fc.option(fc.integer({ min: -5, max: 2 ** 53 }), { nil: undefined }),
      async (inserts, signature, badSignature, slot) => {
        const tx = structuredClone(created);
        const logs: string[] = tx.meta.logMessages;
        for (const [at, line] of inserts) logs.splice(at % (logs.length + 1), 0, line);
        tx.transaction.signatures = [badSignature ?? signature];
        if (slot !== undefined) tx.slot = slot;
        // 200: applied (a fresh signature) or skipped; 400: refused at the edge; 503 only as a deferral.
        const r = await hook(JSON.stringify([tx]));
        ok(r, [200, 400, 503], 'webhook logs');
        if (r.status === 503 && !/deferred/.test(r.body)) throw new Error(`webhook logs: a 503 that is not a deferral: ${r.body}`);
      },
    ),

    /** Platform JWTs: forged, malformed, or validly signed with hostile claims. */
    platformJwts: fc.asyncProperty(
      fc.oneof(
        hostileString.map((s) => `Bearer ${s}`),
        hostileString,
        fc
          .record(
            {
              sub: hostileString,
              wallet: fc.option(hostileString),
              is_superuser: fc.oneof(fc.boolean(), hostileString),
              exp: fc.oneof(fc.constant(Math.floor(Date.now() / 1000) + 3600), fc.integer(), hostileString),
            },
            { requiredKeys: [] },
          )
          .map((claims) => `Bearer ${hs256(claims, t.platformSecret)}`),
        fc.record({ sub: hostileString }).map((c) => `Bearer ${jwt.sign(c, 'not-the-secret', { algorithm: 'HS256', expiresIn: 3600 })}`),
      ),
      fc.constantFrom('/api/parlays/user/', '/api/parlays/admin/', '/api/parlays/user/?status=active'),
      async (auth, path) => {
        // A header carries bytes: UTF-8 sent raw; fetch cannot send NUL, CR or LF at all.
        // Past Node's 16 KiB of headers the server answers 431 and may reset the connection while the
        // client still sends (fetch then fails): headers stay under it, 431 is tried by length alone.
        const authorization = Buffer.from(auth, 'utf8')
          .toString('latin1')
          .replace(/[\u0000-\u0008\u000a-\u001f\u007f]/g, '')
          .slice(0, 12_000);
        ok(await send(t.url, 'GET', path, { headers: { authorization } }, seen), [200, 400, 401, 403, 431], 'platform jwt');
      },
    ),

    /** Sign-in bodies: never a token for a message nobody signed. */
    signIn: fc.asyncProperty(
      fc.oneof(
        fc
          .record(
            {
              address: fc.oneof(hostileString, fc.constant(t.wallet.publicKey.toBase58())),
              timestamp: fc.oneof(fc.constant(Math.floor(Date.now() / 1000)), fc.integer(), fc.double(), hostileString),
              signature: fc.oneof(hostileString, base58Signature),
            },
            { requiredKeys: [] },
          )
          .map((b) => JSON.stringify(b) as string | Uint8Array),
        hostileBody,
      ),
      async (body) => {
        ok(await send(t.url, 'POST', '/v1/auth/token', { headers: json(), body }, seen), [400, 401, 413, 429], 'sign-in');
      },
    ),

    /** Signed orders with one field made hostile (the signature then fails too), or any body. */
    orders: fc.asyncProperty(
      fc.oneof(
        fc
          .tuple(
            fc.constantFrom<keyof SignedOrder>(
              'salt',
              'maker',
              'signer',
              'taker',
              'tokenId',
              'makerAmount',
              'takerAmount',
              'side',
              'expiration',
              'nonce',
              'feeRateBps',
              'signature',
            ),
            fc.oneof(hostileString, fc.integer(), fc.constant(null)),
            fc.constantFrom('GTC', 'FOK', 'GTD', 'IOC', ''),
          )
          .map(([field, value, orderType]) => {
            const maker = t.wallet.publicKey.toBase58();
            const good = signOrder(
              {
                salt: '1',
                maker,
                signer: maker,
                taker: '11111111111111111111111111111111',
                tokenId: Keypair.generate().publicKey.toBase58(),
                makerAmount: '1000000',
                takerAmount: '2000000',
                side: 'BUY',
                expiration: '0',
                nonce: '0',
                feeRateBps: '0',
              },
              t.wallet.secretKey,
            );
            return JSON.stringify({ order: { ...good, [field]: value }, orderType }) as string | Uint8Array;
          }),
        hostileBody,
      ),
      async (body) => {
        const r = await send(t.url, 'POST', '/v1/order', { headers: json({ authorization: `Bearer ${t.clobToken}` }), body }, seen);
        ok(r, [400, 413, 429], 'order');
        if (r.status === 400 && !/"success":false/.test(r.body))
          throw new Error(`order: a 400 not in the rejection shape: ${r.body.slice(0, 300)}`);
      },
    ),

    /** Cancels of ids that are not orders (or not ids). */
    cancels: fc.asyncProperty(
      fc
        .oneof(
          fc.tuple(
            fc.constant('/v1/orders/cancel'),
            fc.oneof(hostileString, fc.integer()).map((orderID) => ({ orderID })),
          ),
          fc.tuple(
            fc.constant('/v1/orders/cancel-batch'),
            fc.array(fc.oneof(hostileString, fc.integer()), { maxLength: 5 }).map((orderIDs) => ({ orderIDs })),
          ),
          fc.tuple(
            fc.constant('/v1/orders/cancel-market'),
            fc.record({ market: hostileString, asset_id: hostileString }, { requiredKeys: [] }),
          ),
        )
        .map(([path, body]) => [path, JSON.stringify(body)] as const),
      async ([path, body]) => {
        ok(
          await send(t.url, 'POST', path, { headers: json({ authorization: `Bearer ${t.clobToken}` }), body }, seen),
          [200, 400, 413, 429],
          path,
        );
      },
    ),

    /** Query strings, percent-encoded or raw (invalid escapes, NUL, bytes that are not UTF-8). */
    queries: fc.asyncProperty(
      fc.constantFrom(
        ['/v1/trades', ['id', 'taker', 'maker', 'asset_id', 'market', 'limit', 'before', 'after', 'owner']],
        ['/v1/open-orders', ['market']],
        ['/v1/orders', ['market']],
        ['/v1/orders/value-range', ['min_value']],
        ['/api/parlays/admin/', ['page', 'status', 'wallet']],
        ['/api/parlays/user/', ['status']],
      ) as fc.Arbitrary<[string, string[]]>,
      fc.array(fc.tuple(fc.nat(), hostileString, fc.boolean()), { minLength: 1, maxLength: 3 }),
      async ([path, names], params) => {
        const q = params
          .map(
            ([i, v, raw]) =>
              `${names[i % names.length]}=${(raw ? rawQueryValue(v) : encodeURIComponent(v.replace(/[\ud800-\udfff]/g, ''))).slice(0, 6000)}`,
          )
          .join('&');
        const headers = {
          authorization: path.startsWith('/v1')
            ? `Bearer ${t.clobToken}`
            : `Bearer ${jwt.sign({ sub: 'fuzz-admin', is_superuser: true }, t.platformSecret, { algorithm: 'HS256', expiresIn: 3600 })}`,
        };
        ok(await send(t.url, 'GET', `${path}?${q}`, { headers }, seen), [200, 400, 414, 429, 431], `GET ${path}`);
      },
    ),
  };
}
