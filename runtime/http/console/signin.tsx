/** @jsxRuntime automatic */
/** @jsxImportSource hono/jsx */
/**
 * Sign-in and sign-out. The form takes an API token (`hermes tokens create`), checks it as the API does and
 * sets the session cookie: HttpOnly (no script reads it), SameSite=Strict (no other site's page sends it),
 * Secure and `__Host-` over TLS. The form itself carries a CSRF token bound to a nonce cookie, so another site
 * cannot sign a browser in with a token of its choosing.
 */
import type { Context, Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { type ConsoleEnv, isSecure, type PageKit } from "./page.ts";
import {
  cookieName,
  newNonce,
  openSession,
  sameText,
  sealSession,
  type SessionKey,
  signinCsrf,
} from "./session.ts";

const NONCE_COOKIE = "hermes_console_signin";

/** Where to go after signing in: a path of this console only (never another site). */
function safeNext(next: string | undefined): string {
  return next !== undefined && /^\/(?![/\\])[^\s]*$/.test(next) && !next.startsWith("/signin")
    ? next
    : "/runs";
}

export function signinRoutes(
  router: Hono<ConsoleEnv>,
  options: { kit: PageKit; key: () => Promise<SessionKey>; sessionMs: number },
): void {
  const { kit } = options;

  const form = async (
    c: Context<ConsoleEnv>,
    message: string | undefined,
    status: 200 | 400 | 403,
  ) => {
    const nonce = newNonce();
    setCookie(c, NONCE_COOKIE, nonce, {
      httpOnly: true,
      sameSite: "Strict",
      secure: isSecure(c),
      path: "/",
      maxAge: 3600,
    });
    const next = safeNext(c.req.query("next") ?? c.req.header("x-next"));
    return kit.page(
      c,
      "Sign in",
      <section class="signin">
        <h1>Sign in</h1>
        {message ? <div class="notice error" role="alert">{message}</div> : null}
        <form method="post" action="/signin">
          <input type="hidden" name="_csrf" value={await signinCsrf(await options.key(), nonce)} />
          <input type="hidden" name="next" value={next} />
          <label>
            API token
            <input
              type="password"
              name="token"
              autocomplete="off"
              required
              autofocus
              spellcheck={false}
              aria-describedby="token-help"
            />
          </label>
          <p id="token-help" class="muted">
            A token from{" "}
            <code>hermes tokens create --scope runs:read …</code>. The console can do what its scopes allow.
          </p>
          <button type="submit">Sign in</button>
        </form>
      </section>,
      status,
    );
  };

  router.get("/signin", async (c) => {
    const reason = c.req.query("reason");
    return await form(c, reason ? `Signed out: ${reason}.` : undefined, 200);
  });

  router.post("/signin", async (c) => {
    const body = await c.req.parseBody();
    const field = (name: string) => (typeof body[name] === "string" ? body[name] as string : undefined);
    const nonce = getCookie(c, NONCE_COOKIE);
    const csrf = field("_csrf");
    if (
      nonce === undefined || csrf === undefined ||
      !sameText(csrf, await signinCsrf(await options.key(), nonce))
    ) {
      return await form(c, "The sign-in form is stale or came from another site: try again.", 403);
    }
    const presented = (field("token") ?? "").trim();
    const check = await kit.app.authenticate(presented);
    if (!check.ok) return await form(c, `Cannot sign in: the token is ${check.reason}.`, 400);
    const secure = isSecure(c);
    const expiresAt = Math.min(
      kit.clock.now() + options.sessionMs,
      check.token.expires_at ?? Number.MAX_SAFE_INTEGER,
    );
    setCookie(c, cookieName(secure), await sealSession(await options.key(), presented, expiresAt), {
      httpOnly: true,
      sameSite: "Strict",
      secure,
      path: "/",
      maxAge: Math.max(1, Math.floor((expiresAt - kit.clock.now()) / 1000)),
    });
    deleteCookie(c, NONCE_COOKIE, { path: "/", secure });
    return c.redirect(safeNext(field("next")), 303);
  });

  router.post("/signout", async (c) => {
    // Signing out changes state too: it needs the session's CSRF token (without a session there is nothing to end).
    const secure = isSecure(c);
    const session = await openSession(await options.key(), getCookie(c, cookieName(secure)), kit.clock.now());
    if (session) {
      const body = await c.req.parseBody();
      const presented = c.req.header("x-csrf-token") ??
        (typeof body["_csrf"] === "string" ? body["_csrf"] : "");
      if (!sameText(presented, session.csrf)) {
        return kit.page(
          c,
          "Refused",
          <div class="notice error" role="alert">
            The request carries no valid CSRF token: still signed in.
          </div>,
          403,
        );
      }
      deleteCookie(c, cookieName(secure), { path: "/", secure });
    }
    return c.redirect("/signin", 303);
  });
}
