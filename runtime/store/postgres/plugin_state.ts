/** The `plugin_state` table: durable per-plugin JSON values (`ctx.state`). */
import type { PluginStateOps } from "../store.ts";
import type { PgDb } from "./_db.ts";

export function pluginStateOps(db: PgDb): PluginStateOps {
  const { sql } = db;
  return {
    async getPluginState(plugin, key) {
      const [row] = await sql`SELECT value FROM plugin_state WHERE plugin = ${plugin} AND key = ${key}`;
      return row ? JSON.parse(String(row.value)) : undefined;
    },
    async setPluginState(plugin, key, value) {
      await sql`
        INSERT INTO plugin_state (plugin, key, value, updated_at)
        VALUES (${plugin}, ${key}, ${JSON.stringify(value)}, ${db.clock.now()})
        ON CONFLICT (plugin, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`;
    },
    async deletePluginState(plugin, key) {
      return (await sql`DELETE FROM plugin_state WHERE plugin = ${plugin} AND key = ${key}`).count > 0;
    },
    async pluginStateKeys(plugin, prefix) {
      const rows = await sql`
        SELECT key FROM plugin_state WHERE plugin = ${plugin} AND starts_with(key, ${prefix}) ORDER BY key`;
      return rows.map((row) => String(row.key));
    },
  };
}
