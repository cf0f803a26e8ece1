// The OpenAPI 3.1 registry: every route module declares its operations here with one call
// (`documentRoutes(...)`), naming the very zod schemas its handlers validate with; the document
// (`GET /openapi.json`) and the docs page (`GET /docs`) are generated from them with zod's own
// `z.toJSONSchema`. test/integration/http/openapi.test.ts fails when a route registered on a Koa router is missing.
import { z } from 'zod';
import type Router from '@koa/router';
import { HttpError, zodMessage } from './errors.ts';
import { errorBody } from '../api/schemas.ts';

export type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** Who may call: omitted = anyone. */
export type Security = 'platform' | 'superuser' | 'clob' | 'webhook' | 'internal';

export interface ResponseSpec {
  description: string;
  /** Body schema; omitted = no body described. */
  schema?: z.ZodType;
  /** Default `application/json`. */
  contentType?: string;
}

export interface OperationSpec {
  method: Method;
  /** The full path as Koa routes it, prefix included: `/v1/orders/:id`. */
  path: string;
  summary: string;
  description?: string;
  tags?: string[];
  security?: Security;
  params?: z.ZodObject<any>;
  query?: z.ZodObject<any>;
  headers?: z.ZodObject<any>;
  body?: z.ZodType;
  responses: Record<number, ResponseSpec>;
}

export { errorBody };

const SECURITY_SCHEMES = {
  platform: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Platform JWT (HS256; claims sub, wallet, is_superuser, exp)',
  },
  superuser: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Platform JWT whose is_superuser claim is true' },
  clob: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'Order-book bearer token from POST /v1/auth/token' },
  webhook: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'The bare PARLAY_WEBHOOK_AUTH_SECRET' },
  internal: { type: 'apiKey', in: 'header', name: 'X-Internal-Token', description: 'CLOB_INTERNAL_TOKEN, held by the settlement executor' },
} as const;

const DEFAULT_ERRORS: Partial<Record<Security, number[]>> = {
  platform: [401],
  superuser: [401, 403],
  clob: [401],
  webhook: [403, 503],
  internal: [403],
};

/** `/v1/orders/:id` → `/v1/orders/{id}`. */
export const openApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

/** Koa routes match with or without a trailing slash (`/api/markets/` is the layer `/api/markets`). */
const key = (method: string, path: string) => `${method.toLowerCase()} ${openApiPath(path).replace(/(.)\/$/, '$1')}`;

export class OpenApiRegistry {
  private ops = new Map<string, OperationSpec>();

  /** Declares operations; a later declaration of the same method and path replaces the earlier one. */
  add(...ops: OperationSpec[]): void {
    for (const op of ops) this.ops.set(key(op.method, op.path), op);
  }

  operations(): OperationSpec[] {
    return [...this.ops.values()];
  }

  /** The operation of a Koa route (`method`, the layer's path); undefined when undocumented. */
  find(method: string, path: string): OperationSpec | undefined {
    return this.ops.get(key(method, path));
  }

  /**
   * Checks a response body against the documented schema of (method, path, status). Returns the
   * problems found; empty when it matches.
   */
  checkResponse(method: string, path: string, status: number, body: unknown): string[] {
    const op = this.find(method, path);
    if (!op) return [`${method.toUpperCase()} ${path} is not documented`];
    const res = op.responses[status] ?? (status >= 400 ? { description: 'error', schema: errorBody } : undefined);
    if (!res) return [`${method.toUpperCase()} ${path}: status ${status} is not documented`];
    if (!res.schema) return [];
    const r = res.schema.safeParse(body);
    return r.success ? [] : [`${method.toUpperCase()} ${path} ${status}: ${zodMessage(r.error)}`];
  }

