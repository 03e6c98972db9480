/**
 * `hermes store info [--json]`: the store's backend, schema version and row counts.
 * `hermes store migrate --to postgres://… [--json]`: copies every session of this store into a PostgreSQL
 * store, then verifies each copied session by its row counts and a checksum of its content; sessions the
 * target already holds are not copied again (a re-run copies nothing and verifies everything).
 */
import { type Cli, openStoreAt, parseCommandArgs } from "./_cli.ts";
import { systemClock } from "../runtime/core/clock.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { isPostgresUrl, redactUrl } from "../runtime/store/postgres/_url.ts";
import type { SessionExport, Store, StoreInfo } from "../runtime/store/store.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("store", cli.args, {
    to: { type: "string" },
    json: { type: "boolean" },
  });
  const [sub, ...rest] = positionals;
  if (rest.length > 0) throw new ValidationError(`hermes store: unexpected argument "${rest[0]}"`);
  if (sub === "info") {
    if (values.to !== undefined) {
      throw new ValidationError("hermes store: --to goes with `hermes store migrate`");
    }
    return await info(cli, values.json ?? false);
  }
  if (sub === "migrate") {
    if (values.to === undefined) {
      throw new ValidationError("hermes store migrate: expected --to postgres://…");
    }
    return await migrate(cli, values.to, values.json ?? false);
  }
  throw new ValidationError(
    `hermes store: expected info or migrate, got ${sub === undefined ? "nothing" : `"${sub}"`}`,
  );
}

async function info(cli: Cli, json: boolean): Promise<number> {
  const store = await cli.openStore();
  try {
    const report = { location: where(cli.dbPath), ...await store.storeInfo() };
    await cli.out(json ? JSON.stringify(report) + "\n" : formatInfo(report));
    return 0;
  } finally {
    await store.close();
  }
}

function formatInfo(report: StoreInfo & { location: string }): string {
  const counts = Object.entries(report.counts).map(([name, n]) => `  ${name.padEnd(15)} ${n}`);
  return [
    `backend         ${report.backend}`,
    `location        ${report.location}`,
    `schema version  ${report.schema_version}`,
    "rows:",
    ...counts,
  ].join("\n") + "\n";
}

interface Mismatch {
  session_id: string;
  problem: string;
}

async function migrate(cli: Cli, to: string, json: boolean): Promise<number> {
  if (!isPostgresUrl(to)) {
    throw new ValidationError(`hermes store migrate: --to must be a postgres:// URL, got "${to}"`);
  }
  if (to === cli.dbPath) {
    throw new ValidationError("hermes store migrate: --to names the store being copied (see --db)");
  }
  const source = await cli.openStore();
  try {
    const target = await openStoreAt(to, systemClock);
    try {
      const ids = await source.sessionIds();
      let copied = 0;
      let messages = 0;
      const mismatches: Mismatch[] = [];
      for (const [i, id] of ids.entries()) {
        if (cli.isTTY) cli.status(`copying session ${i + 1}/${ids.length}`);
        const data = await source.exportSession(id);
        if (!data) continue; // deleted since it was listed
        if (await target.importSession(data)) {
          copied++;
          messages += data.messages.length;
        }
        const problem = await verify(data, target);
        if (problem) mismatches.push({ session_id: id, problem });
      }
      cli.status("");
      const report = {
        to: redactUrl(to),
        sessions: ids.length,
        copied,
        already_present: ids.length - copied,
        messages_copied: messages,
        verified: ids.length - mismatches.length,
        mismatches,
      };
      if (json) await cli.out(JSON.stringify(report) + "\n");
      else {
        await cli.out(
          `copied ${copied} of ${ids.length} sessions (${messages} messages) to ${report.to}; ` +
            `${report.already_present} were already there; ${report.verified} verified (counts and checksum)\n`,
        );
        for (const m of mismatches) cli.err(`hermes store migrate: session ${m.session_id}: ${m.problem}`);
      }
      return mismatches.length === 0 ? 0 : 1;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

/** Null when the target holds the session as the source does: the same row counts and checksum. */
async function verify(data: SessionExport, target: Store): Promise<string | null> {
  const copy = await target.exportSession(data.session.id);
  if (!copy) return "missing from the target";
  for (const part of ["messages", "state", "compactions"] as const) {
    if (copy[part].length !== data[part].length) {
      return `${part}: ${data[part].length} here, ${copy[part].length} in the target`;
    }
  }
  const [mine, theirs] = await Promise.all([checksum(data), checksum(copy)]);
  return mine === theirs ? null : `checksum ${mine.slice(0, 12)} here, ${theirs.slice(0, 12)} in the target`;
}

/** SHA-256 of the session's content in a canonical form, without the ids each store numbers itself. */
export async function checksum(data: SessionExport): Promise<string> {
  const content = {
    session: data.session,
    messages: data.messages.map(({ id: _id, ...m }) => m),
    state: data.state,
    compactions: data.compactions.map(({ id: _id, ...c }) => c),
  };
  const bytes = new TextEncoder().encode(canonical(content));
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** JSON with object keys sorted, so that two stores' rows hash alike whatever order their columns come in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

function where(location: string): string {
  return isPostgresUrl(location) ? redactUrl(location) : location;
}
