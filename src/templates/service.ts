// Parlay templates (SPEC 2.4, 4.1; issue 7): curated combos for display, priced from the order book
// at refresh, and the public suggestions read model (one row of ready JSON with its ETag).
import { createHash } from 'node:crypto';
import { conflict, invalid, notFound, unavailable } from '../errors.ts';
import {
  combinedProbability,
  fixed,
  legProbability,
  payoutFor,
  PROBABILITY_ONE,
  type BookQuote,
  type Outcome,
  type ProbabilitySource,
} from './pricing.ts';
import type { QuoteRequest, TemplateCreate, TemplateLegInput, TemplatePatch } from './schemas.ts';

import type { Db } from '../db.ts';
type Tx = <T>(fn: (db: Db) => Promise<T>) => Promise<T>;

export interface TemplateServiceDeps {
  db: () => Db;
  /** Runs fn in one database transaction. */
  transaction: Tx;
  /** The book's quote of a market (ReadQuote): best bid/ask of both outcomes and the last trade. */
  quote: (conditionId: string) => Promise<BookQuote | null>;
  mintMerge: boolean;
  /** How long a node serves its in-memory copy of the suggestions before re-reading the row (ms). */
  cacheMs?: number;
  now?: () => number;
}

/** The mirrored program config, as far as templates need it. */
interface ProgramLimits {
  max_legs: number;
  house_edge_bps: number;
  min_stake: bigint;
  max_stake: bigint;
  max_payout_cap: bigint;
  paused: boolean;
}

interface LegRow {
  template_id: string;
  leg_index: number;
  condition_id: string | null;
  demo_market_id: string | null;
  demo_question: string | null;
  selected_outcome: Outcome;
  probability: number | null;
  probability_source: ProbabilitySource | null;
  question: string | null;
  on_chain_market_id: string | null;
  market_address: string | null;
  status: 'open' | 'closed' | 'resolved' | null;
  start_ms: string | null;
  yes_token_id: string | null;
  no_token_id: string | null;
  reference_price: string | null;
  in_catalog: boolean;
}

interface TemplateRow {
  id: string;
  name: string;
  description: string;
  display_order: number;
  is_active: boolean;
  combined_probability: string | null;
  payout_per_unit: string | null;
  house_edge_bps: number | null;
  stale: boolean;
  stale_reason: string | null;
  refreshed_at: string | null;
  created_at: string;
  updated_at: string;
}

const ts = (col: string) =>
  `case when ${col} is null then null else to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end`;
const TEMPLATE_COLS = `t.id::text as id, t.name, t.description, t.display_order, t.is_active, t.combined_probability::text as combined_probability,
  t.payout_per_unit::text as payout_per_unit, t.house_edge_bps, t.stale, t.stale_reason, ${ts('t.refreshed_at')} as refreshed_at,
  ${ts('t.created_at')} as created_at, ${ts('t.updated_at')} as updated_at`;
const MARKET_COLS = `m.question, m.on_chain_market_id::text as on_chain_market_id, m.market_address, m.status,
  (extract(epoch from m.start_time) * 1000)::bigint::text as start_ms, m.yes_token_id, m.no_token_id,
  m.reference_price::text as reference_price, m.condition_id is not null as in_catalog`;
const LEG_SELECT = `select l.template_id::text as template_id, l.leg_index, l.condition_id, l.demo_market_id::text as demo_market_id, l.demo_question,
  l.selected_outcome, l.probability, l.probability_source, ${MARKET_COLS}
  from parlay_template_legs l left join markets m on m.condition_id = l.condition_id`;

/** Why a catalog market cannot take part in a parlay now (null when it can). */
function marketProblem(l: LegRow, now: number): string | null {
  if (l.condition_id === null) return null;
  if (!l.in_catalog) return `market ${l.condition_id} is not in the catalog`;
  if (l.status !== 'open') return `market ${l.condition_id} is ${l.status}`;
  if (l.start_ms !== null && Number(l.start_ms) <= now) return `market ${l.condition_id} has started`;
  return null;
}

