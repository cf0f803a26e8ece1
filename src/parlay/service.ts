// The parlay side's use cases, between the front door and the runtime / read models / chain.
import { AskTimeout, channel, type Asker } from '../runtime/asker.ts';
import type { RuntimeStore } from '../runtime/store-port.ts';
import { conflict, invalid, notFound, unavailable, upstream } from '../errors.ts';
import { zodMessage } from '../zod-message.ts';
import type { PlatformUser } from '../platform-user.ts';
import { VAULT_KEY } from '../../topics/names.ts';
import type { ParlayEventsProtocol, VaultPatchFields } from '../../topics/parlay-events.ts';
import { applyDelivery, decodeDelivery, type DecodedDelivery, type IngestDeps, type IngestResult } from './ingest.ts';
import * as q from './queries.ts';
import type { Reader } from '../store/reader.ts';
import type { ParlayReadCache } from './read-cache.ts';
import { outOfBounds, rawTransaction, webhookBatch, type RawTransaction } from './webhook-schema.ts';
import { EventIdentities } from './event-identity.ts';
import { ChainError, MissingAuthority, type ChainGateway } from '../chain/gateway.ts';

const PARLAY_NOT_ACTIVE = 6009;
const NONE = Buffer.alloc(0);

import type { Db } from '../db.ts';

export interface ParlayServiceDeps {
  db: () => Db;
  /** Prepared statements for the routes users poll. */
  reader: Reader;
  /** The in-memory answers of those routes, and how to wait for the change notifications of what was just committed. */
  reads?: { cache: ParlayReadCache<Buffer>; settled(): Promise<void> };
  asker: Asker;
  store: RuntimeStore;
  topic: string;
  programId: string;
  /** See IngestDeps.packCreations. */
  packCreations?: boolean;
  chain: ChainGateway | null;
  log: IngestDeps['log'] & { error(o: object, m?: string): void };
  metrics?: IngestDeps['metrics'];
}

export class ParlayService {
  private wallets = new Map<string, string | null>();
  private identities: EventIdentities;

  constructor(private d: ParlayServiceDeps) {
    this.identities = new EventIdentities(d.db);
  }

  /** The chain gateway, when it comes up after the front door (the development local chain). */
  setChain(chain: ChainGateway): void {
    this.d.chain = chain;
  }

  private ingestDeps(): IngestDeps {
    return {
      asker: this.d.asker,
      store: this.d.store,
      identities: this.identities,
      topic: this.d.topic,
      programId: this.d.programId,
      packCreations: this.d.packCreations,
      log: this.d.log,
      metrics: this.d.metrics,
    };
  }

  async ingest(txs: RawTransaction[]): Promise<IngestResult> {
    return this.apply(decodeDelivery(this.d, txs));
  }

  private async apply(decoded: DecodedDelivery): Promise<IngestResult> {
    try {
      return await applyDelivery(this.ingestDeps(), decoded);
    } catch (e) {
      if (e instanceof AskTimeout) throw unavailable('unavailable', 'the owner of an event did not answer in time; retry');
      throw e;
    } finally {
      // What was applied is committed: answer once this node's cached reads no longer show the old
      // state; a cache with nothing in it and nothing loading cannot show it (a node that takes
      // webhooks and serves no reads never waits: ~11 ms of a delivery's ~150 in bench/ingest-ratio.ts).
      if (this.d.reads && !this.d.reads.cache.quiet) {
        const syncing = performance.now();
        await this.d.reads.settled();
        this.d.metrics?.phase?.('sync', (performance.now() - syncing) / 1000);
      }
    }
  }

