/**
 * The identity columns of a holder, written once for the three tables that name one: compaction leases and
 * schedule runs (`holder_host, holder_pid, holder_started, holder_nonce`) and session owners
 * (`owner_host, owner_pid, owner_started`).
 */
import type { SQLInputValue } from "node:sqlite";
import type { ProcessIdentity } from "../../core/process_identity.ts";
import type { Row } from "./_db.ts";

export interface HolderColumns {
  /** `p_host, p_pid, p_started[, p_nonce]`, for a column list. */
  readonly names: string;
  /** As many `?` as there are columns. */
  readonly placeholders: string;
  /** `p_host = ?, …`, for an UPDATE. */
  readonly assign: string;
  /** `p_host = excluded.p_host, …`, for an upsert. */
  readonly fromExcluded: string;
  /** The parameters for `names`, in order. */
  values(identity: ProcessIdentity): SQLInputValue[];
  /** The identity a row holds; absent columns read as empty (`nonce` is empty without a nonce column). */
  read(row: Row): ProcessIdentity;
}

function holderColumns(prefix: string, withNonce: boolean): HolderColumns {
  const parts = ["host", "pid", "started", ...(withNonce ? ["nonce"] : [])];
  const columns = parts.map((part) => `${prefix}_${part}`);
  return {
    names: columns.join(", "),
    placeholders: columns.map(() => "?").join(", "),
    assign: columns.map((c) => `${c} = ?`).join(", "),
    fromExcluded: columns.map((c) => `${c} = excluded.${c}`).join(", "),
    values: (
      identity,
    ) => [identity.host, identity.pid, identity.started, ...(withNonce ? [identity.nonce] : [])],
    read: (row) => ({
      host: String(row[`${prefix}_host`] ?? ""),
      pid: Number(row[`${prefix}_pid`]),
      started: row[`${prefix}_started`] == null ? "unknown" : String(row[`${prefix}_started`]),
      nonce: withNonce ? String(row[`${prefix}_nonce`] ?? "") : "",
    }),
  };
}

/** Compaction leases and schedule runs. */
export const HOLDER: HolderColumns = holderColumns("holder", true);
/** The owner of a session row. */
export const OWNER: HolderColumns = holderColumns("owner", false);
