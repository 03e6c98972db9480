import assert from "node:assert/strict";
import {
  failureKind,
  isFallbackFailure,
  isRateLimited,
  isRetryable,
  retryAfterMs,
  retryDelayMs,
} from "./overload.ts";

Deno.test("failureKind: quota, rate limit, overload, transient and fatal apart", () => {
  assert.equal(failureKind(429, "insufficient_quota"), "quota");
  assert.equal(failureKind(429, "rate_limit_error"), "rate_limit");
  assert.equal(failureKind(429), "rate_limit");
  assert.equal(failureKind(529, "overloaded_error"), "overload");
  assert.equal(failureKind(503), "overload");
  for (const status of [408, 409, 500, 502, 504]) assert.equal(failureKind(status), "transient");
  assert.equal(failureKind(null), "transient");
  for (const status of [400, 401, 403, 404, 413]) assert.equal(failureKind(status), "fatal");
  assert.equal(isRetryable("quota"), false);
  assert.equal(isRetryable("fatal"), false);
  assert.equal(isRetryable("rate_limit") && isRetryable("overload") && isRetryable("transient"), true);
  assert.deepEqual(
    (["quota", "rate_limit", "overload", "transient", "fatal"] as const).map((k) => [
      isRateLimited(k),
      isFallbackFailure(k),
    ]),
    [[true, false], [true, true], [true, true], [false, false], [false, false]],
  );
});

Deno.test("retryAfterMs: retry-after-ms first, then seconds or an HTTP date, capped", () => {
  const now = Date.parse("2026-12-02T00:00:00Z");
  const h = (entries: Record<string, string>) => new Headers(entries);
  assert.equal(retryAfterMs(h({ "retry-after-ms": "250", "retry-after": "9" }), now), 250);
  assert.equal(retryAfterMs(h({ "retry-after": "2" }), now), 2000);
  assert.equal(retryAfterMs(h({ "retry-after": "Wed, 02 Dec 2026 00:00:05 GMT" }), now), 5000);
  assert.equal(retryAfterMs(h({ "retry-after": "Wed, 01 Dec 2026 23:59:00 GMT" }), now), 0, "a past date");
  assert.equal(retryAfterMs(h({ "retry-after": "3600" }), now), 60_000, "the default cap");
  assert.equal(retryAfterMs(h({ "retry-after": "3600" }), now, 5_000), 5_000);
  assert.equal(retryAfterMs(h({ "retry-after": "soon" }), now), undefined);
  assert.equal(retryAfterMs(h({}), now), undefined);
  assert.equal(retryAfterMs(undefined, now), undefined);
});

Deno.test("retryDelayMs: the server's wait when given, else doubling backoff with jitter below it", () => {
  assert.equal(retryDelayMs(3, { baseMs: 500, retryAfterMs: 1234 }), 1234);
  for (const [retry, nominal] of [[1, 500], [2, 1000], [3, 2000], [10, 8000]] as const) {
    const delay = retryDelayMs(retry, { baseMs: 500 });
    assert.ok(delay <= nominal && delay >= nominal * 0.75, `${retry}: ${delay}`);
  }
});
