/**
 * The console's sign-in session: an API token exchanged for a cookie that carries it, signed with the store's
 * key (HMAC-SHA256) and ending at a fixed time, and the CSRF token every state-changing request must carry.
 *
 * The cookie carries the token itself, encrypted (AES-GCM under a key derived from the server's), so that
 * every request is authenticated exactly as the API's are (the store's hash compare, its expiry, its
 * revocation, its scopes: a token revoked anywhere stops the console at once) while the cookie at rest in a
 * browser profile does not show it. The signature keeps a forged or stretched cookie out; the CSRF token is derived from the session's
 * signature, so a page of another site can neither read nor compute it. Comparisons are constant-time.
 */
import { timingSafeEqual } from "node:crypto";
import { hex, hmacSha256 } from "../../core/hmac.ts";

/** How long a sign-in lasts (ms) unless the server says otherwise. */
export const DEFAULT_SESSION_MS = 12 * 60 * 60 * 1000;

export interface SessionKey {
  /** The secret the cookies and CSRF tokens of this server are signed with (hex). */
  readonly secret: string;
}

/** The name of the store's secret the console signs with. */
export const SESSION_SECRET = "console_session_key";

/**
 * The key kept in the store, read once and then held: every server sharing the store signs and checks
 * cookies alike, and a restart keeps sessions. A failed read (store down) is tried again at the next request.
 */
export function storedSessionKey(read: () => Promise<string>): () => Promise<SessionKey> {
  let held: Promise<SessionKey> | undefined;
  return () => {
    held ??= read().then((secret) => ({ secret }), (error) => {
      held = undefined;
      throw error;
    });
    return held;
  };
}

export interface ConsoleSession {
  token: string;
  expiresAt: number;
  /** The CSRF token of this session. */
  csrf: string;
}

/** The cookie's name: `__Host-` (bound to this host and path, HTTPS only) when the console is served over TLS. */
export function cookieName(secure: boolean): string {
  return secure ? "__Host-hermes_console" : "hermes_console";
}

/** The cookie value for `token` until `expiresAt`. */
export async function sealSession(key: SessionKey, token: string, expiresAt: number): Promise<string> {
  const body = `${await encrypt(key, token)}.${expiresAt}`;
  return `${body}.${await mac(key, `session|${body}`)}`;
}

/** The session a cookie value holds; undefined when it is malformed, forged or past its end. */
export async function openSession(
  key: SessionKey,
  value: string | undefined,
  now: number,
): Promise<ConsoleSession | undefined> {
  const match = value === undefined ? null : /^([A-Za-z0-9_-]+)\.(\d{1,15})\.([0-9a-f]{64})$/.exec(value);
  if (!match) return undefined;
  const [, token64, expires, signature] = match as unknown as [string, string, string, string];
  const body = `${token64}.${expires}`;
  if (!sameText(await mac(key, `session|${body}`), signature)) return undefined;
  const expiresAt = Number(expires);
  if (expiresAt <= now) return undefined;
  const token = await decrypt(key, token64);
  if (token === undefined) return undefined;
  return { token, expiresAt, csrf: await mac(key, `csrf|${signature}`) };
}

/** The CSRF token of the sign-in form, bound to the random nonce its cookie holds. */
export async function signinCsrf(key: SessionKey, nonce: string): Promise<string> {
  return await mac(key, `signin|${nonce}`);
}

/** A random nonce for the sign-in form's cookie. */
export function newNonce(): string {
  return hex(crypto.getRandomValues(new Uint8Array(16)));
}

/** Constant-time equality of two strings (false when the lengths differ). */
export function sameText(a: string, b: string): boolean {
  const x = new TextEncoder().encode(a);
  const y = new TextEncoder().encode(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

async function mac(key: SessionKey, data: string): Promise<string> {
  return hex(await hmacSha256(key.secret, data));
}

/** AES-256-GCM under a key derived from the server's: the cookie at rest (a browser profile) shows no token. */
async function cipherKey(key: SessionKey): Promise<CryptoKey> {
  const raw = await hmacSha256(key.secret, "console cookie encryption");
  return await crypto.subtle.importKey("raw", raw as Uint8Array<ArrayBuffer>, "AES-GCM", false, [
    "encrypt",
    "decrypt",
  ]);
}

async function encrypt(key: SessionKey, text: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt(
      { name: "AES-GCM", iv },
      await cipherKey(key),
      new TextEncoder().encode(text),
    ),
  );
  const all = new Uint8Array(iv.length + sealed.length);
  all.set(iv);
  all.set(sealed, iv.length);
  return base64url(all);
}

async function decrypt(key: SessionKey, text: string): Promise<string | undefined> {
  try {
    const all = fromBase64url(text);
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: all.subarray(0, 12) },
      await cipherKey(key),
      all.subarray(12),
    );
    return new TextDecoder("utf-8", { fatal: true }).decode(plain);
  } catch {
    return undefined; // not ours (its signature checked out only if the key leaked): no session
  }
}

function base64url(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