/** Demo legs are display-only: anything that would submit one rejects it (SPEC 2.4). */
export function assertSubmittable(legs: { demo: boolean; market_id: number | null; leg_index?: number }[]): void {
  const demo = legs.findIndex((l) => l.demo || (l.market_id !== null && l.market_id < 0));
  if (demo >= 0) {
    throw invalid(
      'demo_leg',
      `leg ${demo} is a demo leg (market ${legs[demo].market_id}): demo legs are for display only and cannot be submitted`,
    );
  }
}

export class TemplateService {
  private cache: { etag: string; body: string; validUntil: number | null; at: number } | null = null;
  private loading: Promise<{ etag: string; body: string }> | null = null;
  private readonly now: () => number;

  constructor(private d: TemplateServiceDeps) {
    this.now = d.now ?? Date.now;
  }

  // ---- reads ----

  private async limits(db: Db): Promise<ProgramLimits | null> {
    const rows = await db.execute(
      'select max_legs, house_edge_bps, min_stake::text as min_stake, max_stake::text as max_stake, max_payout_cap::text as max_payout_cap, paused from program_config where id = 1',
    );
    const r = rows[0];
    return r
      ? {
          max_legs: r.max_legs,
          house_edge_bps: r.house_edge_bps,
          min_stake: BigInt(r.min_stake),
          max_stake: BigInt(r.max_stake),
          max_payout_cap: BigInt(r.max_payout_cap),
          paused: r.paused,
        }
      : null;
  }

  private async rows(db: Db, where: string, params: unknown[]): Promise<{ t: TemplateRow; legs: LegRow[] }[]> {
    const ts: TemplateRow[] = await db.execute(
      `select ${TEMPLATE_COLS} from parlay_templates t ${where} order by t.display_order, t.id`,
      params,
    );
    if (!ts.length) return [];
    const legs: LegRow[] = await db.execute(`${LEG_SELECT} where l.template_id in (?) order by l.template_id, l.leg_index`, [
      ts.map((t) => t.id),
    ]);
    const by = new Map<string, LegRow[]>();
    for (const l of legs) by.set(l.template_id, [...(by.get(l.template_id) ?? []), l]);
    return ts.map((t) => ({ t, legs: by.get(t.id) ?? [] }));
  }

  private json({ t, legs }: { t: TemplateRow; legs: LegRow[] }) {
    const outLegs = legs.map((l) => ({
      leg_index: l.leg_index,
      demo: l.condition_id === null,
      condition_id: l.condition_id,
      market_id: l.condition_id === null ? Number(l.demo_market_id) : l.on_chain_market_id === null ? null : Number(l.on_chain_market_id),
      market_address: l.condition_id === null ? null : l.market_address,
      question: (l.condition_id === null ? l.demo_question : l.question) ?? '',
      selected_outcome: l.selected_outcome,
      probability: l.probability === null ? null : fixed(l.probability, 6),
      probability_source: l.probability_source,
      market_status: l.condition_id === null ? null : l.status,
      start_time: l.start_ms === null ? null : new Date(Number(l.start_ms)).toISOString(),
    }));
    return {
      id: Number(t.id),
      name: t.name,
      description: t.description,
      display_order: t.display_order,
      is_active: t.is_active,
      legs: outLegs,
      combined_probability: t.combined_probability === null ? null : fixed(BigInt(t.combined_probability), 12),
      payout_per_unit: t.payout_per_unit === null ? null : fixed(BigInt(t.payout_per_unit), 6),
      house_edge_bps: t.house_edge_bps,
      submittable: outLegs.every((l) => !l.demo && l.market_id !== null && l.market_address !== null),
      stale: t.stale,
      stale_reason: t.stale_reason,
      refreshed_at: t.refreshed_at,
      created_at: t.created_at,
      updated_at: t.updated_at,
    };
  }

  async list() {
    return (await this.rows(this.d.db(), '', [])).map((r) => this.json(r));
  }

  async get(id: string) {
    const [r] = await this.rows(this.d.db(), 'where t.id = ?', [id]);
    return r ? this.json(r) : null;
  }

  // ---- writes ----

