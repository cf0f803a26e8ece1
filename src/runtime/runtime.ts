// A node's runtime: joins the consumer group of the command topics and runs a PartitionWorker for
// every partition it is assigned. Actor kinds plug in; the runtime knows nothing of their domain.
import { start as startActorSystem, stop as stopActorSystem } from 'nact';
import { PartitionWorker, type WorkerDeps } from './partition-worker.ts';
import type { ActorKind, Bus, ConsumerHandle } from './types.ts';
import type { RuntimeStore } from './store-port.ts';

export interface RuntimeOptions {
  bus: Bus;
  store: RuntimeStore;
  nodeId: string;
  groupId: string;
  kinds: { kind: ActorKind; owns(key: string): boolean }[];
  partitions: Record<string, number>;
  log: WorkerDeps['log'];
  metrics?: WorkerDeps['metrics'];
  faults?: WorkerDeps['faults'];
  onCommitted?: WorkerDeps['onCommitted'];
  /** Live actors per partition before idle ones are stopped (they come back from their snapshots). */
  maxLiveActors?: number;
  /** When snapshots are written (a bus that keeps no log journals the commands in between: WorkerDeps.journal). */
  checkpoint?: WorkerDeps['checkpoint'];
  /** Pause before retrying a failed batch (default 100 ms doubling to 5 s). */
  retryBackoff?: WorkerDeps['retryBackoff'];
}

export class Runtime {
  private workers = new Map<string, PartitionWorker>();
  private consumer: ConsumerHandle | null = null;
  private system: any;
  private assigned: { topic: string; partition: number }[] = [];
  private joined = false;

  /** Whether this node has joined its consumer group (it may own no partition when nodes outnumber them). */
  get hasJoined(): boolean {
    return this.joined;
  }

  constructor(private opts: RuntimeOptions) {}

  get topics(): string[] {
    return [...new Set(this.opts.kinds.map((k) => k.kind.topic))];
  }

  async start(): Promise<void> {
    const { bus } = this.opts;
    await bus.ensureTopics(this.topics.map((topic) => ({ topic, partitions: this.opts.partitions[topic] ?? 12 })));
    this.system = startActorSystem();
    const deps: WorkerDeps = {
      bus,
      store: this.opts.store,
      groupId: this.opts.groupId,
      owner: this.opts.nodeId,
      system: this.system,
      kindFor: (topic, key) => this.opts.kinds.find((k) => k.kind.topic === topic && k.owns(key))?.kind,
      log: this.opts.log,
      metrics: this.opts.metrics,
      faults: this.opts.faults,
      onCommitted: this.opts.onCommitted,
      maxLiveActors: this.opts.maxLiveActors,
      checkpoint: this.opts.checkpoint,
      journal: !bus.durable,
      retryBackoff: this.opts.retryBackoff,
    };
    this.consumer = await bus.consume({
      groupId: this.opts.groupId,
      topics: this.topics,
      fromBeginning: true,
      onAssignment: (assigned) => {
        this.assigned = assigned;
        this.joined = true;
        const keep = new Set(assigned.map((a) => `${a.topic}/${a.partition}`));
        // Partitions that moved away lose their actors. Those that stay keep them: if anyone else
        // advanced one meanwhile, the fenced commit notices and the worker reloads from the store.
        for (const [id, w] of this.workers) {
          if (keep.has(id)) continue;
          w.reset();
          this.workers.delete(id);
        }
        this.opts.log.info({ node: this.opts.nodeId, partitions: assigned.length }, 'partitions assigned');
      },
      onBatch: (batch) => {
        const id = `${batch.topic}/${batch.partition}`;
        let w = this.workers.get(id);
        if (!w) {
          w = new PartitionWorker(deps, batch.topic, batch.partition);
          this.workers.set(id, w);
        }
        return w.handle(batch);
      },
    });
  }

  assignment(): { topic: string; partition: number }[] {
    return this.assigned;
  }

  actorCount(): number {
    return this.workers.size;
  }

  /** Live actors in this node's memory, per kind (metrics). */
  actorCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const w of this.workers.values()) w.actorCounts(out);
    return out;
  }

  /** The next offset of every partition this node owns (null: not loaded yet), for consumer lag. */
  positions(): { topic: string; partition: number; next: bigint | null }[] {
    return this.assigned.map((a) => ({ ...a, next: this.workers.get(`${a.topic}/${a.partition}`)?.position ?? null }));
  }

  /** Actors changed in memory since their stored snapshots, on this node (metrics). */
  unsavedActors(): number {
    let n = 0;
    for (const w of this.workers.values()) n += w.unsaved;
    return n;
  }

  /**
   * Leaves the group. `flush: false` leaves unsaved actors unsaved, as a crash would (tests): the
   * next owner rebuilds them by replay.
   */
  async stop(opts: { flush?: boolean } = {}): Promise<void> {
    await this.consumer?.stop();
    this.consumer = null;
    // Save what only memory holds, so the next owner starts without a replay. Fenced (a no-op)
    // when another member already moved a partition on: it rebuilt those actors itself.
    if (opts.flush !== false) await Promise.all([...this.workers.values()].map((w) => w.flush().catch(() => false)));
    for (const w of this.workers.values()) w.reset();
    this.workers.clear();
    if (this.system) stopActorSystem(this.system);
  }
}
