/**
 * HMAC-SHA256 with Web Crypto, for what Hermes signs (notification deliveries) and what it verifies (webhook
 * deliveries): one definition of the MAC both sides of the format compute.
 */
export async function hmacSha256(secret: string, data: Uint8Array | string): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey(
    "raw",
    new TextEncoder().encode(secret),
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, bytes as Uint8Array<ArrayBuffer>));
}

/** Lower-case hex of `bytes`. */
export function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
