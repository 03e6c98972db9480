import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { TIMESTAMP_TOLERANCE_MS, verifySignature } from "./signature.ts";

const body = new TextEncoder().encode('{"action":"opened"}');
const hex = (data: string) => createHmac("sha256", "k").update(data).digest("hex");

Deno.test("signature: github is the HMAC of the raw body; any other body, secret or form is refused", async () => {
  const check = (value: string | undefined, bytes = body) =>
    verifySignature("github", {
      secret: "k",
      headers: new Headers(value === undefined ? {} : { "x-hub-signature-256": value }),
      body: bytes,
      now: 0,
    });
  assert.deepEqual(await check(`sha256=${hex('{"action":"opened"}')}`), { ok: true });
  assert.deepEqual(await check(`sha256=${hex('{"action":"opened"}').toUpperCase()}`), { ok: true });
  assert.equal((await check(`sha256=${hex('{"action":"closed"}')}`)).ok, false);
  assert.equal((await check(`sha256=${hex('{"action":"opened"}').slice(2)}`)).ok, false, "too short");
  assert.equal((await check(`sha1=${hex('{"action":"opened"}')}`)).ok, false);
  assert.equal((await check(undefined)).ok, false);
  assert.equal((await check(`sha256=${hex('{"action":"opened"}')}`, new Uint8Array())).ok, false);
});

Deno.test("signature: hmac-sha256 signs timestamp.body, the timestamp within the tolerance either way", async () => {
  const now = 1_800_000_000_000;
  const check = (timestamp: number, signed = timestamp) =>
    verifySignature("hmac-sha256", {
      secret: "k",
      headers: new Headers({
        "x-hermes-timestamp": String(timestamp),
        "x-hermes-signature-256": `sha256=${hex(`${signed}.{"action":"opened"}`)}`,
      }),
      body,
      now,
    });
  const at = now / 1000;
  const edge = TIMESTAMP_TOLERANCE_MS / 1000;
  assert.deepEqual(await check(at), { ok: true });
  assert.deepEqual(await check(at - edge), { ok: true });
  assert.deepEqual(await check(at + edge), { ok: true });
  assert.equal((await check(at - edge - 1)).ok, false);
  assert.equal((await check(at + edge + 1)).ok, false);
  assert.equal((await check(at, at - 1)).ok, false, "the timestamp is part of what is signed");
});
