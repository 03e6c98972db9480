/** The key under which a SQLite store keeps its connection, for the test-only escape hatch (_testing.ts). */
export const SQLITE_HANDLE: unique symbol = Symbol("hermes.sqlite");
