// Typed client of the parlay side (/api/parlays/...) and the market catalog (/api/markets/...),
// authenticated with a Platform JWT the caller provides (a string, or a function for renewals).
import type { z } from 'zod';
import type * as api from '../api/schemas.ts';
import type { vaultPatch } from '../api/parlays.ts';
import type { marketCreate, marketPatch } from '../clob/catalog.ts';
import type * as tpl from '../templates/schemas.ts';
import { expect, Transport, type TransportOptions } from './http.ts';

export type ParlayStatus = 'active' | 'won' | 'lost' | 'claimed' | 'voided' | 'refunded';
export type VaultPatch = z.input<typeof vaultPatch>;
export type MarketCreate = z.input<typeof marketCreate>;
export type MarketPatch = z.input<typeof marketPatch>;
export type TemplateCreate = z.input<typeof tpl.templateCreate>;
export type TemplatePatch = z.input<typeof tpl.templatePatch>;
export type QuoteRequest = z.input<typeof tpl.quoteRequest>;
export type Template = z.output<typeof tpl.template>;
export type Suggestion = z.output<typeof tpl.suggestion>;
export type Quote = z.output<typeof tpl.quote>;

export interface ParlayClientOptions extends TransportOptions {
  /** The Platform JWT (HS256, claims sub, wallet, is_superuser, exp), or a function giving a current one. */
  token?: string | (() => string | Promise<string>);
}

export class ParlayClient {
  readonly http: Transport;

  constructor(private o: ParlayClientOptions) {
    this.http = new Transport(o);
  }

  private async auth(): Promise<Record<string, string>> {
    const t = typeof this.o.token === 'function' ? await this.o.token() : this.o.token;
    if (!t) throw new Error('this route needs a Platform JWT (option token)');
    return { authorization: `Bearer ${t}` };
  }

  /** The caller's parlays, newest first, at most 50. */
  async userParlays(status?: ParlayStatus): Promise<api.Parlay[]> {
    return expect<{ data: api.Parlay[] }>(
      await this.http.request('GET', '/api/parlays/user/', { query: { status }, headers: await this.auth() }),
    ).data;
  }

  /** One parlay of the caller; null when missing or someone else's. */
  async parlay(parlayId: number | string): Promise<api.Parlay | null> {
    const a = await this.http.request('GET', '/api/parlays/:parlayId/', { params: { parlayId }, headers: await this.auth() });
    return a.status === 404 ? null : expect<{ data: api.Parlay }>(a).data;
  }

  async vault(): Promise<api.Vault> {
    return expect<{ data: api.Vault }>(await this.http.request('GET', '/api/parlays/vault/')).data;
  }

  /** Superuser. */
  async patchVault(patch: VaultPatch): Promise<api.Vault> {
    return expect<{ data: api.Vault }>(await this.http.request('PATCH', '/api/parlays/vault/', { body: patch, headers: await this.auth() }))
      .data;
  }

  /** Superuser: re-reads the vault balance from the chain. */
  async syncVault(): Promise<api.Vault> {
    return expect<{ data: api.Vault }>(await this.http.request('POST', '/api/parlays/vault/sync/', { headers: await this.auth() })).data;
  }

  /** Superuser: every parlay, 20 per page. */
  async adminParlays(f: { status?: ParlayStatus; wallet?: string; page?: number } = {}): Promise<api.ParlayPage> {
    return expect(await this.http.request('GET', '/api/parlays/admin/', { query: f, headers: await this.auth() }));
  }

  /** Superuser: voids an active parlay on chain. */
  async voidParlay(parlayId: number | string): Promise<{ parlay_id: number; tx_signature: string }> {
    return expect<{ data: { parlay_id: number; tx_signature: string } }>(
      await this.http.request('POST', '/api/parlays/admin/:parlayId/void/', {
        params: { parlayId },
        headers: await this.auth(),
        retry: false,
      }),
      [202],
    ).data;
  }

  /**
   * Delivers raw transactions as the webhook provider does. A 503 (`deferred`) is answered as is,
   * not retried here: the provider's retry policy decides.
   */
  async deliverWebhook(txs: unknown[] | unknown, secret: string): Promise<{ status: number; body: any }> {
    const a = await this.http.request('POST', '/api/parlays/webhooks/indexer/', {
      body: txs,
      headers: { authorization: secret },
      retry: false,
    });
    return { status: a.status, body: a.body };
  }

  // ---- market catalog -----------------------------------------------------------------------

