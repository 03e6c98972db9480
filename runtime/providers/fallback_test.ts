import assert from "node:assert/strict";
import { withFallback } from "./fallback.ts";
import { type ModelRequest, type Provider, ProviderError, type RetryInfo } from "./provider.ts";

const request: ModelRequest = { model: "main", messages: [{ role: "user", content: "hi" }], tools: [] };

/** A provider that fails each model as told, streaming `streamed` first when given. */
function toy(fail: Record<string, { kind: "overload" | "quota" | "fatal"; streamed?: string }>) {
  const asked: string[] = [];
  const provider: Provider = {
    name: "toy",
    complete(req, options = {}) {
      asked.push(req.model);
      const failure = fail[req.model];
      if (!failure) {
        return Promise.resolve({
          message: { role: "assistant", content: `from ${req.model}` },
          usage: null,
          finish_reason: "stop",
        });
      }
      if (failure.streamed) options.onDelta?.(failure.streamed);
      return Promise.reject(new ProviderError(`${req.model} failed`, { status: 529, kind: failure.kind }));
    },
  };
  return { provider, asked };
}

Deno.test("withFallback: an overloaded model hands the same request to the next, reported with its name", async () => {
  const { provider, asked } = toy({ main: { kind: "overload" } });
  const retries: RetryInfo[] = [];
  const reply = await withFallback(provider, ["spare"]).complete(request, {
    onRetry: (i) => retries.push(i),
  });
  assert.equal(reply.message.content, "from spare");
  assert.deepEqual(asked, ["main", "spare"]);
  assert.deepEqual(retries.map((r) => [r.status, r.model]), [[529, "spare"]]);
  const again = await withFallback(provider, ["spare"]).complete(request);
  assert.equal(again.message.content, "from spare");
  assert.deepEqual(asked, ["main", "spare", "main", "spare"], "each request starts with the job's model");
});

Deno.test("withFallback: no switch after text streamed, on an exhausted quota, or on a fatal error", async () => {
  for (
    const failure of [{ kind: "overload", streamed: "partial " }, { kind: "quota" }, {
      kind: "fatal",
    }] as const
  ) {
    const { provider, asked } = toy({ main: failure });
    const deltas: string[] = [];
    await assert.rejects(
      withFallback(provider, ["spare"]).complete(request, { onDelta: (t) => deltas.push(t) }),
      (error: unknown) => error instanceof ProviderError && error.message === "main failed",
    );
    assert.deepEqual(asked, ["main"], failure.kind);
  }
});
