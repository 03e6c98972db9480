/**
 * `ctx.state`: durable per-plugin key/value in the store's `plugin_state` table, served by the host so a
 * plugin needs no file or database permission for its own bookkeeping. Values are JSON.
 */
import type { Store } from "../runtime/store/store.ts";

const MAX_KEY_LENGTH = 512;
const MAX_VALUE_BYTES = 1024 * 1024;

export class PluginStateTable {
  #store: Store;
  #plugin: string;
  constructor(store: Store, plugin: string) {
    this.#store = store;
    this.#plugin = plugin;
  }

  get(key: string): unknown {
    const row = this.#store.stmt("SELECT value FROM plugin_state WHERE plugin = ? AND key = ?")
      .get(this.#plugin, checkKey(key)) as { value: string } | undefined;
    return row ? JSON.parse(row.value) : undefined;
  }

  set(key: string, value: unknown): void {
    const json = JSON.stringify(value);
    if (json === undefined) {
      throw new TypeError(`Cannot store "${key}": the value is not JSON (${typeof value})`);
    }
    if (json.length > MAX_VALUE_BYTES) {
      throw new RangeError(
        `Cannot store "${key}": the value is ${json.length} bytes, over the ${MAX_VALUE_BYTES} limit`,
      );
    }
    this.#store.immediate(() =>
      this.#store.stmt(
        `INSERT INTO plugin_state (plugin, key, value, updated_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (plugin, key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      ).run(this.#plugin, checkKey(key), json, this.#store.clock.now())
    );
  }

  delete(key: string): boolean {
    const result = this.#store.immediate(() =>
      this.#store.stmt("DELETE FROM plugin_state WHERE plugin = ? AND key = ?").run(
        this.#plugin,
        checkKey(key),
      )
    );
    return Number(result.changes) > 0;
  }

  /** Keys starting with `prefix`, sorted. */
  list(prefix = ""): string[] {
    const rows = this.#store.stmt(
      "SELECT key FROM plugin_state WHERE plugin = ? AND substr(key, 1, ?) = ? ORDER BY key",
    ).all(this.#plugin, prefix.length, prefix) as { key: string }[];
    return rows.map((row) => row.key);
  }

  /** Serves a plugin's `state.*` request. */
  serve(method: string, params: Record<string, unknown>): unknown {
    const key = params.key as string;
    switch (method) {
      case "state.get": {
        // A one-element array when the key exists, so a stored null stays distinct from a missing key.
        const value = this.get(key);
        return value === undefined ? [] : [value];
      }
      case "state.set":
        this.set(key, params.value);
        return null;
      case "state.delete":
        return this.delete(key);
      case "state.list":
        return this.list(params.prefix === undefined ? "" : String(params.prefix));
      default:
        throw new Error(`unknown method "${method}"`);
    }
  }
}

function checkKey(key: unknown): string {
  if (typeof key !== "string" || key.length === 0 || key.length > MAX_KEY_LENGTH) {
    throw new TypeError(`Invalid state key: expected a string of 1 to ${MAX_KEY_LENGTH} characters`);
  }
  return key;
}