  /**
   * One webhook delivery, as the route receives it (its secret already checked) and as the
   * development local chain hands it over in process: `{ processed, skipped }`, 400 for a malformed
   * body, 503 `deferred` when an event waits for a parlay not created yet (the sender retries).
   * Validated and decoded before anything waits: nothing of the body stays referenced while the
   * delivery's commits run (a large body kept alive is copied by every young-generation collection).
   */
  deliver(body: unknown): Promise<{ processed: number; skipped: number }> {
    // No closure of this function may name `body`: closures share their function's context, and the
    // one that waits for the commits would keep the parsed body alive (it did: every delivery in
    // flight held its 250 parsed transactions through the young generation's collections).
    let decoded: DecodedDelivery;
    const decoding = performance.now();
    try {
      decoded = decodeDelivery(this.d, this.validated(body));
    } catch (e) {
      return Promise.reject(e);
    }
    this.d.metrics?.phase?.('decode', (performance.now() - decoding) / 1000);
    return this.answer(decoded);
  }

  private async answer(decoded: DecodedDelivery): Promise<{ processed: number; skipped: number }> {
    const res = await this.apply(decoded);
    if (res.deferred > 0) {
      throw unavailable('deferred', `${res.deferred} transaction(s) reference parlays not created yet; retry later`, {
        processed: res.processed,
        skipped: res.skipped,
      });
    }
    return { processed: res.processed, skipped: res.skipped };
  }

  /** The body's transactions, bounded before any work (webhook-schema.ts): a signature that is not one, too many or too long log lines, a NUL in a line are a 400, never a row the database refuses or a partition stalled. */
  private validated(body: unknown): RawTransaction[] {
    const over = outOfBounds(body);
    if (over) throw invalid('malformed_body', `malformed webhook body: ${over}`);
    const parsed = (Array.isArray(body) ? webhookBatch : rawTransaction).safeParse(body);
    if (!parsed.success) {
      const issues = parsed.error.issues;
      const shown = zodMessage({ issues: issues.slice(0, 3) } as typeof parsed.error);
      throw invalid('malformed_body', `malformed webhook body: ${shown}${issues.length > 3 ? `; and ${issues.length - 3} more` : ''}`);
    }
    return Array.isArray(parsed.data) ? parsed.data : [parsed.data];
  }

  /** Remembers the wallet a user linked (from the JWT claims), once per change. */
  async rememberUser(u: PlatformUser): Promise<void> {
    if (!u.wallet) return;
    if (this.wallets.get(u.sub) === u.wallet) return;
    await q.rememberWallet(this.d.db(), u.sub, u.wallet, u.is_superuser);
    if (this.wallets.size > 100_000) this.wallets.clear();
    this.wallets.set(u.sub, u.wallet);
  }

  private async walletsOf(u: PlatformUser): Promise<string[]> {
    if (u.wallet) return [u.wallet];
    let w = this.wallets.get(u.sub);
    if (w === undefined) {
      w = await q.linkedWallet(this.d.db(), u.sub);
      if (w) this.wallets.set(u.sub, w);
    }
    return w ? [w] : [];
  }

  /** `{ data: [Parlay] }` as JSON bytes (kept as such in the read cache: no encoding per request). */
  async userParlaysBody(u: PlatformUser, status?: string): Promise<Buffer> {
    const wallets = await this.walletsOf(u);
    const list = async () => Buffer.from(`{"data":${await q.userParlaysJson(this.d.reader, wallets, status)}}`);
    const cache = this.d.reads?.cache;
    return cache && wallets.length === 1 ? cache.read(wallets[0], status ?? '', list) : list();
  }

  /** `{ data: Parlay }` as JSON bytes, or null when the user has no such parlay. */
  async userParlayBody(u: PlatformUser, parlayId: string): Promise<Buffer | null> {
    const wallets = await this.walletsOf(u);
    const one = async () => {
      const text = await q.userParlayJson(this.d.reader, wallets, parlayId);
      return text ? Buffer.from(`{"data":${text}}`) : NONE;
    };
    const cache = this.d.reads?.cache;
    const body = cache && wallets.length === 1 ? await cache.read(wallets[0], `#${parlayId}`, one) : await one();
    return body.length ? body : null;
  }

  adminParlays(f: { status?: string; wallet?: string; page: number }) {
    return q.adminParlays(this.d.db(), f);
  }

  vault() {
    return q.vault(this.d.db());
  }

