/**
 * Which PostgreSQL failures are worth waiting out, and which of them may have cut a transaction off after
 * its COMMIT was sent (its outcome then unknown to the client until it asks the server, _db.ts).
 */

/** SQLSTATEs of a server going away or coming back, and of a transaction the server rolled back to retry. */
const TRANSIENT_STATES = new Set([
  "57P01", // admin_shutdown: the server is stopping (pg_ctl stop/restart)
  "57P02", // crash_shutdown: another backend crashed; every connection is reset
  "57P03", // cannot_connect_now: "the database system is starting up" / shutting down / in recovery
  "40001", // serialization_failure
  "40P01", // deadlock_detected
  "55P03", // lock_not_available: a lock held past lock_timeout (busy)
  "53300", // too_many_connections
  "08000", // connection_exception
  "08001", // sqlclient_unable_to_establish_sqlconnection
  "08003", // connection_does_not_exist
  "08004", // sqlserver_rejected_establishment_of_sqlconnection
  "08006", // connection_failure
]);

/** Errors of the socket or of the client's connection (npm:postgres), not answers from the server. */
const CONNECTION_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "ENOENT", // a Unix socket that is not there while the server restarts
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EAI_AGAIN",
  "CONNECTION_CLOSED",
  "CONNECT_TIMEOUT",
]);

const LOST_STATES = new Set(["57P01", "57P02", "08000", "08003", "08006"]);

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

export function isTransientPgError(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined) return TRANSIENT_STATES.has(code) || CONNECTION_CODES.has(code);
  // Deno's node:net reports some socket failures by message only.
  return /ECONNREFUSED|ECONNRESET|Connection refused|connection reset|os error 111|os error 104/i.test(
    String((error as Error | null)?.message ?? ""),
  );
}

/** The connection broke instead of answering: whatever was sent last may or may not have taken effect. */
export function isConnectionLoss(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (CONNECTION_CODES.has(code) || LOST_STATES.has(code)) ||
    (code === undefined && isTransientPgError(error));
}
