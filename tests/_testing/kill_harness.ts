/**
 * Kills a real `hermes run` with SIGKILL at chosen points of its steps, resumes it with `--resume latest`
 * until it finishes, and checks the store afterwards (tests/crash/kill_schedule_cli_test.ts and the PostgreSQL
 * twin). The model is a function of the transcript behind the scripted OpenAI server: each step asks for two
 * calls of a tool that appends its call id to a file (the side effect), calls again a tool whose result says
 * it was interrupted, then answers. A kill lands while a model call of a step is in flight (`request`), or a
 * given time after a model answer for the step was sent (`response`: storing it, the tools, their results,
 * the next step).
 */
import assert from "node:assert/strict";
import type { StoredMessage } from "../../runtime/core/types.ts";
import type { StepRecord, Store } from "../../runtime/store/store.ts";
import { spawnHermes, tempDir, writeFiles } from "./cli.ts";
import { assertWellFormed } from "./claim_race.ts";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { type ChatRequestBody, startOpenAIServer } from "./openai_server.ts";

export type KillPoint = { at: "request" } | { at: "response"; delayMs: number };

export interface KillRun {
  /** The step prompts, in order. */
  steps: string[];
  /** Kills planned for each step (by index), used in order as the step's model calls happen. */
  kills: KillPoint[][];
  /** Extra global flags naming the store (`--db URL`); none: the home's SQLite file. */
  storeArgs: string[];
  /** Opens the store the runs used, to check it. */
  openStore: (home: string) => Promise<Store>;
}

export interface KillReport {
  sessionId: string;
  /** Processes started (the first run and every resume). */
  processes: number;
  /** Kills that hit a live process. */
  kills: number;
  steps: StepRecord[];
  messages: StoredMessage[];
  /** Tool call ids in the order the tool ran them. */
  effects: string[];
  requests: ChatRequestBody[];
  /** What the last run printed on stderr. */
  stderr: string;
}

const INTERRUPTED = /^error: (interrupted, may have run|the tool call did not run)/;
const MAX_ROUNDS = 3;

/** A deterministic pseudo-random source (mulberry32): the same seed, the same schedule. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 1–3 kills per step at random points. */
export function randomSchedule(seed: number, steps: number): KillPoint[][] {
  const next = random(seed);
  return Array.from({ length: steps }, () =>
    Array.from(
      { length: 1 + Math.floor(next() * 3) },
      (): KillPoint =>
        next() < 0.4 ? { at: "request" } : { at: "response", delayMs: Math.floor(next() * 400) },
    ));
}

export async function runWithKills(plan: KillRun): Promise<KillReport> {
  const pending = plan.kills.map((list) => [...list]);
  let child: Deno.ChildProcess | undefined;
  let kills = 0;
  let calls = 0;
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const kill = async (target: Deno.ChildProcess) => {
    if (target !== child) return;
    try {
      target.kill("SIGKILL");
      kills++;
    } catch {
      // it had exited already
    }
    await target.status;
  };
  const stepOf = (body: ChatRequestBody): number => {
    const users = (body.messages ?? []).filter((m) => m.role === "user");
    const text = String(users.at(-1)?.content ?? "");
    return plan.steps.findLastIndex((s) => text.split("\n\n").includes(s));
  };
  const server = await startOpenAIServer({
    gate: async (body) => {
      const kill_ = pending[stepOf(body)]?.shift();
      const target = child;
      if (!kill_ || !target) return;
      if (kill_.at === "request") await kill(target);
      else {
        const timer = setTimeout(() => {
          timers.delete(timer);
          kill(target);
        }, kill_.delayMs);
        timers.add(timer);
      }
    },
    respond: (body) => answer(body, plan.steps, () => `c${++calls}`),
  });
  const dir = await writeFiles(await tempDir(), {
    "job.yaml": [
      "name: kills",
      `model: { name: m, base_url: "${server.url}", api_key_env: K }`,
      `steps: ${JSON.stringify(plan.steps)}`,
      "tools:",
      '  shell: { allow: ["./effect.sh *"], timeout: 60s, sandbox: { read: ["."], write: ["."] } }',
      "",
    ].join("\n"),
    "effect.sh": '#!/bin/sh\necho "$1" >> effects.log\nsleep "$2"\n',
  });
  await Deno.chmod(`${dir}/effect.sh`, 0o755);
  try {
    let processes = 0;
    let args = ["run", "job.yaml"];
    let final: { code: number; stdout: string; stderr: string };
    while (true) {
      child = spawnHermes([...plan.storeArgs, ...args, "--output", "json"], {
        cwd: dir,
        home: dir,
        env: { K: "k" },
      });
      processes++;
      const out = await child.output();
      final = {
        code: out.code,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: new TextDecoder().decode(out.stderr),
      };
      if (out.signal !== "SIGKILL") break;
      args = ["run", "--resume", "latest"];
      assert.ok(processes < 50, "the run keeps being killed");
    }
    child = undefined;
    const store = await plan.openStore(dir);
    try {
      // A kill that lands after the run recorded its ending leaves a finished session: the resume then has
      // nothing left to run (exit 2, as for any finished session), and the stored ending is the result.
      const endedBeforeKill = processes > 1 && final.code === 2 && /nothing left to run/.test(final.stderr);
      const result = endedBeforeKill ? await storedResult(store) : JSON.parse(final.stdout);
      if (!endedBeforeKill) assert.equal(final.code, 0, `the last run finishes: ${final.stderr}`);
      assert.equal(result.final, `done ${plan.steps.at(-1)}`);
      const effects = (await Deno.readTextFile(`${dir}/effects.log`).catch(() => "")).split("\n")
        .filter((line) => line !== "");
      return {
        sessionId: result.session_id,
        processes,
        kills,
        steps: await store.sessionSteps(result.session_id),
        messages: await store.allMessages(result.session_id),
        effects,
        requests: server.requests,
        stderr: final.stderr,
      };
    } finally {
      await store.close();
    }
  } finally {
    for (const timer of timers) clearTimeout(timer);
    await server.close();
  }
}

