// Persisted cursors of long operations (`ops_jobs`, `ops_job_items`): an interrupted run (SIGINT,
// crash) is resumed by running the same command again; `--restart` starts it afresh.
import type { Db } from '../db.ts';

export interface Job<P = any, S = any> {
  id: string;
  kind: string;
  status: 'running' | 'done' | 'failed';
  params: P;
  state: S;
  created_at: string;
  updated_at: string;
}

const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);

function row<P, S>(r: any): Job<P, S> {
  return {
    ...r,
    params: parse(r.params),
    state: parse(r.state),
    created_at: new Date(r.created_at).toISOString(),
    updated_at: new Date(r.updated_at).toISOString(),
  };
}

export async function getJob<P, S>(db: Db, id: string): Promise<Job<P, S> | null> {
  const rows = await db.execute('select * from ops_jobs where id = ?', [id]);
  return rows.length ? row<P, S>(rows[0]) : null;
}

export async function listJobs(db: Db): Promise<Job[]> {
  return (await db.execute('select * from ops_jobs order by updated_at desc')).map((r: any) => row(r));
}

/** Starts a job afresh (dropping any earlier one of the same id and its items). */
export async function createJob<P, S>(db: Db, id: string, kind: string, params: P, state: S): Promise<Job<P, S>> {
  await db.execute('delete from ops_job_items where job_id = ?', [id]);
  await db.execute('delete from ops_jobs where id = ?', [id]);
  const rows = await db.execute(
    `insert into ops_jobs (id, kind, status, params, state, created_at, updated_at) values (?, ?, 'running', ?::jsonb, ?::jsonb, now(), now()) returning *`,
    [id, kind, JSON.stringify(params), JSON.stringify(state)],
  );
  return row<P, S>(rows[0]);
}

export async function saveJob(db: Db, job: Job): Promise<void> {
  await db.execute('update ops_jobs set status = ?, state = ?::jsonb, updated_at = now() where id = ?', [
    job.status,
    JSON.stringify(job.state),
    job.id,
  ]);
}
