/** The `plugin_state` table: durable per-plugin JSON values (`ctx.state`). */
import type { PluginStateOps } from "../store.ts";
import { type Row, settle, type SqliteDb } from "./_db.ts";

export function pluginStateOps(db: SqliteDb): PluginStateOps {
  return {
    getPluginState: (plugin, key) =>
      settle(() => {
        const row = db.stmt("SELECT value FROM plugin_state WHERE plugin = ? AND key = ?").get(plugin, key) as
          | Row
          | undefined;
        return row ? JSON.parse(String(row.value)) : undefined;
      }),
    setPluginState: (plugin, key, value) =>
      settle(() => {
        db.immediate(() =>
          db.stmt(
            `INSERT INTO plugin_state (plugin, key, value, updated_at) VALUES (?, ?, ?, ?)
             ON CONFLICT (plugin, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
          ).run(plugin, key, JSON.stringify(value), db.clock.now())
        );
      }),
    deletePluginState: (plugin, key) =>
      settle(() =>
        db.immediate(() =>
          Number(db.stmt("DELETE FROM plugin_state WHERE plugin = ? AND key = ?").run(plugin, key).changes) >
            0
        )
      ),
    pluginStateKeys: (plugin, prefix) =>
      settle(() =>
        db.stmt("SELECT key FROM plugin_state WHERE plugin = ? AND substr(key, 1, ?) = ? ORDER BY key")
          .all(plugin, prefix.length, prefix).map((row) => String(row.key))
      ),
  };
}
