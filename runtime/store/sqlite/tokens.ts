/** The `api_tokens` table: `hermes serve`'s bearer tokens, kept as hashes. */
import type { ApiToken, TokenOps } from "../store.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

function tokenOf(row: Row): ApiToken {
  return {
    id: String(row.id),
    name: row.name === null ? null : String(row.name),
    scopes: JSON.parse(String(row.scopes)),
    created_at: Number(row.created_at),
    expires_at: row.expires_at === null ? null : Number(row.expires_at),
    revoked_at: row.revoked_at === null ? null : Number(row.revoked_at),
  };
}

export function tokenOps(db: SqliteDb): TokenOps {
  const get = (id: string) => db.stmt("SELECT * FROM api_tokens WHERE id = ?").get(id) as Row | undefined;
  return {
    createToken: (token) =>
      settle(() => {
        db.immediate(() =>
          db.stmt(
            `INSERT INTO api_tokens (id, name, hash, scopes, created_at, expires_at)
             VALUES (?, ?, ?, ?, ?, ?)`,
          ).run(token.id, token.name, token.hash, JSON.stringify(token.scopes), token.now, token.expires_at)
        );
        return tokenOf(get(token.id)!);
      }),
    tokenById: (id) =>
      settle(() => {
        const row = get(id);
        return row ? { ...tokenOf(row), hash: String(row.hash) } : undefined;
      }),
    listTokens: () =>
      settle(() =>
        db.stmt("SELECT * FROM api_tokens ORDER BY created_at, id").all().map((r) => tokenOf(r as Row))
      ),
    revokeToken: (id, now) =>
      settle(() =>
        db.immediate(() => {
          db.stmt("UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL").run(now, id);
          const row = get(id);
          return row ? tokenOf(row) : undefined;
        })
      ),
    serverSecret: (name, fresh, now) =>
      settle(() =>
        db.immediate(() => {
          db.stmt(
            "INSERT INTO server_secrets (name, value, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING",
          )
            .run(name, fresh, now);
          const row = db.stmt("SELECT value FROM server_secrets WHERE name = ?").get(name) as Row;
          return String(row.value);
        })
      ),
  };
}
