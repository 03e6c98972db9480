/**
 * A SQLite store's health, read without changing it (read-only, nothing migrated): is the file SQLite at
 * all, is it intact (`PRAGMA quick_check`, or the full `integrity_check`), and is its schema one this
 * Hermes can use (newer is a problem; older is migrated when next opened).
 */
import { DatabaseSync } from "node:sqlite";
import { errorMessage } from "../../core/errors.ts";
import { migrations } from "../_migrations.ts";
import { newerSchema, type StoreHealth } from "../health.ts";

const MAGIC = "SQLite format 3\0";
const SHOWN = 3;

export function sqliteHealth(path: string, options: { full?: boolean } = {}): StoreHealth {
  const header = new Uint8Array(MAGIC.length);
  let size: number;
  try {
    const file = Deno.openSync(path, { read: true });
    try {
      size = file.statSync().size;
      file.readSync(header);
    } finally {
      file.close();
    }
  } catch (error) {
    return { ok: false, detail: `Cannot read the store ${path}: ${errorMessage(error)}` };
  }
  if (size === 0) return { ok: true, detail: `${path} is empty (a new store is created in it)` };
  if (new TextDecoder().decode(header) !== MAGIC) {
    return {
      ok: false,
      detail: `${path} is not a SQLite database (${size} bytes of something else)`,
      hint: "point --db or --home at the store, or move the file aside to start a new one",
    };
  }
  const check = options.full ? "integrity_check" : "quick_check";
  let db: DatabaseSync | undefined;
  try {
    db = new DatabaseSync(path, { readOnly: true });
    const rows = db.prepare(`PRAGMA ${check}`).all().map((row) =>
      String(Object.values(row)[0]).replace(/\s*\n\s*/g, " ")
    );
    if (rows.length !== 1 || rows[0] !== "ok") {
      const more = rows.length > SHOWN ? ` (and ${rows.length - SHOWN} more)` : "";
      return {
        ok: false,
        detail: `${path} is damaged: ${check} found ${rows.slice(0, SHOWN).join("; ")}${more}`,
        hint: "restore it from a backup, or move it aside to start a new store",
      };
    }
    const version = Number(
      (db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version,
    );
    const newer = newerSchema(path, version, migrations.length);
    if (newer) return newer;
    const pending = version < migrations.length
      ? `; schema version ${version}, migrated to ${migrations.length} when next opened`
      : `; schema version ${version}`;
    return { ok: true, detail: `${path} passes ${check}${pending}` };
  } catch (error) {
    return {
      ok: false,
      detail: `${path} is damaged: ${check} failed: ${errorMessage(error)}`,
      hint: "restore it from a backup, or move it aside to start a new store",
    };
  } finally {
    db?.close();
  }
}
