/**
 * A provider's rate-limit answer (429 with retry-after) to a queued run holds back the other queued runs of
 * the same model until it passes (runs show says so), while runs of another model go on.
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 60_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("queue: a 429 with retry-after holds the model's other queued runs; another model's run goes on", async () => {
  const server = await startOpenAIServer([
    { error: { status: 429, message: "slow down", retry_after: 30 } },
    { content: "late" },
  ]);
  const dir = await writeFiles(await tempDir("hermes-queue-429-"), {
    "limited.yaml":
      `name: limited\nmodel: { name: m, base_url: "${server.url}", api_key_env: K }\nprompt: hi\n`,
    "other.yaml": "name: other\nmodel: { provider: scripted, script: ./r.yaml }\nprompt: hi\n",
    "r.yaml": "- content: fine\n",
  });
  const home = `${dir}/home`;
  await Deno.mkdir(home);
  const cli: typeof hermes = (args) => hermes(args, { cwd: dir, home, env: { K: "k" } });
  const daemon = spawnHermes(["daemon", "--concurrency", "3", "--grace", "1s"], {
    cwd: dir,
    home,
    env: { K: "k" },
  });
  const store = openSqliteStore(`${home}/state.db`);
  try {
    const first = (await cli(["submit", "limited.yaml"])).stdout.trim();
    await until(
      "the hold",
      async () => Object.keys(await store.modelHolds(Date.now())).length ? true : undefined,
    );
    const held = (await cli(["submit", "limited.yaml"])).stdout.trim();
    const other = (await cli(["submit", "other.yaml"])).stdout.trim();
    const waited = await cli(["runs", "wait", other]);
    assert.equal(waited.code, 0, waited.stderr);
    const shown = JSON.parse((await cli(["runs", "show", held, "--json"])).stdout);
    assert.equal(shown.status, "queued");
    assert.match(shown.waiting, /^model m is rate-limited until /);
    assert.equal(server.requests.length, 1, "only the first run's call reached the limited model");
    assert.equal(JSON.parse((await cli(["runs", "show", first, "--json"])).stdout).status, "running");
  } finally {
    daemon.kill("SIGTERM");
    await daemon.output();
    await store.close();
    await server.close();
    await Deno.remove(dir, { recursive: true });
  }
});
