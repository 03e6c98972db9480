/**
 * Bearer-token checks and per-token rate limits for the API. A token is read from the store on every request
 * (no cache), so a revoke made anywhere holds for the next request on every server.
 */
import type { MiddlewareHandler } from "hono";
import type { ApiToken, App, Scope } from "../app/mod.ts";
import type { Clock } from "../core/clock.ts";
import { problem } from "./problem.ts";

export type ApiEnv = { Variables: { token: ApiToken } };

const CHALLENGE = 'Bearer realm="hermes"';

/** The token of the request must be live and hold `scope` (or `admin`). */
export function requireScope(app: App, scope: Scope, limiter: RateLimiter): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    const instance = c.req.path;
    if (header === undefined) {
      return problem(401, "A bearer token is required (Authorization: Bearer …)", {
        instance,
        headers: { "www-authenticate": CHALLENGE },
      });
    }
    const presented = /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const check = presented === undefined ? undefined : await app.authenticate(presented);
    if (!check?.ok) {
      const why = check === undefined ? "not a bearer token" : `the token is ${check.reason}`;
      return problem(401, `Cannot authenticate: ${why}`, {
        instance,
        headers: { "www-authenticate": `${CHALLENGE}, error="invalid_token"` },
      });
    }
    const { token } = check;
    const wait = limiter.take(token.id);
    if (wait > 0) {
      return problem(
        429,
        `Token ${token.id} is over its rate limit of ${limiter.perMinute} requests a minute`,
        {
          instance,
          headers: { "retry-after": String(Math.ceil(wait / 1000)) },
        },
      );
    }
    if (!token.scopes.includes(scope) && !token.scopes.includes("admin")) {
      return problem(403, `Token ${token.id} lacks the scope ${scope} (it has ${token.scopes.join(", ")})`, {
        instance,
        headers: { "www-authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"` },
      });
    }
    c.set("token", token);
    await next();
  };
}

/**
 * A fixed one-minute window per token: `take` counts a request and says how long to wait (ms) when the
 * window is full. Held by one server: N servers allow N times the rate.
 */
export class RateLimiter {
  readonly perMinute: number;
  readonly #clock: Clock;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(options: { perMinute: number; clock: Clock }) {
    this.perMinute = options.perMinute;
    this.#clock = options.clock;
  }

  take(key: string): number {
    const now = this.#clock.now();
    let window = this.#windows.get(key);
    if (!window || now - window.start >= 60_000) {
      window = { start: now, count: 0 };
      this.#windows.set(key, window);
    }
    if (window.count >= this.perMinute) return window.start + 60_000 - now;
    window.count++;
    return 0;
  }
}
