// What a failed statement was, whichever way it reached us (the pg driver, MikroORM wrapping it, PGlite's script).

/** PostgreSQL's unique_violation (SQLSTATE 23505), found through MikroORM's `cause` / `previous` chain. */
export const isUniqueViolation = (e: unknown): boolean => {
  for (let x: any = e; x; x = x.cause ?? x.previous) if (x.code === '23505') return true;
  return false;
};
