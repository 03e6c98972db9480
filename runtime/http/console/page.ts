/**
 * What a console page is given and how it registers: one module per page exports a `ConsolePage`, and
 * pages.ts lists them. A page reads only through the App (the operations the /v1 routes use) and guards each
 * route with `kit.signedIn(scope)`; a route that changes something also takes `kit.csrf`.
 */
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { ApiToken, App, Scope } from "../../app/mod.ts";
import type { Clock } from "../../core/clock.ts";
import type { ConsoleSession } from "./session.ts";

export type ConsoleEnv = { Variables: { token: ApiToken; session: ConsoleSession } };

/** Whether the request came over TLS (its cookies are then `Secure`). */
export function isSecure(c: Context): boolean {
  return new URL(c.req.url).protocol === "https:";
}

export interface PageKit {
  app: App;
  clock: Clock;
  /** How often a live part of a page looks again when nothing woke it (ms): the server's look for a stream,
   * the browser's only when its stream failed. */
  pollMs: number;
  /** Streams a live part of a page as Server-Sent Events (live.ts). */
  live(
    c: Context<ConsoleEnv>,
    part: { key: string; render(): Promise<{ html: string; ended: boolean }> },
  ): Response;
  /** The folder of job files the server was given (`--jobs`), if any. */
  jobsDir?: string;
  /** Signed in with a token that holds `scope` (or admin); else to the sign-in page (or 403). */
  signedIn(scope: Scope): MiddlewareHandler<ConsoleEnv>;
  /** The request carries the session's CSRF token (form field `_csrf` or header X-CSRF-Token); else 403. */
  csrf: MiddlewareHandler<ConsoleEnv>;
  /** The page `body` in the console's layout. */
  page(c: Context<ConsoleEnv>, title: string, body: unknown, status?: 200 | 400 | 403 | 404 | 500): Response;
}

export interface ConsolePage {
  /** Its entry in the navigation bar (pages reached only by links have none). */
  nav?: { label: string; href: string };
  register(router: Hono<ConsoleEnv>, kit: PageKit): void;
}
