// The API description: `GET /openapi.json` (OpenAPI 3.1, from the registry every route module fills)
// and `GET /docs`, a self-contained HTML page rendering it (no scripts, no CDN).
import Router from '@koa/router';
import { documentRoutes, openapi, type OpenApiRegistry } from '../openapi.ts';
import * as api from '../../api/schemas.ts';
import { z } from 'zod';

// The operational routes of health.ts; documented here so that their module stays as it is.
documentRoutes(
  {
    method: 'get',
    path: '/healthz',
    summary: 'Liveness',
    tags: ['operations'],
    responses: { 200: { description: 'alive', schema: api.healthBody } },
  },
  {
    method: 'get',
    path: '/readyz',
    summary: 'Readiness: database, bus and chain RPC',
    tags: ['operations'],
    responses: { 200: { description: 'ready', schema: api.readyBody }, 503: { description: 'not ready', schema: api.readyBody } },
  },
  {
    method: 'get',
    path: '/metrics',
    summary: 'Prometheus metrics',
    tags: ['operations'],
    responses: { 200: { description: 'text exposition format', schema: z.string(), contentType: 'text/plain' } },
  },
  {
    method: 'get',
    path: '/openapi.json',
    summary: 'This document (OpenAPI 3.1)',
    tags: ['operations'],
    responses: { 200: { description: 'the document', schema: z.record(z.string(), z.unknown()) } },
  },
  {
    method: 'get',
    path: '/docs',
    summary: 'The document as a readable page',
    tags: ['operations'],
    responses: { 200: { description: 'HTML', schema: z.string(), contentType: 'text/html' } },
  },
);

export function docsRoutes(registry: OpenApiRegistry = openapi) {
  const r = new Router();
  let doc: Record<string, any> | null = null;
  let html: string | null = null;
  const document = () =>
    (doc ??= registry.document({
      description:
        'Both areas of the service: the parlay mirror (/api/...) and the order book (/v1/...). See docs/spec.md and docs/contracts/ in the repository.',
    }));
  r.get('/openapi.json', (ctx) => {
    ctx.body = document();
  });
  r.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html ??= renderDocs(document());
  });
  return r;
}

const esc = (s: unknown) =>
  String(s).replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** A plain HTML rendering of an OpenAPI document: one section per operation, schemas folded. */
export function renderDocs(doc: Record<string, any>): string {
  const out: string[] = [];
  const json = (v: unknown) => `<details><summary>schema</summary><pre>${esc(JSON.stringify(v, null, 2))}</pre></details>`;
  // A schema's type in short, as HTML: references link to the schema section below.
  const typeOf = (s: any): string => {
    if (!s) return '';
    if (s.$ref) {
      const name = s.$ref.split('/').pop();
      return `<a href="#schema-${esc(name)}">${esc(name)}</a>`;
    }
    if (s.enum) return esc(s.enum.map((x: unknown) => JSON.stringify(x)).join(' | '));
    if (s.anyOf) return s.anyOf.map(typeOf).join(' | ');
    if (s.type === 'array') return `${typeOf(s.items)}[]`;
    return esc([].concat(s.type ?? 'any').join(' | ') + (s.pattern ? ` /${s.pattern}/` : '') + (s.format ? ` (${s.format})` : ''));
  };
  const toc: string[] = [];
  const ops: string[] = [];
  for (const [path, methods] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(methods)) {
      const anchor = op.operationId;
      toc.push(
        `<li><a href="#${esc(anchor)}"><code class="m ${esc(method)}">${esc(method.toUpperCase())}</code> <code>${esc(path)}</code></a> — ${esc(op.summary)}</li>`,
      );
      const sec = op.security?.length ? Object.keys(op.security[0]).join(', ') : 'none';
      const params = (op.parameters ?? [])
        .map(
          (p: any) =>
            `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : ''}</td><td><code>${typeOf(p.schema)}</code>${p.schema?.default !== undefined ? ` (default ${esc(JSON.stringify(p.schema.default))})` : ''}</td><td>${esc(p.description ?? p.schema?.description ?? '')}</td></tr>`,
        )
        .join('');
      const body = op.requestBody?.content?.['application/json']?.schema;
      const responses = Object.entries<any>(op.responses)
        .map(([status, res]) => {
          const [ct, c] = Object.entries<any>(res.content ?? {})[0] ?? [];
          return `<li><b>${esc(status)}</b> ${esc(res.description)}${ct ? ` <code>${esc(ct)}</code> <code>${typeOf(c.schema)}</code>${json(c.schema)}` : ''}</li>`;
        })
        .join('');
      ops.push(`<section id="${esc(anchor)}"><h3><code class="m ${esc(method)}">${esc(method.toUpperCase())}</code> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}</p>${op.description ? `<p>${esc(op.description)}</p>` : ''}<p>auth: <b>${esc(sec)}</b></p>
${params ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>type</th><th>about</th></tr>${params}</table>` : ''}
${body ? `<h4>request body <code>application/json</code> <code>${typeOf(body)}</code></h4>${json(body)}` : ''}<h4>responses</h4><ul>${responses}</ul></section>`);
    }
  }
  const schemas = Object.entries<any>(doc.components?.schemas ?? {})
    .map(
      ([name, s]) =>
        `<section id="schema-${esc(name)}"><h3>${esc(name)}</h3>${s.description ? `<p>${esc(s.description)}</p>` : ''}<pre>${esc(JSON.stringify(s, null, 2))}</pre></section>`,
    )
    .join('');
  const security = Object.entries<any>(doc.components?.securitySchemes ?? {})
    .map(([name, s]) => `<li><b>${esc(name)}</b>: ${esc(s.description ?? '')}</li>`)
    .join('');
  out.push(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)} — API</title>
<style>body{font:14px/1.45 system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}code,pre{font:12.5px ui-monospace,monospace}
pre{background:#f6f8fa;padding:.6em;overflow:auto;max-height:30em}section{border-top:1px solid #ddd;padding:.4em 0}table{border-collapse:collapse}
td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}.m{font-weight:bold;padding:0 4px;border-radius:3px;color:#fff}
.get{background:#2b7de9}.post{background:#2a9d5c}.patch{background:#c77c02}.put{background:#8e44ad}.delete{background:#c0392b}</style></head><body>
<h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1><p>${esc(doc.info.description ?? '')}</p>
<p>OpenAPI ${esc(doc.openapi)} document: <a href="/openapi.json">/openapi.json</a></p>
<h2>Authentication</h2><ul>${security}</ul><h2>Operations</h2><ul>${toc.join('')}</ul>${ops.join('')}<h2>Schemas</h2>${schemas}</body></html>`);
  return out.join('');
}
