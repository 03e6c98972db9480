/**
 * Console sessions are the store's, not one process's: a cookie signed in on one `hermes serve` opens the
 * console on another server sharing the store and on the first after a restart (the signing key is a secret
 * kept in the store); revoking the token signs it out on every server at once. A server on another store does
 * not take the cookie. SQLite file here; the PostgreSQL variant is skipped without HERMES_TEST_POSTGRES_URL.
 */
import assert from "node:assert/strict";
import { scratchDatabase } from "../../runtime/store/postgres/_testing.ts";
import { hermes, tempDir } from "../_testing/cli.ts";
import { startServe } from "../_testing/serve.ts";
import { signIn as signInForm } from "../_testing/console_signin.ts";

const serverUrl = Deno.env.get("HERMES_TEST_POSTGRES_URL");

/** Signs in through the form as a browser does; the session cookie (`name=value`). */
async function signIn(url: string, token: string): Promise<string> {
  const session = await signInForm(url, token);
  assert.equal(session.status, 303);
  return session.cookie;
}

/** The runs page with `cookie`: 200 when the session holds, a 303 to the sign-in form when not. */
async function runsPage(url: string, cookie: string): Promise<{ status: number; location: string | null }> {
  const response = await fetch(`${url}/runs`, { headers: { cookie }, redirect: "manual" });
  await response.body?.cancel();
  return { status: response.status, location: response.headers.get("location") };
}

async function sharedSessions(dbArgs: string[], home: string) {
  const made = await hermes(["tokens", "create", "--scope", "runs:read", ...dbArgs], { home });
  assert.equal(made.code, 0, made.stderr);
  const token = made.stdout.trim();
  const a = await startServe(home, ["--no-worker", ...dbArgs], { cwd: home });
  let restarted: Awaited<ReturnType<typeof startServe>> | undefined;
  await using b = await startServe(home, ["--no-worker", ...dbArgs], { cwd: home });
  try {
    const cookie = await signIn(a.url, token);
    assert.equal((await runsPage(a.url, cookie)).status, 200);
    assert.equal((await runsPage(b.url, cookie)).status, 200, "server B takes server A's cookie");
    // A forged cookie (the signature changed) is refused by both.
    const forged = cookie.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    assert.equal((await runsPage(b.url, forged)).status, 303);

    assert.equal(await a.stop(), 0);
    restarted = await startServe(home, ["--no-worker", ...dbArgs], { cwd: home });
    assert.equal((await runsPage(restarted.url, cookie)).status, 200, "the cookie outlives a restart");

    const list = JSON.parse((await hermes(["tokens", "list", "--json", ...dbArgs], { home })).stdout);
    assert.equal((await hermes(["tokens", "revoke", list[0].id, ...dbArgs], { home })).code, 0);
    for (const url of [restarted.url, b.url]) {
      const after = await runsPage(url, cookie);
      assert.equal(after.status, 303);
      assert.match(after.location ?? "", /^\/signin\?.*reason=the%20token%20is%20revoked/);
    }
  } finally {
    await a.stop();
    await restarted?.stop();
  }
}

Deno.test("console sessions: a cookie from one server opens another on the same SQLite store and outlives a restart; revoke signs out everywhere", async () => {
  const home = await tempDir();
  try {
    await sharedSessions([], home);
    // Another store (another home) has another key: the cookie of this one means nothing there.
    const otherHome = await tempDir();
    try {
      const made = await hermes(["tokens", "create", "--scope", "runs:read"], { home });
      const token = made.stdout.trim();
      await using here = await startServe(home, ["--no-worker"], { cwd: home });
      await using there = await startServe(otherHome, ["--no-worker"], { cwd: otherHome });
      const cookie = await signIn(here.url, token);
      assert.equal((await runsPage(here.url, cookie)).status, 200);
      assert.equal((await runsPage(there.url, cookie)).status, 303);
    } finally {
      await Deno.remove(otherHome, { recursive: true });
    }
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});

Deno.test({
  name: `console sessions on postgres: a cookie from one server opens another; revoke signs out both${
    serverUrl ? "" : " (skipped: HERMES_TEST_POSTGRES_URL is not set)"
  }`,
  ignore: !serverUrl,
  async fn() {
    await using db = await scratchDatabase(serverUrl!, "hermes_console_sessions");
    const home = await tempDir();
    try {
      await sharedSessions(["--db", db.url], home);
    } finally {
      await Deno.remove(home, { recursive: true });
    }
  },
});