  async patchVault(body: {
    vault_address?: string;
    max_legs?: number;
    max_payout_cap?: string;
    min_stake?: string;
    max_stake?: string;
    is_active?: boolean;
  }) {
    const current = (await q.vault(this.d.db())) as { min_stake: number | string; max_stake: number | string };
    const min = BigInt(body.min_stake ?? current.min_stake);
    const max = BigInt(body.max_stake ?? current.max_stake);
    if ((body.min_stake !== undefined || body.max_stake !== undefined) && max > 0n && min > max) {
      throw invalid('invalid_request', 'min_stake must not exceed max_stake');
    }
    const fields: VaultPatchFields = {
      vaultAddress: body.vault_address,
      maxLegs: body.max_legs,
      maxPayoutCap: body.max_payout_cap,
      minStake: body.min_stake,
      maxStake: body.max_stake,
      isActive: body.is_active,
    };
    await this.askVault({ type: 'VaultPatch', fields });
    return q.vault(this.d.db());
  }

  async syncVault() {
    const chain = this.requireChain();
    const address = await this.vaultAddress();
    let read: { amount: string; slot: number };
    try {
      read = await chain.vaultBalance(address);
    } catch (e) {
      this.d.log.error({ err: e, address }, 'vault sync: RPC failed');
      throw upstream('rpc_error', `reading the vault balance failed: ${(e as Error).message}`);
    }
    await this.askVault({ type: 'VaultSynced', balance: read.amount, slot: read.slot });
    return q.vault(this.d.db());
  }

  async voidParlay(parlayId: string) {
    const row = await q.parlayStatus(this.d.db(), parlayId);
    if (!row) throw notFound('parlay not found');
    if (row.status !== 'active')
      throw invalid('parlay_not_active', `parlay ${parlayId} is ${row.status}; only an active parlay can be voided`);
    const chain = this.requireChain();
    const cfg = await q.programConfig(this.d.db());
    if (!cfg) throw unavailable('config_unknown', 'the program configuration has not been mirrored yet');
    let landed: Awaited<ReturnType<ChainGateway['voidParlay']>>;
    try {
      landed = await chain.voidParlay({ parlayId, user: row.user_wallet, collateralMint: cfg.collateral_mint });
    } catch (e) {
      if (e instanceof MissingAuthority) throw unavailable('authority_not_configured', e.message);
      if (e instanceof ChainError && e.custom === PARLAY_NOT_ACTIVE)
        throw invalid('parlay_not_active', `parlay ${parlayId} is not active on chain`);
      if (e instanceof ChainError && e.custom !== undefined) throw conflict('chain_rejected', e.message);
      this.d.log.error({ err: e, parlayId }, 'void_parlay: RPC failed');
      throw upstream('rpc_error', `sending void_parlay failed: ${(e as Error).message}`);
    }
    // Apply the ParlayVoided event from the confirmed transaction's own logs (the webhook may come later: applied once).
    const res = await this.ingest([landed.transaction]);
    if (res.deferred) throw unavailable('deferred', 'the void landed but could not be applied yet');
    return { parlay_id: Number(parlayId), tx_signature: landed.signature };
  }

  private async vaultAddress(): Promise<string> {
    const v = (await q.vault(this.d.db())) as { vault_address: string };
    if (v.vault_address) return v.vault_address;
    const cfg = await q.programConfig(this.d.db());
    if (cfg?.vault) return cfg.vault;
    throw conflict('vault_unknown', 'no vault address is known yet: set vault_address or deliver ConfigInitialized');
  }

  chain(): ChainGateway | null {
    return this.d.chain;
  }

  private requireChain(): ChainGateway {
    if (!this.d.chain) throw unavailable('chain_unavailable', 'no chain RPC is configured');
    return this.d.chain;
  }

  private async askVault(cmd: Extract<ParlayEventsProtocol['cmd'], { type: 'VaultPatch' | 'VaultSynced' }>) {
    try {
      return await this.d.asker.askTo(channel<ParlayEventsProtocol>(this.d.topic), VAULT_KEY, cmd);
    } catch (e) {
      if (e instanceof AskTimeout) throw unavailable('unavailable', 'the vault actor did not answer in time; retry');
      throw e;
    }
  }
}
