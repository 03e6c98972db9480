/**
 * Concurrent `hermes run --resume SID -p …` from several real processes, trial after trial, on one store:
 * exactly one process runs each trial's turn, the others exit 2 at once naming it, and the transcript stays
 * well-formed. The model call of the process that won is held until every other process has exited (or
 * sent a model call of its own, which would be the bug), so a slow machine cannot make two runs sequential.
 */
import assert from "node:assert/strict";
import { spawnHermes, tempDir, writeFiles } from "./cli.ts";
import { type ChatRequestBody, startOpenAIServer } from "./openai_server.ts";

export interface RaceOptions {
  /** Extra global flags naming the store (`--db URL`); none: the home's SQLite file. */
  storeArgs: string[];
  /** Sessions raced at the same time, each with its own trials in sequence. */
  lanes: number;
  trialsPerLane: number;
  racers: number;
}

export interface RaceReport {
  trials: number;
  /** Processes that ran a turn, per trial: every entry must be 1. */
  runners: number[];
}

type Message = NonNullable<ChatRequestBody["messages"]>[number];

/** Every tool call directly followed by its results, before any other message. */
export function assertWellFormed(messages: readonly Message[], label: string): void {
  let open: string[] = [];
  for (const [i, m] of messages.entries()) {
    if (m.role === "tool") {
      assert.ok(open.includes(m.tool_call_id ?? ""), `${label}: message ${i} answers no open tool call`);
      open = open.filter((id) => id !== m.tool_call_id);
      continue;
    }
    assert.deepEqual(open, [], `${label}: message ${i} (${m.role}) comes before the results of ${open}`);
    const calls = (m.tool_calls ?? []) as { id: string }[];
    open = calls.map((c) => c.id);
  }
  assert.deepEqual(open, [], `${label}: the last tool calls have no results`);
}

export async function raceResumes(options: RaceOptions): Promise<RaceReport> {
  const runners: number[] = [];
  await Promise.all(
    Array.from({ length: options.lanes }, (_, lane) => raceLane(lane, options, runners)),
  );
  return { trials: runners.length, runners };
}

async function raceLane(lane: number, options: RaceOptions, runners: number[]): Promise<void> {
  let release: (() => void) | undefined;
  let held: Promise<void> = Promise.resolve();
  const server = await startOpenAIServer({ gate: () => held });
  try {
    const dir = await writeFiles(await tempDir(), {
      "job.yaml": `name: race\nmodel: { name: m, base_url: "${server.url}", api_key_env: K }\n` +
        `prompt: start\ntools: { list_dir: { paths: ["."] } }\n`,
    });
    const run = (args: string[]) =>
      spawnHermes([...options.storeArgs, "run", ...args, "--output", "json"], {
        cwd: dir,
        home: dir,
        env: { K: "k" },
      });
    server.replace([{ content: "started" }]);
    const first = await output(run(["job.yaml"]));
    assert.equal(first.code, 0, first.stderr);
    const id = JSON.parse(first.stdout).session_id as string;

    for (let trial = 0; trial < options.trialsPerLane; trial++) {
      const prompt = `lane ${lane} trial ${trial}`;
      server.replace([
        { match: prompt, tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
        { match: prompt, content: `done ${prompt}` },
      ]);
      ({ promise: held, resolve: release } = Promise.withResolvers<void>());
      const before = server.requests.length;
      const children = Array.from({ length: options.racers }, () => run(["--resume", id, "-p", prompt]));
      const results = children.map((child) => output(child));
      const exited = results.map(() => false);
      results.forEach((r, i) => r.then(() => exited[i] = true));
      // Every racer has either exited or is waiting in its first model call.
      while (exited.filter(Boolean).length + (server.requests.length - before) < options.racers) {
        await new Promise((r) => setTimeout(r, 20));
      }
      release!();
      held = Promise.resolve();
      const done = await Promise.all(results);
      const winners = done.flatMap((r, i) => r.code === 0 ? [i] : []);
      runners.push(winners.length);
      const label = `${prompt} (${options.storeArgs.length ? "postgres" : "sqlite"})`;
      assert.equal(winners.length, 1, `${label}: one process runs; exits ${done.map((r) => r.code)}`);
      const winner = children[winners[0]!]!;
      assert.equal(JSON.parse(done[winners[0]!]!.stdout).final, `done ${prompt}`);
      for (const [i, r] of done.entries()) {
        if (i === winners[0]) continue;
        assert.equal(r.code, 2, `${label}: a loser exits 2: ${r.stderr}`);
        // A loser's result object says it did not run (every exit path reports, for CI).
        const lost = JSON.parse(r.stdout);
        assert.deepEqual([lost.exit_code, lost.turns, lost.final], [2, 0, ""], "a loser ran nothing");
        assert.match(
          r.stderr,
          new RegExp(`Cannot resume session ${id}: it is in use by pid ${winner.pid} on `),
        );
      }
      assert.equal(
        server.requests.length - before,
        2,
        `${label}: the winner's two model calls, nobody else's`,
      );
      for (const request of server.requests.slice(before)) assertWellFormed(request.messages ?? [], label);
    }
    // The stored transcript, as the next run would send it: each trial's prompt once, calls answered.
    server.replace([{ content: "final" }]);
    const last = await output(run(["--resume", id, "-p", "check"]));
    assert.equal(last.code, 0, last.stderr);
    const sent = server.requests.at(-1)!.messages ?? [];
    assertWellFormed(sent, `lane ${lane} final`);
    const users = sent.filter((m) => m.role === "user").map((m) => m.content);
    assert.deepEqual(users, [
      "start",
      ...Array.from({ length: options.trialsPerLane }, (_, t) => `lane ${lane} trial ${t}`),
      "check",
    ]);
  } finally {
    release?.();
    await server.close();
  }
}

async function output(child: Deno.ChildProcess) {
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout), stderr: decoder.decode(stderr) };
}
