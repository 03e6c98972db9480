/**
 * API tokens for `hermes serve`. A token is `hermes_<id>_<secret>`: the id is public (listing, revoking, the
 * store's lookup key), the whole token is kept only as its SHA-256. Checking a token looks its id up and
 * compares the hashes in constant time, so neither the lookup nor the compare depends on the secret's bytes.
 * Every check reads the store: a revoke made through any server or CLI holds for the next request.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { ValidationError } from "../core/errors.ts";
import type { ApiToken, TokenStore } from "../store/store.ts";

import { type Scope, SCOPES } from "./scopes.ts";
export { type Scope, SCOPES };

const TOKEN = /^hermes_([0-9a-f]{16})_([A-Za-z0-9_-]{43})$/;

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

export function checkScopes(scopes: readonly string[], where: string): Scope[] {
  if (scopes.length === 0) {
    throw new ValidationError(`${where}: no scope given: expected one or more of ${SCOPES.join(", ")}`);
  }
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope)) {
      throw new ValidationError(`${where}: unknown scope "${scope}": expected one of ${SCOPES.join(", ")}`);
    }
  }
  return [...new Set(scopes)] as Scope[];
}

/** A new token: stored as a hash; the returned `token` is the only copy of the secret. */
export async function createToken(
  store: TokenStore,
  options: { scopes: readonly string[]; name?: string; expires_at?: number; now: number },
): Promise<{ token: string; info: ApiToken }> {
  const scopes = checkScopes(options.scopes, "--scope");
  const id = randomBytes(8).toString("hex");
  const token = `hermes_${id}_${randomBytes(32).toString("base64url")}`;
  const info = await store.createToken({
    id,
    name: options.name ?? null,
    hash: hashOf(token),
    scopes,
    expires_at: options.expires_at ?? null,
    now: options.now,
  });
  return { token, info };
}

export type TokenCheck =
  | { ok: true; token: ApiToken }
  | { ok: false; reason: "malformed" | "unknown" | "revoked" | "expired" };

/** Whether `presented` is a live token; its record when it is. */
export async function checkToken(store: TokenStore, presented: string, now: number): Promise<TokenCheck> {
  const match = TOKEN.exec(presented);
  if (!match) return { ok: false, reason: "malformed" };
  const stored = await store.tokenById(match[1]!);
  // Hash either way so an unknown id costs what a known one does.
  const given = Buffer.from(hashOf(presented), "hex");
  const expected = Buffer.from(stored?.hash ?? "0".repeat(64), "hex");
  const equal = expected.length === given.length && timingSafeEqual(expected, given);
  if (!stored || !equal) return { ok: false, reason: "unknown" };
  if (stored.revoked_at !== null) return { ok: false, reason: "revoked" };
  if (stored.expires_at !== null && stored.expires_at <= now) return { ok: false, reason: "expired" };
  const { hash: _hash, ...token } = stored;
  return { ok: true, token };
}
