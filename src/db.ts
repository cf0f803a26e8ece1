// The one database port of the code above the store: a statement with `?` parameters, its rows.
// The node hands use cases and read models an implementation (the driver, a transaction); the
// store's own modules (runtime store, relays) use MikroORM directly.
export interface Db {
  execute(sql: string, params?: unknown[]): Promise<any[]>;
}