  /** Leg rules the mirror can check: catalog markets exist, at most the config's max_legs. */
  private async checkLegs(db: Db, legs: TemplateLegInput[]): Promise<void> {
    const ids = legs.flatMap((l) => ('demo' in l ? [] : [l.condition_id]));
    if (ids.length) {
      const rows: { condition_id: string; market_address: string | null }[] = await db.execute(
        'select condition_id, market_address from markets where condition_id in (?)',
        [ids],
      );
      const found = new Set(rows.map((r) => r.condition_id));
      const missing = ids.filter((id) => !found.has(id));
      if (missing.length) throw invalid('unknown_market', `not in the market catalog: ${missing.join(', ')}`);
      // The program also refuses one market account twice (two catalog entries of the same address).
      const seen = new Map<string, string>();
      for (const r of rows) {
        if (r.market_address === null) continue;
        const other = seen.get(r.market_address);
        if (other) throw invalid('duplicate_market', `markets ${other} and ${r.condition_id} share the market address ${r.market_address}`);
        seen.set(r.market_address, r.condition_id);
      }
    }
    const cfg = await this.limits(db);
    if (cfg && legs.length > cfg.max_legs)
      throw invalid('too_many_legs', `${legs.length} legs exceed the program's max_legs ${cfg.max_legs}`);
  }

  private async writeLegs(db: Db, id: string, legs: TemplateLegInput[]): Promise<void> {
    await db.execute('delete from parlay_template_legs where template_id = ?', [id]);
    for (const [i, l] of legs.entries()) {
      if ('demo' in l) {
        await db.execute(
          `insert into parlay_template_legs (template_id, leg_index, condition_id, demo_market_id, demo_question, selected_outcome, probability, probability_source)
           values (?, ?, null, ?, ?, ?, ?, 'demo')`,
          [id, i, l.market_id, l.question, l.selected_outcome, l.probability],
        );
      } else {
        await db.execute(
          `insert into parlay_template_legs (template_id, leg_index, condition_id, demo_market_id, demo_question, selected_outcome, probability, probability_source)
           values (?, ?, ?, null, null, ?, null, null)`,
          [id, i, l.condition_id, l.selected_outcome],
        );
      }
    }
  }

  async create(body: TemplateCreate) {
    await this.checkLegs(this.d.db(), body.legs);
    const id = await this.d.transaction(async (db) => {
      const [row] = await db.execute(
        `insert into parlay_templates (name, description, display_order, is_active, stale, created_at, updated_at)
         values (?, ?, ?, ?, false, now(), now()) returning id::text as id`,
        [body.name, body.description, body.display_order, body.is_active],
      );
      await this.writeLegs(db, row.id, body.legs);
      return row.id as string;
    });
    // Priced at once so that a new template can be suggested without a separate refresh.
    return this.refresh(id);
  }

  async patch(id: string, body: TemplatePatch) {
    if (body.legs) await this.checkLegs(this.d.db(), body.legs);
    const found = await this.d.transaction(async (db) => {
      const sets: string[] = [];
      const params: unknown[] = [];
      for (const k of ['name', 'description', 'display_order', 'is_active'] as const) {
        if (body[k] === undefined) continue;
        sets.push(`${k} = ?`);
        params.push(body[k]);
      }
      if (body.legs) sets.push('combined_probability = null', 'payout_per_unit = null', 'refreshed_at = null');
      const rows = await db.execute(`update parlay_templates set ${[...sets, 'updated_at = now()'].join(', ')} where id = ? returning id`, [
        ...params,
        id,
      ]);
      if (!rows.length) return false;
      if (body.legs) await this.writeLegs(db, id, body.legs);
      return true;
    });
    if (!found) return null;
    if (body.legs) return this.refresh(id); // new legs, new figures
    await this.changed();
    return this.get(id);
  }

  async delete(id: string): Promise<boolean> {
    const gone = await this.d.transaction(async (db) => {
      await db.execute('delete from parlay_template_legs where template_id = ?', [id]);
      return (await db.execute('delete from parlay_templates where id = ? returning id', [id])).length > 0;
    });
    if (gone) await this.changed();
    return gone;
  }

  // ---- refresh ----

