/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * The web console: server-rendered pages over the App (the same operations the /v1 routes use), signed in
 * with an API token (session.ts), every response under a strict Content-Security-Policy. Loaded only by
 * `hermes serve` (not on any other command's start-up); each page is one module listed in pages.ts.
 */
import { Hono } from "hono";
import type { Child } from "hono/jsx";
import type { Context } from "hono";
import { getCookie } from "hono/cookie";
import type { ApiToken, App, Scope } from "../../app/mod.ts";
import type { Clock } from "../../core/clock.ts";
import type { Logger } from "../../core/log.ts";
import { statusOf } from "../problem.ts";
import { ASSETS } from "./_generated/assets.ts";
import { Layout } from "./layout.tsx";
import { type ConsoleEnv, isSecure, type PageKit } from "./page.ts";
import { PAGES } from "./pages.ts";
import {
  type ConsoleSession,
  cookieName,
  DEFAULT_SESSION_MS,
  openSession,
  sameText,
  SESSION_SECRET,
  type SessionKey,
  storedSessionKey,
} from "./session.ts";
import { signinRoutes } from "./signin.tsx";
import { liveStream } from "./live.ts";
import { OpenStreams } from "../streams.ts";
import type { Wakeups } from "../../core/wakeups.ts";
import { DEFAULT_MAX_STREAMS, DEFAULT_PING } from "../server.ts";

export interface ConsoleOptions {
  app: App;
  clock: Clock;
  log: Logger;
  version: string;
  /** Signs the session cookies. Default: the store's (`storedSessionKey`), shared by every server on it. */
  key?: SessionKey;
  /** How long a sign-in lasts (ms). */
  sessionMs?: number;
  /** How often live parts of a page look again (ms). */
  pollMs?: number;
  /** The folder `hermes serve --jobs` names (the schedules page reads its scheduled jobs). */
  jobsDir?: string;
  /** The event streams open in this server: the console's live pages count in the API's per-token cap. */
  streams?: OpenStreams;
  /** Event streams open at once per token (default: the API's). */
  maxStreams?: number;
  /** Notified with a run's id and ANY_RUN when a run changed (this server's worker; PostgreSQL's NOTIFY). */
  runEvents?: Wakeups;
  /** Aborted when the server stops: live streams end. */
  signal?: AbortSignal;
  /** A live stream with nothing to send for this long sends a comment (ms). */
  pingMs?: number;
}

/**
 * No inline script or style, no eval, nothing from another origin, no framing, forms post only here. Inline
 * SVG attributes (the waterfall's bars) are not styles, so the policy needs no exception for them.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": CONTENT_SECURITY_POLICY,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

export function createConsole(options: ConsoleOptions): Hono<ConsoleEnv> {
  const { app, clock } = options;
  const given = options.key;
  const key = given ? () => Promise.resolve(given) : storedSessionKey(() => app.serverSecret(SESSION_SECRET));
  const router = new Hono<ConsoleEnv>();
  const nav = PAGES.flatMap((page) => (page.nav ? [page.nav] : []));

  router.use(async (c, next) => {
    await next();
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) c.res.headers.set(name, value);
    if (!c.res.headers.has("cache-control")) c.res.headers.set("cache-control", "no-store");
  });

  router.get("/assets/:name", (c) => {
    const asset = ASSETS[c.req.param("name")];
    if (!asset) return c.text("Not found", 404);
    return c.body(asset.body, 200, {
      "content-type": `${asset.type}; charset=utf-8`,
      "cache-control": "public, max-age=3600",
    });
  });

  const toSignin = (c: Context<ConsoleEnv>, reason?: string) => {
    const next = c.req.method === "GET" ? c.req.path + (new URL(c.req.url).search) : "/";
    const target = `/signin?next=${encodeURIComponent(next)}${
      reason ? `&reason=${encodeURIComponent(reason)}` : ""
    }`;
    // An htmx request (a live part polling) takes the whole page to the sign-in form.
    if (c.req.header("hx-request")) return c.body(null, 401, { "hx-redirect": target });
    return c.redirect(target, 303);
  };

  const live = {
    streams: options.streams ?? new OpenStreams(),
    maxStreams: options.maxStreams ?? DEFAULT_MAX_STREAMS,
    ...(options.runEvents ? { wakeups: options.runEvents } : {}),
    signal: options.signal ?? new AbortController().signal,
    pingMs: options.pingMs ?? DEFAULT_PING,
  };
  const kit: PageKit = {
    app,
    clock,
    pollMs: options.pollMs ?? 2000,
    live: (c, part) => liveStream(c, kit, live, part),
    ...(options.jobsDir !== undefined ? { jobsDir: options.jobsDir } : {}),
    signedIn: (scope: Scope) => async (c, next) => {
      const session = await openSession(await key(), getCookie(c, cookieName(isSecure(c))), clock.now());
      if (!session) return toSignin(c);
      const check = await app.authenticate(session.token);
      if (!check.ok) return toSignin(c, `the token is ${check.reason}`);
      const { token } = check;
      c.set("token", token);
      c.set("session", session);
      if (!token.scopes.includes(scope) && !token.scopes.includes("admin")) {
        return kit.page(
          c,
          "Not allowed",
          <div class="notice error" role="alert">
            Token {token.id} lacks the scope <code>{scope}</code> this page needs (it has{" "}
            {token.scopes.join(", ")}).
          </div>,
          403,
        );
      }
      await next();
    },
    csrf: async (c, next) => {
      const session = c.get("session");
      let presented = c.req.header("x-csrf-token");
      if (presented === undefined) {
        const type = c.req.header("content-type") ?? "";
        if (/^(application\/x-www-form-urlencoded|multipart\/form-data)/.test(type)) {
          const field = (await c.req.parseBody())["_csrf"];
          if (typeof field === "string") presented = field;
        }
      }
      if (presented === undefined || !sameText(presented, session.csrf)) {
        return kit.page(
          c,
          "Refused",
          <div class="notice error" role="alert">
            The request carries no valid CSRF token, so nothing was changed. Reload the page and try again.
          </div>,
          403,
        );
      }
      await next();
    },
    page: (c, title, body, status = 200) => {
      // Unset on the sign-in page and before a session was opened.
      const session = c.get("session") as ConsoleSession | undefined;
      const token = c.get("token") as ApiToken | undefined;
      const html = (
        <Layout
          title={title}
          nav={nav}
          path={c.req.path}
          version={options.version}
          {...(session && token ? { signedIn: { tokenId: token.id, csrf: session.csrf } } : {})}
        >
          {body as Child}
        </Layout>
      );
      return c.html(`<!doctype html>${html}`, status);
    },
  };

  signinRoutes(router, { kit, key, sessionMs: options.sessionMs ?? DEFAULT_SESSION_MS });
  for (const page of PAGES) page.register(router, kit);
  router.notFound((c) => kit.page(c, "Not found", <p>There is no page at {c.req.path}.</p>, 404));
  router.onError((error, c) => {
    const status = statusOf(error);
    if (status >= 500) options.log.error(`console ${c.req.method} ${c.req.path}: ${error.stack ?? error}`);
    const shownStatus = status === 404 ? 404 : status === 403 ? 403 : 400;
    return kit.page(
      c,
      status === 404 ? "Not found" : "Error",
      <div class="notice error" role="alert">
        {status >= 500 ? "The server failed: see its log." : error.message}
      </div>,
      status >= 500 ? 400 : shownStatus,
    );
  });
  return router;
}
