/** The `api_tokens` table: `hermes serve`'s bearer tokens, kept as hashes. */
import type { ApiToken, TokenOps } from "../store.ts";
import type { PgDb } from "./_db.ts";

type Row = Record<string, unknown>;

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

export function tokenOps(db: PgDb): TokenOps {
  const { sql } = db;
  return {
    async createToken(token) {
      const [row] = await sql`
        INSERT INTO api_tokens (id, name, hash, scopes, created_at, expires_at)
        VALUES (${token.id}, ${token.name}, ${token.hash}, ${JSON.stringify(token.scopes)}, ${token.now},
          ${token.expires_at})
        RETURNING *`;
      return tokenOf(row!);
    },
    async tokenById(id) {
      const [row] = await sql`SELECT * FROM api_tokens WHERE id = ${id}`;
      return row ? { ...tokenOf(row), hash: String(row.hash) } : undefined;
    },
    async listTokens() {
      return (await sql`SELECT * FROM api_tokens ORDER BY created_at, id`).map(tokenOf);
    },
    async revokeToken(id, now) {
      await sql`UPDATE api_tokens SET revoked_at = ${now} WHERE id = ${id} AND revoked_at IS NULL`;
      const [row] = await sql`SELECT * FROM api_tokens WHERE id = ${id}`;
      return row ? tokenOf(row) : undefined;
    },
    async serverSecret(name, fresh, now) {
      await sql`
        INSERT INTO server_secrets (name, value, created_at) VALUES (${name}, ${fresh}, ${now})
        ON CONFLICT (name) DO NOTHING`;
      const [row] = await sql`SELECT value FROM server_secrets WHERE name = ${name}`;
      return String(row!.value);
    },
  };
}
