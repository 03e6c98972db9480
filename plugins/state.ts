/**
 * `ctx.state`: durable per-plugin key/value in the store's plugin state, served by the host so a plugin
 * needs no file or database permission for its own bookkeeping. Values are JSON; keys and sizes are checked
 * here, before the store sees them.
 */
import type { PluginStore } from "../runtime/store/store.ts";
import type { PluginManifest } from "./manifest.ts";

const MAX_KEY_LENGTH = 512;
const MAX_VALUE_BYTES = 1024 * 1024;

/**
 * Whose state it is: the plugin's real path — its directory, or its module file for a single-file plugin —
 * never the name it declares, so a second plugin declaring `"name": "vault"` gets a state of its own.
 * Upgrading a plugin in place (new files, new version, even a new name in plugin.json) keeps its state;
 * moving or copying it elsewhere starts empty. Symlinks are resolved, so a link to a plugin's directory is
 * that plugin (and runs its code).
 */
export function pluginIdentity(manifest: Pick<PluginManifest, "root">): string {
  return `path:${manifest.root}`;
}

export class PluginStateTable {
  #store: PluginStore;
  #plugin: string;
  constructor(store: PluginStore, plugin: string) {
    this.#store = store;
    this.#plugin = plugin;
  }

  async get(key: string): Promise<unknown> {
    return await this.#store.getPluginState(this.#plugin, checkKey(key));
  }

  async set(key: string, value: unknown): Promise<void> {
    const json = JSON.stringify(value);
    if (json === undefined) {
      throw new TypeError(`Cannot store "${key}": the value is not JSON (${typeof value})`);
    }
    if (json.length > MAX_VALUE_BYTES) {
      throw new RangeError(
        `Cannot store "${key}": the value is ${json.length} bytes, over the ${MAX_VALUE_BYTES} limit`,
      );
    }
    await this.#store.setPluginState(this.#plugin, checkKey(key), value);
  }

  async delete(key: string): Promise<boolean> {
    return await this.#store.deletePluginState(this.#plugin, checkKey(key));
  }

  /** Keys starting with `prefix`, sorted. */
  list(prefix = ""): Promise<string[]> {
    return this.#store.pluginStateKeys(this.#plugin, prefix);
  }

  /** Serves a plugin's `state.*` request. */
  async serve(method: string, params: Record<string, unknown>): Promise<unknown> {
    const key = params.key as string;
    switch (method) {
      case "state.get": {
        // A one-element array when the key exists, so a stored null stays distinct from a missing key.
        const value = await this.get(key);
        return value === undefined ? [] : [value];
      }
      case "state.set":
        await this.set(key, params.value);
        return null;
      case "state.delete":
        return await this.delete(key);
      case "state.list":
        return await this.list(params.prefix === undefined ? "" : String(params.prefix));
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
