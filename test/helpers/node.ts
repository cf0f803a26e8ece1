// Starts a service node for a test: in-process bus or the real Kafka broker, PGlite or PostgreSQL.
import { randomBytes } from 'node:crypto';
import jwt from 'jsonwebtoken';
import pino from 'pino';
import { loadConfig, type Config } from '../../src/config.ts';
import { startNode, type NodeOptions, type ServiceNode } from '../../src/node.ts';

export const JWT_SECRET = 'test-platform-secret';
export const WEBHOOK_SECRET = 'test-webhook-secret';
export const CLOB_SECRET = 'test-clob-secret';
export const INTERNAL_TOKEN = 'internal-secret';
export const KAFKA_BROKERS = process.env.KAFKA_BROKERS ?? '127.0.0.1:19092';

export function testConfig(over: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    APP_ENV: 'development',
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: 'memory://',
    PLATFORM_JWT_SECRET: JWT_SECRET,
    PARLAY_WEBHOOK_AUTH_SECRET: WEBHOOK_SECRET,
    CLOB_JWT_SECRET: CLOB_SECRET,
    CLOB_INTERNAL_TOKEN: INTERNAL_TOKEN,
    TOPIC_PREFIX: `t${randomBytes(4).toString('hex')}.`,
    TOPIC_PARTITIONS: '4',
    NODE_ID: `n${randomBytes(3).toString('hex')}`,
    LOCAL_CHAIN: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...over,
  });
}

export async function testNode(over: Record<string, string | undefined> = {}, opts: NodeOptions = {}): Promise<ServiceNode> {
  const cfg = testConfig(over);
  return startNode(cfg, { log: pino({ level: cfg.logLevel }), chain: null, ...opts });
}

export function token(
  claims: { sub: string; wallet?: string | null; is_superuser?: boolean },
  secret = JWT_SECRET,
  expiresIn = 3600,
): string {
  return jwt.sign(claims, secret, { algorithm: 'HS256', expiresIn });
}

/** How long a test's request may wait for its answer (the service's own asks time out in 10 s). */
export const CALL_TIMEOUT_MS = 60_000;

export interface Res {
  status: number;
  body: any;
  headers: Headers;
}

export async function call(
  base: string,
  method: string,
  path: string,
  opts: { token?: string; auth?: string; body?: unknown; raw?: string } = {},
): Promise<Res> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  let body: string | undefined;
  if (opts.raw !== undefined) {
    body = opts.raw;
    headers['content-type'] = 'application/json';
  } else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  // A request the service never answers fails the test with its route, not the whole run with a stall.
  let r: Response;
  let text: string;
  try {
    r = await fetch(base + path, { method, headers, body, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    text = await r.text();
  } catch (e) {
    if ((e as Error).name === 'TimeoutError') throw new Error(`${method} ${path}: no answer in ${CALL_TIMEOUT_MS} ms`, { cause: e });
    throw e;
  }
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: r.status, body: parsed, headers: r.headers };
}
