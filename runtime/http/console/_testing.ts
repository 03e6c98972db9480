/**
 * Test support for the console's pages: the API app with the console mounted over a real SQLite store and a
 * manual clock, requests answered in process, and sign-in through the form as a browser does it.
 */
import { App, type Scope } from "../../app/mod.ts";
import { ManualClock } from "../../core/_testing.ts";
import { EventBus } from "../../core/events.ts";
import { silentLogger } from "../../core/log.ts";
import { openSqliteStore } from "../../store/sqlite/sqlite_store.ts";
import { createApi } from "../server.ts";
import { createConsole } from "./mod.tsx";
import type { Wakeups } from "../../core/wakeups.ts";

export const NOW = Date.UTC(2026, 11, 7, 12, 30);

export async function consoleFixture(
  options: { jobsDir?: string; maxStreams?: number; runEvents?: Wakeups } = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "hermes-console-pages-" });
  const store = openSqliteStore(`${dir}/state.db`);
  const clock = new ManualClock(NOW);
  const app = new App({
    store,
    events: new EventBus(clock),
    clock,
    log: silentLogger,
    env: {},
    host: "test-host",
    config: undefined,
    cwd: dir,
    source: "http",
  });
  const web = createConsole({
    app,
    clock,
    log: silentLogger,
    version: "test",
    ...(options.jobsDir !== undefined ? { jobsDir: options.jobsDir } : {}),
    ...(options.maxStreams !== undefined ? { maxStreams: options.maxStreams } : {}),
    ...(options.runEvents ? { runEvents: options.runEvents } : {}),
  });
  const api = createApi({ app, clock, log: silentLogger, version: "test", console: web });
  const origin = "http://console.test";
  /** The response with its body unread (an event stream). */
  const open = async (path: string, init: RequestInit & { cookie?: string } = {}) => {
    const headers = new Headers(init.headers);
    if (init.cookie) headers.set("cookie", init.cookie);
    return await api.fetch(new Request(`${origin}${path}`, { ...init, headers }));
  };
  const fetchPage = async (path: string, init: RequestInit & { cookie?: string } = {}) => {
    const response = await open(path, init);
    return { response, text: await response.text() };
  };
  /** A session of a new token with `scopes`: its cookie, its CSRF token and the token's id. */
  const session = async (...scopes: Scope[]) => {
    const { token, info } = await app.createToken({ scopes });
    const form = await fetchPage("/signin");
    const nonce = /hermes_console_signin=([0-9a-f]+)/.exec(
      form.response.headers.get("set-cookie") ?? "",
    )![1]!;
    const signinCsrf = /name="_csrf" value="([0-9a-f]+)"/.exec(form.text)![1]!;
    const { response } = await fetchPage("/signin", {
      method: "POST",
      cookie: `hermes_console_signin=${nonce}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: signinCsrf, token, next: "/runs" }),
    });
    const cookie = /^(hermes_console=[^;]+)/.exec(response.headers.get("set-cookie") ?? "")![1]!;
    const page = await fetchPage("/runs", { cookie });
    const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(page.text)![1]!;
    return { cookie, csrf, tokenId: info.id };
  };
  /** Posts a form as the browser does. */
  const post = (path: string, cookie: string, fields: Record<string, string>) =>
    fetchPage(path, {
      method: "POST",
      cookie,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields),
    });
  return {
    dir,
    store,
    app,
    clock,
    fetchPage,
    open,
    session,
    post,
    async [Symbol.asyncDispose]() {
      await app.close();
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** The visible text of an HTML page, roughly: tags dropped, entities of the renderer decoded. */
export function textOf(html: string): string {
  return html.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'").replace(/&amp;/g, "&").replace(/\s+/g, " ");
}
