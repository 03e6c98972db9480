/**
 * Overload and rate limits through the real CLI, over HTTP against the scripted OpenAI and Anthropic servers:
 * 429s past the retries end `rate_limited` (exit 1, result JSON), an exhausted quota is not retried, a 529
 * or 503 burst followed by success completes, and `model.fallback` takes over on overload, the switch named
 * in a `provider.retry` event and visible in the request's model field.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { startAnthropicServer } from "../_testing/anthropic_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

const openaiJob = (url: string, extra = "") =>
  `name: limits\nmodel: { name: primary, base_url: "${url}", api_key_env: none${extra} }\nprompt: hi\n`;

async function runJson(yaml: string, env: Record<string, string> = {}) {
  const dir = await writeFiles(await tempDir(), { "job.yaml": yaml });
  const { code, stdout, stderr } = await hermes(["run", "job.yaml", "--output", "json"], {
    cwd: dir,
    home: dir,
    env,
  });
  return { code, stderr, result: JSON.parse(stdout) as Record<string, unknown> };
}

Deno.test("openai: 429s past the retries end rate_limited, exit 1, with result JSON", async () => {
  const limited = { error: { status: 429, message: "Rate limit reached", retry_after: 0 } };
  const server = await startOpenAIServer([limited, limited, limited, { content: "never reached" }]);
  try {
    const { code, stderr, result } = await runJson(openaiJob(server.url, ", max_retries: 2"));
    assert.equal(code, 1, stderr);
    assert.equal(result.status, "failed");
    assert.equal(result.exit_code, 1);
    assert.equal(result.terminal_reason, "rate_limited");
    assert.match(String(result.error), /HTTP 429 Too Many Requests \(Rate limit reached\) after 2 retries/);
    assert.equal(server.requests.length, 3, "the request and its two retries");
    assert.match(stderr, /HTTP 429/);
  } finally {
    await server.close();
  }
});

Deno.test("openai: a 429 with insufficient_quota is not retried and ends rate_limited", async () => {
  const quota = {
    error: { status: 429, message: "You exceeded your current quota", code: "insufficient_quota" },
  };
  const server = await startOpenAIServer([quota, { content: "never reached" }]);
  try {
    const { code, result } = await runJson(openaiJob(server.url));
    assert.equal(code, 1);
    assert.equal(result.terminal_reason, "rate_limited");
    assert.match(String(result.error), /quota exhausted: not retried/);
    assert.equal(server.requests.length, 1, "no retry");
  } finally {
    await server.close();
  }
});

Deno.test("openai: a 503 and 529 burst followed by success completes (and a 400 still is provider_error)", async () => {
  const server = await startOpenAIServer([
    { error: { status: 503, message: "overloaded", retry_after: 0 } },
    { error: { status: 529, message: "overloaded", retry_after: 0 } },
    { content: "made it" },
    { error: { status: 400, message: "bad request" } },
  ]);
  try {
    const dir = await writeFiles(await tempDir(), { "job.yaml": openaiJob(server.url) });
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "made it");
    assert.deepEqual(events.filter((e) => e.type === "provider.retry").map((e) => e.status), [503, 529]);
    const refused = await runJson(openaiJob(server.url));
    assert.equal(refused.code, 1);
    assert.equal(refused.result.terminal_reason, "provider_error");
    assert.equal(server.requests.length, 4, "the 400 is not retried");
  } finally {
    await server.close();
  }
});

Deno.test("openai: model.fallback takes over on overload, the request's model field naming it", async () => {
  const seen: string[] = [];
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      seen.push(String(body.model));
      if (body.model === "primary") return { error: { status: 503, message: "overloaded", retry_after: 0 } };
      if (body.model === "second") return { error: { status: 429, message: "slow down", retry_after: 0 } };
      return { content: `answered by ${body.model}` };
    },
  });
  try {
    const yaml = openaiJob(server.url, ", max_retries: 1, fallback: [second, third]");
    const dir = await writeFiles(await tempDir(), { "job.yaml": yaml });
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "answered by third");
    assert.deepEqual(seen, ["primary", "primary", "second", "second", "third"]);
    const switches = events.filter((e) => e.type === "provider.retry" && e.model !== undefined);
    assert.deepEqual(switches.map((e) => [e.status, e.model]), [[503, "second"], [429, "third"]]);
  } finally {
    await server.close();
  }
});

Deno.test("openai: model.fallback is not tried on a fatal error; all fallbacks overloaded ends rate_limited", async () => {
  const seen: string[] = [];
  const server = await startOpenAIServer({
    respond: (body): ScriptEntry => {
      seen.push(String(body.model));
      return body.model === "primary"
        ? { error: { status: 401, message: "bad key" } }
        : { error: { status: 529, message: "overloaded", retry_after: 0 } };
    },
  });
  try {
    const fatal = await runJson(openaiJob(server.url, ", max_retries: 0, fallback: [second]"));
    assert.equal(fatal.result.terminal_reason, "provider_error");
    assert.deepEqual(seen.splice(0), ["primary"]);
    const job = openaiJob(server.url, ", name: other, max_retries: 0, fallback: [second]")
      .replace("name: primary, ", "");
    const overloaded = await runJson(job);
    assert.equal(overloaded.code, 1);
    assert.equal(overloaded.result.terminal_reason, "rate_limited");
    assert.deepEqual(seen, ["other", "second"]);
  } finally {
    await server.close();
  }
});

Deno.test("anthropic: 529s past the retries end rate_limited; model.fallback takes over on overload", async () => {
  const seen: string[] = [];
  await using server = await startAnthropicServer({
    respond: (body): ScriptEntry => {
      seen.push(String(body.model));
      return body.model === "claude-backup"
        ? { content: "the backup answered" }
        : { error: { status: 529, message: "Overloaded", retry_after: 0 } };
    },
  });
  const env = { ANTHROPIC_API_KEY: "sk-ant-test", ANTHROPIC_BASE_URL: server.url };
  const base = "name: claude\nprompt: hi\nmodel: { provider: anthropic, name: claude-main, max_retries: 1";
  const exhausted = await runJson(`${base} }\n`, env);
  assert.equal(exhausted.code, 1, exhausted.stderr);
  assert.equal(exhausted.result.terminal_reason, "rate_limited");
  assert.match(String(exhausted.result.error), /HTTP 529 Overloaded .*after 1 retry/);
  assert.deepEqual(seen.splice(0), ["claude-main", "claude-main"]);
  const dir = await writeFiles(await tempDir(), { "job.yaml": `${base}, fallback: [claude-backup] }\n` });
  const { code, stderr, events } = await runEvents(dir, { env });
  assert.equal(code, 0, stderr);
  assert.equal(events.at(-1)!.final, "the backup answered");
  assert.deepEqual(seen, ["claude-main", "claude-main", "claude-backup"]);
  const retries = events.filter((e) => e.type === "provider.retry");
  assert.deepEqual(retries.map((e) => e.model ?? null), [null, "claude-backup"]);
});
