// `?` placeholders filled with quoted values, as MikroORM's Platform.formatQuery does, but strings
// are escaped with two native replaces instead of a loop over every character: a batch's commit
// inlines its snapshots and ledger rows as JSON text (tens of KB), and the character loop showed
// up in the profile.
type Platform = { quoteValue(v: unknown): string; quoteIdentifier(v: unknown): string };

/** PostgreSQL string literal, identical to libpq's (and MikroORM's) escapeLiteral. */
export function pgLiteral(s: string): string {
  const quoted = s.includes("'") ? s.replace(/'/g, "''") : s;
  return s.includes('\\') ? ` E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`;
}

export function formatQuery(platform: Platform, sql: string, params: readonly unknown[]): string {
  if (!params.length) return sql;
  const value = (v: unknown) => (typeof v === 'string' ? pgLiteral(v) : platform.quoteValue(v));
  let j = 0;
  let pos = 0;
  let out = '';
  if (sql.startsWith('?')) {
    if (sql[1] === '?') {
      out += platform.quoteIdentifier(params[j++]);
      pos = 2;
    } else {
      out += value(params[j++]);
      pos = 1;
    }
  }
  while (pos < sql.length) {
    const idx = sql.indexOf('?', pos + 1);
    if (idx === -1) {
      out += sql.substring(pos);
      break;
    }
    if (sql.substring(idx - 1, idx + 1) === '\\?') {
      out += sql.substring(pos, idx - 1) + '?';
      pos = idx + 1;
    } else if (sql.substring(idx, idx + 2) === '??') {
      out += sql.substring(pos, idx) + platform.quoteIdentifier(params[j++]);
      pos = idx + 2;
    } else {
      out += sql.substring(pos, idx) + value(params[j++]);
      pos = idx + 1;
    }
  }
  return out;
}
