/**
 * The SQLite store's schema version: the number of entries in _migrations.ts (schema_version_test.ts checks
 * that they agree; append a migration, bump this). A constant of its own so that the sessions lister
 * (sqlite/lister.ts), whose start-up is measured against a bare node:sqlite script, compares the file's
 * `user_version` without loading the 14 KB of migration SQL.
 */
export const SCHEMA_VERSION = 18;
