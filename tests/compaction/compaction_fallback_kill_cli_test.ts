/**
 * SIGKILL during the deterministic fallback, then `hermes run --resume`: the real CLI plays the
 * corpus at 16k against a summary model that answers HTTP 500, so every hard compaction falls back. The run is
 * killed while the fallback pass holds the lease (when its summary request arrives) or right after the
 * fallback committed; the resumed run finishes every turn. Nothing is lost — every user turn is stored once,
 * every replaced row archived — and the transcript is valid: no tool call without its result, at most one
 * summary or marker, no lease left behind, every request of the resumed run accepted by a strict template.
 */
import assert from "node:assert/strict";
import { linesOf, orphanProblems, roleProblems } from "../../runtime/compaction/_testing.ts";
import { openSqliteStore } from "../../runtime/store/sqlite/sqlite_store.ts";
import { hermes, spawnHermes, tempDir } from "../_testing/cli.ts";
import { startCorpusServer, toolHeavyCorpus } from "../corpus/mod.ts";

const TURNS = 60;
const WINDOW = 16_000;

type KillPoint = "summary_request" | "after_fallback";

async function killAndResume(point: KillPoint) {
  const corpus = toolHeavyCorpus({ turns: TURNS });
  let child: Deno.ChildProcess | undefined;
  let killed = false;
  const problems: string[] = [];
  const kill = () => {
    if (killed || !child) return;
    killed = true;
    child.kill("SIGKILL");
  };
  await using server = await startCorpusServer({
    corpus,
    window: WINDOW,
    summary: "http500",
    inspect: (body, record) => {
      if (record.kind === "summary" && point === "summary_request") kill();
      if (record.kind === "agent" && killed) {
        const messages = body.messages ?? [];
        for (const p of [...roleProblems(messages), ...orphanProblems(messages as never)]) {
          problems.push(`resumed request ${record.index}: ${p}`);
        }
      }
    },
  });
  const dir = await tempDir("hermes-fallback-kill-");
  try {
    await corpus.writeTo(dir, { base_url: server.url, window: WINDOW });
    child = spawnHermes(["run", "job.yaml", "--output", "stream-json"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    const stderr = child.stderr.pipeTo(new WritableStream());
    for await (const line of linesOf(child.stdout)) {
      let event;
      try {
        event = JSON.parse(line);
      } catch (error) {
        // SIGKILL can cut the line being written (a large tool.result goes out in pieces): only then.
        if (killed) break;
        throw error;
      }
      if (point === "after_fallback" && event.type === "compaction.blocked" && event.fallback) kill();
    }
    await stderr;
    const status = await child.status;
    assert.ok(killed, `the run reached the ${point} kill point`);
    assert.equal(status.signal, "SIGKILL");

    const resumed = await hermes(["run", "--resume", "latest", "--output", "json"], {
      cwd: dir,
      home: dir,
      env: { CORPUS_KEY: "k" },
    });
    assert.equal(resumed.code, 0, resumed.stderr.slice(-1500));
    const result = JSON.parse(resumed.stdout);
    assert.match(result.final, new RegExp(`^Turn ${TURNS}: `));
    assert.deepEqual(problems, []);
    assert.equal(server.stats().over_window, 0);

    let fallbacks = { id: "", fellBack: 0, hard: 0 };
    const store = openSqliteStore(`${dir}/state.db`);
    try {
      const [session] = await store.listSessions({});
      const id = session!.id;
      const all = await store.allMessages(id);
      for (const [i, prompt] of corpus.prompts.entries()) {
        const stored = all.filter((m) => m.role === "user" && m.content === prompt);
        assert.equal(stored.length, 1, `turn ${i + 1} is stored exactly once`);
      }
      const active = await store.activeMessages(id);
      assert.deepEqual(orphanProblems(active), [], "the transcript is valid");
      assert.ok(active.filter((m) => m.kind === "summary").length <= 1, "at most one summary or marker");
      const archived = all.filter((m) => !m.active);
      assert.ok(archived.length > 0, "the fallback archived what it dropped");
      assert.equal(await store.readLease(id), undefined, "no lease is left behind");
      const log = await store.compactionLog(id);
      const fellBack = log.filter((r) => r.outcome === "committed" && r.detail.fallback).length;
      assert.ok(fellBack >= 1, "a fallback committed");
      fallbacks = {
        id,
        fellBack,
        hard: log.filter((r) => r.outcome === "committed" && r.kind === "summarize").length,
      };
    } finally {
      await store.close();
    }
    // The report counts the fallbacks apart from the hard compactions they are logged as.
    const json = await hermes(["sessions", "compactions", fallbacks.id, "--json"], { home: dir });
    const report = JSON.parse(json.stdout);
    assert.equal(report.fallbacks, fallbacks.fellBack);
    assert.equal(report.hard_compactions, fallbacks.hard);
    const text = await hermes(["sessions", "compactions", fallbacks.id], { home: dir });
    assert.match(
      text.stdout,
      new RegExp(`\\(hard ${fallbacks.hard} of which ${fallbacks.fellBack} fallbacks?,`),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("fallback + SIGKILL: killed while the fallback pass holds the lease, --resume loses nothing", async () => {
  await killAndResume("summary_request");
});

Deno.test("fallback + SIGKILL: killed right after the fallback committed, --resume loses nothing", async () => {
  await killAndResume("after_fallback");
});
