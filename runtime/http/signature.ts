/**
 * Webhook signatures, the authentication of `POST /v1/hooks/{job}` (a sender like GitHub cannot add a bearer
 * token). `github`: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>`. `hmac-sha256`: the form
 * Hermes's own notifications send, `X-Hermes-Signature-256: sha256=<hex HMAC-SHA256(secret, timestamp + "." +
 * body)>` with `X-Hermes-Timestamp` (epoch seconds) within a tolerance, so a captured delivery cannot be
 * replayed later. Both are computed over the body's raw bytes and compared in constant time.
 */
import { timingSafeEqual } from "node:crypto";
import { hmacSha256 } from "../core/hmac.ts";

export type SignatureKind = "github" | "hmac-sha256";

/** How far X-Hermes-Timestamp may be from the server's clock. */
export const TIMESTAMP_TOLERANCE_MS = 5 * 60_000;

export type Verdict = { ok: true } | { ok: false; reason: string };

export async function verifySignature(
  kind: SignatureKind,
  options: { secret: string; headers: Headers; body: Uint8Array; now: number },
): Promise<Verdict> {
  const { headers, body } = options;
  const header = kind === "github" ? "x-hub-signature-256" : "x-hermes-signature-256";
  const presented = headers.get(header);
  if (presented === null) return { ok: false, reason: `no ${header} header` };
  const hex = /^sha256=([0-9a-f]{64})$/i.exec(presented.trim())?.[1];
  if (hex === undefined) return { ok: false, reason: `${header} is not sha256=<64 hex digits>` };
  let signed = body;
  if (kind === "hmac-sha256") {
    const timestamp = headers.get("x-hermes-timestamp");
    if (timestamp === null || !/^\d{1,15}$/.test(timestamp)) {
      return { ok: false, reason: "no X-Hermes-Timestamp header (epoch seconds)" };
    }
    if (Math.abs(options.now - Number(timestamp) * 1000) > TIMESTAMP_TOLERANCE_MS) {
      return { ok: false, reason: `X-Hermes-Timestamp ${timestamp} is more than 5 minutes from now` };
    }
    const prefix = new TextEncoder().encode(`${timestamp}.`);
    signed = new Uint8Array(prefix.length + body.length);
    signed.set(prefix);
    signed.set(body, prefix.length);
  }
  const expected = await hmacSha256(options.secret, signed);
  const given = Uint8Array.from(hex.match(/../g)!, (pair) => parseInt(pair, 16));
  if (!timingSafeEqual(expected, given)) return { ok: false, reason: `${header} does not match the body` };
  return { ok: true };
}