  async markets(status?: 'open' | 'closed' | 'resolved'): Promise<api.Market[]> {
    return expect<{ data: api.Market[] }>(await this.http.request('GET', '/api/markets/', { query: { status } })).data;
  }

  /** Superuser. */
  async adminMarkets(): Promise<api.Market[]> {
    return expect<{ data: api.Market[] }>(await this.http.request('GET', '/api/markets/admin/markets/', { headers: await this.auth() }))
      .data;
  }

  /** Superuser. */
  async createMarket(m: MarketCreate): Promise<api.Market> {
    return expect<{ data: api.Market }>(
      await this.http.request('POST', '/api/markets/admin/markets/', { body: m, headers: await this.auth() }),
      [201],
    ).data;
  }

  /** Superuser; null when missing. */
  async adminMarket(conditionId: string): Promise<api.Market | null> {
    const a = await this.http.request('GET', '/api/markets/admin/markets/:conditionId/', {
      params: { conditionId },
      headers: await this.auth(),
    });
    return a.status === 404 ? null : expect<{ data: api.Market }>(a).data;
  }

  /** Superuser. */
  async patchMarket(conditionId: string, patch: MarketPatch): Promise<api.Market> {
    return expect<{ data: api.Market }>(
      await this.http.request('PATCH', '/api/markets/admin/markets/:conditionId/', {
        params: { conditionId },
        body: patch,
        headers: await this.auth(),
      }),
    ).data;
  }

  // ---- parlay templates and suggestions -----------------------------------------------------

  /** The suggested parlays; with the ETag of an earlier answer, `notModified` when unchanged (304). */
  async suggestions(etag?: string): Promise<{ notModified: boolean; etag: string | null; data: Suggestion[] }> {
    const a = await this.http.request('GET', '/api/markets/parlay-suggestions/', { headers: etag ? { 'if-none-match': etag } : {} });
    if (a.status === 304) return { notModified: true, etag: a.headers.get('etag'), data: [] };
    return { notModified: false, etag: a.headers.get('etag'), data: expect<{ data: Suggestion[] }>(a).data };
  }

  /** Prices a template or legs for a stake as create_parlay would now (demo legs refused). */
  async quote(q: QuoteRequest): Promise<Quote> {
    return expect<{ data: Quote }>(
      await this.http.request('POST', '/api/markets/parlay-quote/', { body: { ...q, stake: q.stake.toString() } }),
    ).data;
  }

  /** Superuser. */
  async templates(): Promise<Template[]> {
    return expect<{ data: Template[] }>(
      await this.http.request('GET', '/api/markets/admin/parlay-templates/', { headers: await this.auth() }),
    ).data;
  }

  /** Superuser. */
  async createTemplate(t: TemplateCreate): Promise<Template> {
    return expect<{ data: Template }>(
      await this.http.request('POST', '/api/markets/admin/parlay-templates/', { body: t, headers: await this.auth(), retry: false }),
      [201],
    ).data;
  }

  /** Superuser; null when missing. */
  async template(pk: number | string): Promise<Template | null> {
    const a = await this.http.request('GET', '/api/markets/admin/parlay-templates/:pk/', { params: { pk }, headers: await this.auth() });
    return a.status === 404 ? null : expect<{ data: Template }>(a).data;
  }

  /** Superuser. */
  async patchTemplate(pk: number | string, patch: TemplatePatch): Promise<Template> {
    return expect<{ data: Template }>(
      await this.http.request('PATCH', '/api/markets/admin/parlay-templates/:pk/', {
        params: { pk },
        body: patch,
        headers: await this.auth(),
      }),
    ).data;
  }

  /** Superuser; false when it did not exist. */
  async deleteTemplate(pk: number | string): Promise<boolean> {
    const a = await this.http.request('DELETE', '/api/markets/admin/parlay-templates/:pk/', { params: { pk }, headers: await this.auth() });
    if (a.status === 404) return false;
    expect(a, [204]);
    return true;
  }

  /** Superuser: re-prices one template from the order book. */
  async refreshTemplate(pk: number | string): Promise<Template> {
    return expect<{ data: Template }>(
      await this.http.request('POST', '/api/markets/admin/parlay-templates/:pk/refresh/', { params: { pk }, headers: await this.auth() }),
    ).data;
  }

  /** Superuser: re-prices every template. */
  async refreshAllTemplates(): Promise<z.output<typeof tpl.refreshAllResponse>> {
    return expect(await this.http.request('POST', '/api/markets/admin/parlay-templates/refresh-all/', { headers: await this.auth() }));
  }
}
