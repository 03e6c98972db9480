/**
 * A wedged owner does not keep its session: a `hermes run` stopped with SIGSTOP keeps a live pid,
 * so ownership by pid alone would refuse every `--resume` forever. Ownership needs progress: while the owner
 * is fresh a resume is refused (exit 2); once its renewal is overdue (the stall bound plus a margin) another
 * process takes the session over; and when the wedged process wakes it writes nothing more — it ends
 * `stalled`, exit 1, with its result JSON, leaving the taker's transcript and ending alone. Real CLI
 * processes, a real HTTP model server, a real SQLite store; the only bounds on time are generous ones.
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { sseChunk } from "../_testing/openai_server.ts";

const encoder = new TextEncoder();
const answer = (text: string) =>
  sseChunk({ role: "assistant", content: text }) + sseChunk({}, "stop") + "data: [DONE]\n\n";

/** The first request streams keep-alives until released, then answers "late answer"; later ones answer at once. */
function modelServer() {
  const release = Promise.withResolvers<void>();
  const firstIn = Promise.withResolvers<void>();
  const stopped = new AbortController();
  let requests = 0;
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {}, signal: stopped.signal },
    async (request) => {
      // Only chat completions: a local server is also asked for its window (/props, /api/show).
      if (!new URL(request.url).pathname.endsWith("/chat/completions")) {
        return new Response("not found", { status: 404 });
      }
      await request.json();
      const n = ++requests;
      const headers = { "content-type": "text/event-stream" };
      if (n > 1) return new Response(answer("taken over"), { headers });
      firstIn.resolve();
      let timer: ReturnType<typeof setInterval> | undefined;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          timer = setInterval(() => controller.enqueue(encoder.encode(": keep-alive\n\n")), 200);
          release.promise.then(() => {
            clearInterval(timer);
            controller.enqueue(encoder.encode(answer("late answer")));
            controller.close();
          });
        },
        cancel() {
          clearInterval(timer);
        },
      });
      return new Response(body, { headers });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/v1`,
    firstIn: firstIn.promise,
    release: () => release.resolve(),
    async [Symbol.asyncDispose]() {
      release.resolve();
      stopped.abort();
      await server.finished;
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("a run wedged by SIGSTOP: resume refused while it is fresh, taken over once overdue; woken, it writes nothing", async () => {
  await using server = modelServer();
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": `name: wedge\nmodel: { name: m, base_url: "${server.url}", api_key_env: TEST_API_KEY, ` +
      `stream: true, idle_timeout: 1s }\nprompt: first\n`,
  });
  const env = { TEST_API_KEY: "k" };
  const owner = spawnHermes(["run", "job.yaml", "--output", "json"], { cwd: dir, home: dir, env });
  const ownerOutput = owner.output();
  let resumed = false;
  try {
    await server.firstIn;
    await sleep(1_500); // bytes keep coming: the owner stays healthy past its 1 s idle bound
    const listed = await hermes(["sessions", "list", "--json"], { home: dir });
    const id = JSON.parse(listed.stdout)[0].id as string;
    Deno.kill(owner.pid, "SIGSTOP");

    const resume = () =>
      hermes(["run", "--resume", id, "-p", "second", "--output", "json"], { cwd: dir, home: dir, env });
    const refused = await resume();
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, new RegExp(`in use by pid ${owner.pid}`));

    // Overdue after its stall bound (1 s idle + slack) and the margin: then one resume takes it over.
    const stoppedAt = performance.now();
    let taken;
    while (performance.now() - stoppedAt < 90_000) {
      await sleep(2_000);
      const attempt = await resume();
      if (attempt.code !== 2) {
        taken = attempt;
        break;
      }
      assert.match(attempt.stderr, /in use by pid/);
    }
    assert.ok(taken, "the wedged owner's session was never taken over");
    resumed = true;
    assert.equal(taken.code, 0, taken.stderr);
    const takenResult = JSON.parse(taken.stdout);
    assert.equal(takenResult.final, "taken over");

    // The owner wakes to a complete answer: it must not store it, nor record its ending over the taker's.
    server.release();
    Deno.kill(owner.pid, "SIGCONT");
    const done = await ownerOutput;
    const stdout = new TextDecoder().decode(done.stdout);
    const stderr = new TextDecoder().decode(done.stderr);
    assert.equal(done.code, 1, stderr);
    const result = JSON.parse(stdout);
    assert.equal(result.status, "failed");
    assert.equal(result.terminal_reason, "stalled");

    const shown = await hermes(["sessions", "show", id, "--json"], { home: dir });
    assert.equal(shown.code, 0, shown.stderr);
    const session = JSON.parse(shown.stdout);
    const contents = JSON.stringify(session);
    assert.doesNotMatch(contents, /late answer/, "the woken owner stored nothing");
    assert.match(contents, /taken over/);
    assert.match(contents, /"status":\s*"success"/, "the taker's ending stands");
  } finally {
    if (!resumed) {
      try {
        Deno.kill(owner.pid, "SIGKILL");
      } catch {
        // already gone
      }
      await ownerOutput.catch(() => {});
    }
  }
});