  private async priceLegs(legs: LegRow[], now: number, quotes: Map<string, Promise<BookQuote | null>>) {
    const problems: string[] = [];
    const priced = await Promise.all(
      legs.map(async (l) => {
        if (l.condition_id === null) return { probability: l.probability, source: 'demo' as ProbabilitySource };
        const problem = marketProblem(l, now);
        if (problem) problems.push(problem);
        if (!l.in_catalog) return null;
        let q = quotes.get(l.condition_id);
        if (!q) {
          q = this.d.quote(l.condition_id);
          quotes.set(l.condition_id, q);
        }
        const p = legProbability(
          await q,
          {
            yes_token_id: l.yes_token_id!,
            no_token_id: l.no_token_id!,
            reference_price: l.reference_price === null ? null : Number(l.reference_price),
          },
          l.selected_outcome,
          this.d.mintMerge,
        );
        if (!p) problems.push(`market ${l.condition_id} has no price (no two-sided book, trade or reference price)`);
        else if (p.probability <= 0 || BigInt(p.probability) >= PROBABILITY_ONE)
          problems.push(`market ${l.condition_id} is priced at ${fixed(p.probability, 6)}, not strictly between 0 and 1`);
        return p;
      }),
    );
    return { priced, problems };
  }

  /**
   * Prices one template from the books now; marks it stale when a leg cannot be part of a parlay.
   * The books are asked outside any transaction (an actor commits before it answers; on PGlite the
   * one connection must be free); the write then checks, under the row lock, that the template was
   * not edited meanwhile, and prices it again if it was.
   */
  async refresh(id: string, quotes = new Map<string, Promise<BookQuote | null>>(), rebuild = true) {
    let done = false;
    for (let attempt = 0; ; attempt++) {
      const db = this.d.db();
      const [row] = await db.execute('select updated_at::text as version from parlay_templates where id = ?', [id]);
      if (!row) return null;
      const legs: LegRow[] = await db.execute(`${LEG_SELECT} where l.template_id = ? order by l.leg_index`, [id]);
      const cfg = await this.limits(db);
      const now = this.now();
      const { priced, problems } = await this.priceLegs(legs, now, quotes);
      if (!cfg) problems.unshift('the program config is not mirrored yet (no max_legs, no house edge)');
      else if (legs.length > cfg.max_legs) problems.unshift(`${legs.length} legs exceed the program's max_legs ${cfg.max_legs}`);
      const probs = priced.map((p) => p?.probability ?? null);
      const complete = probs.every((p): p is number => p !== null && p > 0 && BigInt(p) < PROBABILITY_ONE);
      const combined = complete ? combinedProbability(probs as number[]) : null;
      const payout = combined !== null && cfg ? payoutFor(PROBABILITY_ONE, combined, cfg.house_edge_bps) : null;
      const outcome = await this.d.transaction(async (tx) => {
        const [cur] = await tx.execute('select updated_at::text as version from parlay_templates where id = ? for update', [id]);
        if (!cur) return 'gone' as const;
        if (cur.version !== row.version) return 'edited' as const;
        for (const [i, p] of priced.entries()) {
          if (legs[i].condition_id === null) continue;
          await tx.execute(
            'update parlay_template_legs set probability = ?, probability_source = ? where template_id = ? and leg_index = ?',
            [p?.probability ?? null, p?.source ?? null, id, legs[i].leg_index],
          );
        }
        await tx.execute(
          `update parlay_templates set combined_probability = ?, payout_per_unit = ?, house_edge_bps = ?, stale = ?, stale_reason = ?, refreshed_at = ?
           where id = ?`,
          [
            combined?.toString() ?? null,
            payout?.toString() ?? null,
            cfg?.house_edge_bps ?? null,
            problems.length > 0,
            problems.length ? problems.join('; ') : null,
            new Date(now),
            id,
          ],
        );
        return 'done' as const;
      });
      if (outcome === 'gone') return null;
      if (outcome === 'done') {
        done = true;
        break;
      }
      if (attempt >= 4) throw conflict('conflict', 'the template kept changing during the refresh; try again');
      quotes.clear(); // edited meanwhile: new legs, fresh prices
    }
    if (done && rebuild) await this.changed();
    return this.get(id);
  }

