/**
 * `provider: azure` through the real CLI and the `openai` SDK's AzureOpenAI client, against the scripted
 * OpenAI server speaking Azure's routes: the deployment in the URL, `api-version` in the query, the key in an
 * `api-key` header; a tool round streaming and not, a fallback deployment, and the errors before any request.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";

const KEY = "azure-key-0123456789abcdef";
const origin = (url: string) => url.replace(/\/v1$/, "");
const job = (extra = "") =>
  `name: az\nmodel: { provider: azure, name: my-gpt${extra} }\nprompt: list the files\n` +
  `tools:\n  list_dir: { paths: ["."] }\n`;

for (const stream of [false, true]) {
  Deno.test(`azure (stream: ${stream}): deployment URL, api-version, api-key header; a tool round; key never printed`, async () => {
    const server = await startOpenAIServer({
      azure: { apiKey: KEY, apiVersion: "2025-01-01-preview" },
      script: [{ tool_calls: [{ name: "list_dir", arguments: { path: "." } }] }, {
        content: "One job file.",
      }],
    });
    try {
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": job(`, api_version: 2025-01-01-preview, stream: ${stream}`),
      });
      const env = { AZURE_OPENAI_API_KEY: KEY, AZURE_OPENAI_ENDPOINT: `${origin(server.url)}/` };
      const { code, stderr, events } = await runEvents(dir, { env });
      assert.equal(code, 0, stderr);
      assert.equal(events.at(-1)!.final, "One job file.");
      assert.deepEqual(server.urls, [
        "/openai/deployments/my-gpt/chat/completions?api-version=2025-01-01-preview",
        "/openai/deployments/my-gpt/chat/completions?api-version=2025-01-01-preview",
      ]);
      assert.equal(events.find((e) => e.type === "session.start")!.provider, "azure");
      assert.match(String(events.find((e) => e.type === "tool.result")?.content), /job\.yaml/);
      assert.doesNotMatch(JSON.stringify(events) + stderr, new RegExp(KEY));
    } finally {
      await server.close();
    }
  });
}

Deno.test("azure: api-version from AZURE_OPENAI_API_VERSION, else the GA default; a wrong key is a 401", async () => {
  for (
    const [version, env] of [["2024-06-01", { AZURE_OPENAI_API_VERSION: "2024-06-01" }], ["2024-10-21", {}]]
  ) {
    const server = await startOpenAIServer({
      azure: { apiKey: KEY, apiVersion: version as string },
      script: [{ content: "ok" }],
    });
    try {
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": `name: az\nmodel: { provider: azure, name: dep, base_url: "${
          origin(server.url)
        }" }\nprompt: hi\n`,
      });
      const ok = await hermes(["run", "job.yaml"], {
        cwd: dir,
        home: dir,
        env: { AZURE_OPENAI_API_KEY: KEY, ...env as Record<string, string> },
      });
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout, "ok\n");
      const bad = await hermes(["run", "job.yaml"], {
        cwd: dir,
        home: dir,
        env: { ...env as Record<string, string>, AZURE_OPENAI_API_KEY: "wrong" },
      });
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /HTTP 401/);
    } finally {
      await server.close();
    }
  }
});

Deno.test("azure: model.fallback moves to another deployment on overload", async () => {
  const server = await startOpenAIServer({
    azure: { apiKey: KEY, apiVersion: "2024-10-21" },
    respond: (body): ScriptEntry =>
      body.model === "busy"
        ? { error: { status: 503, message: "overloaded", retry_after: 0 } }
        : { content: "spare" },
  });
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml":
        `name: az\nmodel: { provider: azure, name: busy, max_retries: 0, fallback: [spare], base_url: "${
          origin(server.url)
        }" }\nprompt: hi\n`,
    });
    const { code, stderr, events } = await runEvents(dir, { env: { AZURE_OPENAI_API_KEY: KEY } });
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "spare");
    assert.deepEqual(server.urls.map((u) => u.split("/")[3]), ["busy", "spare"]);
  } finally {
    await server.close();
  }
});

Deno.test("azure: no endpoint, no key, or api_version on another provider is exit 2 before any request", async () => {
  const dir = await writeFiles(await tempDir(), { "job.yaml": job() });
  const noEndpoint = await hermes(["run", "job.yaml"], {
    cwd: dir,
    home: dir,
    env: { AZURE_OPENAI_API_KEY: KEY },
  });
  assert.equal(noEndpoint.code, 2);
  assert.match(
    noEndpoint.stderr,
    /Cannot use provider azure: set model\.base_url .* or AZURE_OPENAI_ENDPOINT/,
  );
  const noKey = await hermes(["run", "job.yaml"], {
    cwd: dir,
    home: dir,
    env: { AZURE_OPENAI_ENDPOINT: "https://x.openai.azure.com" },
  });
  assert.equal(noKey.code, 2);
  assert.match(noKey.stderr, /AZURE_OPENAI_API_KEY \(model\.api_key_env\) is not set/);
  await Deno.writeTextFile(
    `${dir}/job.yaml`,
    job().replace("provider: azure", "provider: openai, api_version: v1"),
  );
  const wrong = await hermes(["run", "job.yaml"], { cwd: dir, home: dir, env: { OPENAI_API_KEY: "k" } });
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /model\.api_version needs provider: azure/);
});