  document(info: { title?: string; version?: string; description?: string } = {}): Record<string, any> {
    const components: Record<string, unknown> = {};
    const schema = (s: z.ZodType, io: 'input' | 'output') => {
      const js = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, any>;
      delete js.$schema;
      const defs = js.$defs as Record<string, unknown> | undefined;
      delete js.$defs;
      for (const [id, d] of Object.entries(defs ?? {})) components[id] = d;
      return JSON.parse(JSON.stringify(js).replaceAll('"#/$defs/', '"#/components/schemas/'));
    };
    const paths: Record<string, Record<string, unknown>> = {};
    const sorted = this.operations().sort((a, b) => a.path.localeCompare(b.path) || a.method.localeCompare(b.method));
    for (const op of sorted) {
      const parameters: unknown[] = [];
      const addParams = (obj: z.ZodObject<any> | undefined, where: 'path' | 'query' | 'header') => {
        if (!obj) return;
        const js = schema(obj, 'input');
        const required = new Set<string>(js.required ?? []);
        for (const [name, s] of Object.entries<any>(js.properties ?? {})) {
          parameters.push({
            name,
            in: where,
            required: where === 'path' || required.has(name),
            ...(s.description ? { description: s.description } : {}),
            schema: s,
          });
        }
      };
      addParams(op.params, 'path');
      addParams(op.query, 'query');
      addParams(op.headers, 'header');
      const responses: Record<string, unknown> = {};
      const all: Record<number, ResponseSpec> = { ...op.responses };
      for (const status of [...(DEFAULT_ERRORS[op.security!] ?? []), ...(op.params || op.query || op.body ? [400] : [])]) {
        all[status] ??= { description: 'error', schema: errorBody };
      }
      // The edge's bounds (README, "Hostile input at the edge"): a body past its route's limit, and
      // the order book's rate limits (with Retry-After).
      // A route whose rejections have a shape of their own (POST /v1/order) answers these in it too.
      const shape = op.responses[400]?.schema ?? errorBody;
      if (op.body) all[413] ??= { description: 'the body is larger than the route allows', schema: shape };
      if (op.path.startsWith('/v1/'))
        all[429] ??= { description: "rate limited: retry after the Retry-After header's seconds", schema: shape };
      for (const [status, res] of Object.entries(all)) {
        responses[status] = {
          description: res.description,
          ...(res.schema ? { content: { [res.contentType ?? 'application/json']: { schema: schema(res.schema, 'output') } } } : {}),
        };
      }
      paths[openApiPath(op.path)] ??= {};
      paths[openApiPath(op.path)][op.method] = {
        operationId: `${op.method}${openApiPath(op.path)
          .replace(/[{}]/g, '')
          .split(/[^A-Za-z0-9]+/)
          .filter(Boolean)
          .map((w) => w[0].toUpperCase() + w.slice(1))
          .join('')}`,
        summary: op.summary,
        ...(op.description ? { description: op.description } : {}),
        tags: op.tags ?? [op.path.split('/').filter(Boolean).slice(0, 2).join('/')],
        ...(op.security ? { security: [{ [op.security]: [] }] } : { security: [] }),
        ...(parameters.length ? { parameters } : {}),
        ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: schema(op.body, 'input') } } } } : {}),
        responses,
      };
    }
    return {
      openapi: '3.1.0',
      info: {
        title: info.title ?? 'Parlay mirror and order book',
        version: info.version ?? '0.1.0',
        ...(info.description ? { description: info.description } : {}),
      },
      jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
      paths,
      components: { schemas: components, securitySchemes: SECURITY_SCHEMES },
    };
  }
}

/** The service's registry. */
export const openapi = new OpenApiRegistry();

/** The one call a route module makes to document its routes. */
export function documentRoutes(...ops: OperationSpec[]): void {
  openapi.add(...ops);
}

/** Parses with a schema, answering 400 `invalid_request` with zod's message on failure. */
export function validate<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new HttpError(400, 'invalid_request', zodMessage(r.error));
  return r.data;
}

export interface RouteEntry {
  method: string;
  path: string;
}

/** Every (method, path) registered on the routers (HEAD, implied by GET, left out). */
export function routesOf(routers: Iterable<Router>): RouteEntry[] {
  const out = new Map<string, RouteEntry>();
  for (const r of routers) {
    for (const layer of (r as any).stack as { methods: string[]; path: string | RegExp }[]) {
      if (typeof layer.path !== 'string') continue;
      for (const m of layer.methods) {
        if (m === 'HEAD' || m === 'OPTIONS') continue;
        out.set(`${m} ${layer.path}`, { method: m.toLowerCase(), path: layer.path });
      }
    }
  }
  return [...out.values()];
}

/** The routers mounted on a Koa app (each `router.routes()` middleware carries its router). */
export function routersOf(app: { middleware: unknown[] }): Router[] {
  return app.middleware.map((m: any) => m?.router).filter(Boolean);
}

/** Routes of the routers the registry does not document. */
export function undocumented(routers: Iterable<Router>, registry = openapi): RouteEntry[] {
  return routesOf(routers).filter((r) => !registry.find(r.method, r.path));
}
