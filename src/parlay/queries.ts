// Reads of the parlay side, straight from the read models, shaped as the API answers them.
import type { Reader } from '../store/reader.ts';

import type { Db } from '../db.ts';

const ts = (col: string) =>
  `case when ${col} is null then null else to_char(${col} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') end`;

export const PARLAY_JSON = `json_build_object(
  'id', p.id, 'parlay_id', p.parlay_id, 'user_wallet', p.user_wallet, 'stake', p.stake,
  'combined_probability', (p.combined_probability::numeric / 1000000000000)::numeric(30,12)::text,
  'potential_payout', p.potential_payout, 'actual_payout', p.actual_payout, 'status', p.status,
  'legs_total', p.legs_total, 'legs_won', p.legs_won, 'legs_lost', p.legs_lost, 'legs_resolved', p.legs_resolved,
  'tx_signature', p.tx_signature, 'claim_tx_signature', p.claim_tx_signature,
  'created_at', ${ts('p.created_at')}, 'settled_at', ${ts('p.settled_at')}, 'claimed_at', ${ts('p.claimed_at')},
  'legs', coalesce((select json_agg(json_build_object(
      'leg_index', l.leg_index, 'on_chain_market_id', l.on_chain_market_id, 'market_address', l.market_address,
      'selected_outcome', l.selected_outcome,
      'probability_at_entry', (l.probability_at_entry::numeric / 1000000)::numeric(12,6)::text,
      'status', l.status, 'resolved_at', ${ts('l.resolved_at')},
      'question', coalesce((select m.question from markets m where m.on_chain_market_id = l.on_chain_market_id), '')
    ) order by l.leg_index) from parlay_legs l where l.parlay_id = p.parlay_id), '[]'::json)
)`;

export const VAULT_JSON = `json_build_object(
  'vault_address', v.vault_address, 'balance', v.balance, 'total_staked', v.total_staked, 'total_paid_out', v.total_paid_out,
  'total_exposure', v.total_exposure, 'max_payout_cap', v.max_payout_cap, 'max_legs', v.max_legs, 'min_stake', v.min_stake,
  'max_stake', v.max_stake, 'is_active', v.is_active, 'updated_at', ${ts('v.updated_at')}
)`;

const parseJson = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

export const PARLAY_STATUSES = ['active', 'won', 'lost', 'claimed', 'voided', 'refunded'] as const;

const USER_PARLAYS = (
  where: string,
) => `select coalesce(json_agg(x.j order by x.created_at desc, x.parlay_id desc), '[]'::json)::text as j from (
       select ${PARLAY_JSON} as j, p.created_at, p.parlay_id from parlays p where ${where}
       order by p.created_at desc, p.parlay_id desc limit 50) x`;
const USER_PARLAYS_ANY = USER_PARLAYS('lower(p.user_wallet) = any($1::text[])');
const USER_PARLAYS_BY_STATUS = USER_PARLAYS('lower(p.user_wallet) = any($1::text[]) and p.status = $2');

/** The user's parlays as a JSON array text, built by PostgreSQL (no parse and re-serialise here). */
export async function userParlaysJson(reader: Reader, wallets: string[], status?: string): Promise<string> {
  if (!wallets.length) return '[]';
  const lower = wallets.map((w) => w.toLowerCase());
  const rows = status
    ? await reader.query('parlays-of-wallets-by-status', USER_PARLAYS_BY_STATUS, [lower, status])
    : await reader.query('parlays-of-wallets', USER_PARLAYS_ANY, [lower]);
  return rows[0].j;
}

const USER_PARLAY = `select ${PARLAY_JSON}::text as j from parlays p where p.parlay_id = $1 and lower(p.user_wallet) = any($2::text[])`;

/** One parlay of the user's wallets as JSON text, or null. */
export async function userParlayJson(reader: Reader, wallets: string[], parlayId: string): Promise<string | null> {
  if (!wallets.length) return null;
  const rows = await reader.query('parlay-of-wallets', USER_PARLAY, [parlayId, wallets.map((w) => w.toLowerCase())]);
  return rows.length ? rows[0].j : null;
}

export async function adminParlays(db: Db, f: { status?: string; wallet?: string; page: number }, pageSize = 20) {
  const conds: string[] = [];
  const params: unknown[] = [];
  if (f.status) {
    conds.push('p.status = ?');
    params.push(f.status);
  }
  if (f.wallet) {
    conds.push('lower(p.user_wallet) = ?');
    params.push(f.wallet.toLowerCase());
  }
  const where = conds.length ? `where ${conds.join(' and ')}` : '';
  const [{ n }] = await db.execute(`select count(*)::int as n from parlays p ${where}`, params);
  const rows = await db.execute(
    `select ${PARLAY_JSON} as j from parlays p ${where} order by p.created_at desc, p.parlay_id desc limit ? offset ?`,
    [...params, pageSize, (f.page - 1) * pageSize],
  );
  return { count: Number(n), results: rows.map((r) => parseJson(r.j)) };
}

export async function parlayStatus(db: Db, parlayId: string): Promise<{ status: string; user_wallet: string } | null> {
  const rows = await db.execute('select status, user_wallet from parlays where parlay_id = ?', [parlayId]);
  return rows[0] ?? null;
}

export const EMPTY_VAULT = {
  vault_address: '',
  balance: 0,
  total_staked: 0,
  total_paid_out: 0,
  total_exposure: 0,
  max_payout_cap: 0,
  max_legs: 0,
  min_stake: 0,
  max_stake: 0,
  is_active: true,
};

/** When the mirror was created: its database's first migration (kept by replays, which empty the vault row). */
const MIRROR_CREATED = `select ${ts('min(executed_at)')} as at from mikro_orm_migrations`;

/**
 * The vault mirror. Before its first event (no row yet) every value is at its initial state, and
 * `updated_at` (SPEC 2.3: a timestamp, never null) is the time the mirror was created.
 */
export async function vault(db: Db): Promise<unknown> {
  const rows = await db.execute(`select ${VAULT_JSON} as j from vault v where v.id = 1`);
  if (rows.length) return parseJson(rows[0].j);
  const [created] = await db.execute(MIRROR_CREATED);
  return { ...EMPTY_VAULT, updated_at: created?.at ?? new Date(0).toISOString() };
}

export async function programConfig(db: Db): Promise<{ collateral_mint: string; vault: string; authority: string } | null> {
  const rows = await db.execute('select collateral_mint, vault, authority from program_config where id = 1');
  return rows[0] ?? null;
}

/** The latest wallet the user linked, as remembered from the JWT claims. */
export async function linkedWallet(db: Db, userId: string): Promise<string | null> {
  const rows = await db.execute('select wallet from users where id = ?', [userId]);
  return rows[0]?.wallet ?? null;
}

export async function rememberWallet(db: Db, userId: string, wallet: string | null, isSuperuser: boolean): Promise<void> {
  await db.execute(
    `insert into users (id, wallet, is_superuser, updated_at) values (?, ?, ?, now())
     on conflict (id) do update set wallet = coalesce(excluded.wallet, users.wallet), is_superuser = excluded.is_superuser, updated_at = now()`,
    [userId, wallet, isSuperuser],
  );
}