  async refreshAll() {
    const ids: string[] = (await this.d.db().execute('select t.id::text as id from parlay_templates t order by t.display_order, t.id')).map(
      (r: any) => r.id,
    );
    const quotes = new Map<string, Promise<BookQuote | null>>(); // one quote per market for the whole run
    for (const id of ids) await this.refresh(id, quotes, false);
    await this.changed();
    const data = await this.list();
    return { refreshed: data.length, stale: data.filter((t) => t.stale).length, data };
  }

  // ---- suggestions (public read model) ----

  /** A write happened here: rebuild the read model now and drop this node's copy. */
  async changed(): Promise<void> {
    this.cache = null;
    await this.rebuild();
  }

  /** A catalog market changed (status, start time, …): templates using it may have gone stale. */
  async marketChanged(conditionId: string): Promise<void> {
    const used = await this.d
      .db()
      .execute('select 1 from parlay_template_legs where condition_id = ? limit 1', [conditionId.toLowerCase()]);
    if (used.length) await this.changed();
  }

  /**
   * Rebuilds the one-row read model: first marks stale the templates whose markets have started,
   * closed or resolved since their refresh, then stores the active fresh ones in display order as
   * ready JSON, its ETag and the next start time of a suggested market (when it must be rebuilt).
   */
  async rebuild(): Promise<{ etag: string; body: string; validUntil: number | null }> {
    return this.d.transaction(async (db) => {
      await db.execute('select id from parlay_suggestions where id = 1 for update'); // one rebuild at a time
      const now = new Date(this.now());
      await db.execute(
        `update parlay_templates t set stale = true, stale_reason = x.reason
         from (select distinct on (l.template_id) l.template_id, 'market ' || l.condition_id || ' ' ||
                 case when m.condition_id is null then 'is not in the catalog' when m.status <> 'open' then 'is ' || m.status else 'has started' end as reason
               from parlay_template_legs l left join markets m on m.condition_id = l.condition_id
               where l.condition_id is not null and (m.condition_id is null or m.status <> 'open' or m.start_time <= ?)
               order by l.template_id, l.leg_index) x
         where t.id = x.template_id and not t.stale`,
        [now],
      );
      const rows = await this.rows(
        db,
        'where t.is_active and not t.stale and t.refreshed_at is not null and t.combined_probability is not null',
        [],
      );
      const data = rows.map((r) => {
        const j = this.json(r);
        return {
          id: j.id,
          name: j.name,
          description: j.description,
          display_order: j.display_order,
          combined_probability: j.combined_probability,
          payout_per_unit: j.payout_per_unit,
          house_edge_bps: j.house_edge_bps,
          submittable: j.submittable,
          refreshed_at: j.refreshed_at,
          legs: j.legs.map((l) => ({
            demo: l.demo,
            condition_id: l.condition_id,
            market_id: l.market_id,
            market_address: l.market_address,
            question: l.question,
            selected_outcome: l.selected_outcome,
            probability: l.probability,
          })),
        };
      });
      const starts = rows.flatMap((r) => r.legs.flatMap((l) => (l.start_ms === null ? [] : [Number(l.start_ms)])));
      const validUntil = starts.length ? Math.min(...starts) : null;
      const body = JSON.stringify({ data });
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 32)}"`;
      await db.execute('update parlay_suggestions set payload = ?, etag = ?, valid_until = ?, built_at = ? where id = 1', [
        body,
        etag,
        validUntil === null ? null : new Date(validUntil),
        now,
      ]);
      return { etag, body, validUntil };
    });
  }

  /** The suggestions JSON and its ETag: this node's copy, re-read from the row at most every cacheMs. */
  async suggestions(): Promise<{ etag: string; body: string }> {
    const now = this.now();
    const c = this.cache;
    if (c && now - c.at < (this.d.cacheMs ?? 1000) && (c.validUntil === null || now < c.validUntil)) return c;
    this.loading ??= (async () => {
      try {
        const [row] = await this.d
          .db()
          .execute(
            'select payload, etag, (extract(epoch from valid_until) * 1000)::bigint::text as valid_until from parlay_suggestions where id = 1',
          );
        let doc =
          row && row.etag
            ? {
                etag: row.etag as string,
                body: row.payload as string,
                validUntil: row.valid_until === null ? null : Number(row.valid_until),
              }
            : null;
        if (!doc || (doc.validUntil !== null && doc.validUntil <= this.now())) doc = await this.rebuild();
        this.cache = { ...doc, at: this.now() };
        return doc;
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  // ---- quote (what a create-parlay helper would submit) ----

  /**
   * Prices legs (a template's or given ones) for a stake as create_parlay would now, refusing what
   * the program would refuse, and refusing demo legs, which are never submittable.
   */
  async quote(req: QuoteRequest) {
    const db = this.d.db();
    let legs: { demo: boolean; market_id: number | null; condition_id: string | null; selected_outcome: Outcome }[];
    if (req.template_id !== undefined) {
      const t = await this.get(String(req.template_id));
      if (!t) throw notFound('template not found');
      legs = t.legs;
    } else {
      legs = req.legs!.map((l) =>
        'demo' in l
          ? { demo: true, market_id: l.market_id, condition_id: null, selected_outcome: l.selected_outcome }
          : { demo: false, market_id: null, condition_id: l.condition_id, selected_outcome: l.selected_outcome },
      );
    }
    assertSubmittable(legs);
    const ids = legs.map((l) => l.condition_id!);
    if (new Set(ids).size !== ids.length) throw invalid('duplicate_market', 'the same market appears twice');
    const cfg = await this.limits(db);
    if (!cfg) throw unavailable('config_unknown', 'the program config is not mirrored yet');
    if (cfg.paused) throw invalid('vault_paused', 'the program is paused');
    if (legs.length > cfg.max_legs) throw invalid('too_many_legs', `${legs.length} legs exceed the program's max_legs ${cfg.max_legs}`);
    const rows: LegRow[] = await db.execute(
      `select q.condition_id, ${MARKET_COLS} from unnest(?::text[]) as q(condition_id) left join markets m on m.condition_id = q.condition_id`,
      [`{${ids.join(',')}}`],
    );
    const byId = new Map(rows.map((r) => [r.condition_id, r]));
    const now = this.now();
    const full: LegRow[] = legs.map((l, i) => {
      const r = byId.get(l.condition_id!);
      if (!r || !r.in_catalog) throw invalid('unknown_market', `leg ${i}: market ${l.condition_id} is not in the catalog`);
      const problem = marketProblem({ ...r, condition_id: l.condition_id }, now);
      if (problem) throw invalid('market_unavailable', `leg ${i}: ${problem}`);
      if (r.on_chain_market_id === null || r.market_address === null)
        throw invalid('not_on_chain', `leg ${i}: market ${l.condition_id} has no on-chain market id or address`);
      return { ...r, condition_id: l.condition_id, selected_outcome: l.selected_outcome, leg_index: i } as LegRow;
    });
    if (new Set(full.map((l) => l.market_address)).size !== full.length)
      throw invalid('duplicate_market', 'two legs are the same market account');
    const { priced, problems } = await this.priceLegs(full, now, new Map());
    if (problems.length) throw invalid('no_price', problems.join('; '));
    const probs = priced.map((p) => p!.probability!);
    const combined = combinedProbability(probs);
    if (req.stake < cfg.min_stake || req.stake > cfg.max_stake) {
      throw invalid('stake_out_of_range', `stake must be between ${cfg.min_stake} and ${cfg.max_stake} micro-units`);
    }
    const payout = payoutFor(req.stake, combined, cfg.house_edge_bps);
    if (payout === null || payout > cfg.max_payout_cap)
      throw invalid('payout_cap_exceeded', `the payout would exceed the cap of ${cfg.max_payout_cap} micro-units`);
    return {
      legs: full.map((l, i) => ({
        market_id: Number(l.on_chain_market_id),
        market_address: l.market_address!,
        condition_id: l.condition_id!,
        selected_outcome: l.selected_outcome,
        probability: fixed(probs[i], 6),
        probability_source: priced[i]!.source,
      })),
      stake: Number(req.stake),
      combined_probability: fixed(combined, 12),
      potential_payout: Number(payout),
      house_edge_bps: cfg.house_edge_bps,
    };
  }
}