/** The ending of the one session in `store`, as the run that was killed after recording it saw it. */
async function storedResult(store: Store): Promise<{ session_id: string; final: string }> {
  const [session, ...others] = await store.listSessions();
  assert.ok(session && others.length === 0, "one session");
  assert.equal(session.status, "success", "the killed run had recorded its ending");
  const messages = await store.allMessages(session.id);
  const last = messages.findLast((m) => m.role === "assistant");
  return { session_id: session.id, final: last?.content ?? "" };
}

/**
 * The model: a step's user turn gets two tool calls; a round with an interrupted call gets that call issued
 * again under a new id (at most MAX_ROUNDS rounds); otherwise it answers `done STEP`.
 */
function answer(body: ChatRequestBody, steps: string[], newId: () => string): ScriptEntry {
  const messages = body.messages ?? [];
  const userAt = messages.findLastIndex((m) => m.role === "user");
  const text = String(messages[userAt]?.content ?? "");
  const step = steps.findLast((s) => text.split("\n\n").includes(s)) ?? "?";
  const after = messages.slice(userAt + 1);
  const rounds = after.filter((m) => m.role === "assistant" && m.tool_calls).length;
  const call = (seconds: string) => {
    const id = newId();
    return { id, name: "shell", arguments: { command: `./effect.sh ${id} ${seconds}` } };
  };
  if (rounds === 0) return { tool_calls: [call("0.2"), call("0")] };
  const lastResults = after.slice(after.findLastIndex((m) => m.role === "assistant") + 1);
  const interrupted = lastResults.filter((m) => INTERRUPTED.test(String(m.content)));
  if (interrupted.length && rounds < MAX_ROUNDS) return { tool_calls: interrupted.map(() => call("0.1")) };
  return { content: `done ${step}` };
}

/**
 * The invariants after any kill schedule: every step stored once and sent once, each done with its user row
 * recorded; every tool call answered right after it (in the store and in every request); a tool call whose
 * result is stored ran exactly once, one reported not started never ran, one reported interrupted at most once.
 */
export function checkInvariants(report: KillReport, steps: readonly string[], label: string): void {
  const users = report.messages.filter((m) => m.role === "user");
  assert.deepEqual(users.map((m) => m.content), steps, `${label}: each step stored once, in order`);
  assert.deepEqual(
    report.steps.map((r) => [r.input, r.status, r.message_seq]),
    users.map((m) => [m.content, "done", m.seq]),
    `${label}: each step record done, naming its user row`,
  );
  assertWellFormed(report.messages, `${label}: stored transcript`);
  for (const [i, request] of report.requests.entries()) {
    const sent = request.messages ?? [];
    assertWellFormed(sent, `${label}: request ${i}`);
    const lines = sent.filter((m) => m.role === "user").flatMap((m) => String(m.content).split("\n\n"));
    for (const step of steps) {
      assert.ok(lines.filter((l) => l === step).length <= 1, `${label}: request ${i} sends "${step}" twice`);
    }
  }
  const runs = new Map<string, number>();
  for (const id of report.effects) runs.set(id, (runs.get(id) ?? 0) + 1);
  const calls = new Set(report.messages.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
  for (const id of runs.keys()) assert.ok(calls.has(id), `${label}: tool call ${id} ran but is not stored`);
  for (const result of report.messages.filter((m) => m.role === "tool")) {
    const id = result.tool_call_id!;
    const ran = runs.get(id) ?? 0;
    if (result.content.startsWith("error: the tool call did not run")) {
      assert.equal(ran, 0, `${label}: ${id} is reported not started but ran`);
    } else if (result.content.startsWith("error: interrupted")) {
      assert.ok(ran <= 1, `${label}: ${id} ran ${ran} times`);
    } else {
      assert.equal(ran, 1, `${label}: ${id} has a result and ran ${ran} times`);
    }
  }
}
