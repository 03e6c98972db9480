/**
 * Contract: labels are stored with a session; each model call is one row (time, provider, model, tokens, cost)
 * attributed to the session's root with its job and labels; `costReport` groups them by job, model, UTC day
 * and label within a time range; rows outlive their session.
 */
import assert from "node:assert/strict";
import type { CostGroup, Store, UsageDelta } from "../../../runtime/store/store.ts";
import { type OpenStore, SetClock } from "./_testing.ts";

const DAY = 86_400_000;

function call(tokens: number, cost: number | null, model = "gpt-4.1"): UsageDelta {
  return {
    turns: 1,
    prompt_tokens: tokens,
    completion_tokens: tokens / 10,
    cached_tokens: tokens / 2,
    cache_write_tokens: 1,
    reasoning_tokens: tokens / 50,
    cost_usd: cost,
    provider: "openai",
    model,
  };
}

/** Only what a test compares: the keys, calls, sessions, input tokens, cost and unpriced calls. */
function brief(groups: CostGroup[]) {
  return groups.map((g) => [...g.keys, g.calls, g.sessions, g.input_tokens, g.cost_usd, g.unpriced_calls]);
}

async function seed(store: Store, clock: SetClock) {
  const a = await store.createSession({ job: "triage", labels: { repository: "o/a", team: "x" } });
  const b = await store.createSession({ job: "triage", labels: { repository: "o/b" } });
  const c = await store.createSession({ job: "deploy" });
  await store.addUsage(a.id, call(1000, 0.5));
  await store.addUsage(b.id, call(200, 0.25, "gpt-4.1-mini"));
  clock.at += DAY;
  await store.addUsage(a.id, call(3000, 1.5));
  await store.addUsage(c.id, call(100, null, "local"));
  clock.at += DAY;
  await store.addUsage(c.id, call(50, 0.125, "local"));
  return { a, b, c };
}

export function costContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: labels are stored with the session and shown in its summary`, async () => {
    await using fx = await open();
    const labels = { "ci.repository": "octo/repo", "ci.run_id": "42", team: "infra" };
    const s = await fx.store.createSession({ job: "j", labels });
    assert.deepEqual((await fx.store.getSession(s.id))!.labels, labels);
    assert.deepEqual((await fx.store.getSessionSummary(s.id))!.labels, labels);
    const plain = await fx.store.createSession({ job: "j" });
    assert.deepEqual((await fx.store.getSession(plain.id))!.labels, {});
    const listed = (await fx.store.listSessionsJson()).map((j) => JSON.parse(j));
    assert.deepEqual(
      listed.map((row) => row.labels).sort((x, y) => Object.keys(x).length - Object.keys(y).length),
      [
        {},
        labels,
      ],
    );
  });

  Deno.test(`${name}: costReport totals every call, and groups by job, model, day and label`, async () => {
    const clock = new SetClock(Date.UTC(2026, 0, 1, 12));
    await using fx = await open({ clock });
    await seed(fx.store, clock);
    const [total] = await fx.store.costReport({ by: [] });
    assert.deepEqual(total, {
      keys: [],
      calls: 5,
      sessions: 3,
      input_tokens: 4350,
      cached_tokens: 2175,
      cache_write_tokens: 5,
      output_tokens: 435,
      reasoning_tokens: 87,
      cost_usd: 2.375,
      unpriced_calls: 1,
    });
    assert.deepEqual(brief(await fx.store.costReport({ by: ["job"] })), [
      ["deploy", 2, 1, 150, 0.125, 1],
      ["triage", 3, 2, 4200, 2.25, 0],
    ]);
    assert.deepEqual(brief(await fx.store.costReport({ by: ["model"] })), [
      ["gpt-4.1", 2, 1, 4000, 2, 0],
      ["gpt-4.1-mini", 1, 1, 200, 0.25, 0],
      ["local", 2, 1, 150, 0.125, 1],
    ]);
    assert.deepEqual(brief(await fx.store.costReport({ by: ["day"] })), [
      ["2026-01-01", 2, 2, 1200, 0.75, 0],
      ["2026-01-02", 2, 2, 3100, 1.5, 1],
      ["2026-01-03", 1, 1, 50, 0.125, 0],
    ]);
    // A call of a session without the label is grouped under null, last.
    assert.deepEqual(brief(await fx.store.costReport({ by: ["label:repository"] })), [
      ["o/a", 2, 1, 4000, 2, 0],
      ["o/b", 1, 1, 200, 0.25, 0],
      [null, 2, 1, 150, 0.125, 1],
    ]);
    assert.deepEqual(brief(await fx.store.costReport({ by: ["job", "day"] })), [
      ["deploy", "2026-01-02", 1, 1, 100, 0, 1],
      ["deploy", "2026-01-03", 1, 1, 50, 0.125, 0],
      ["triage", "2026-01-01", 2, 2, 1200, 0.75, 0],
      ["triage", "2026-01-02", 1, 1, 3000, 1.5, 0],
    ]);
  });

  Deno.test(`${name}: costReport counts calls in [since, until) only`, async () => {
    const start = Date.UTC(2026, 0, 1, 12);
    const clock = new SetClock(start);
    await using fx = await open({ clock });
    await seed(fx.store, clock);
    assert.deepEqual(brief(await fx.store.costReport({ since: start + DAY, by: [] })), [[
      3,
      2,
      3150,
      1.625,
      1,
    ]]);
    assert.deepEqual(brief(await fx.store.costReport({ until: start + DAY, by: [] })), [[
      2,
      2,
      1200,
      0.75,
      0,
    ]]);
    assert.deepEqual(
      brief(await fx.store.costReport({ since: start + DAY, until: start + DAY + 1, by: ["job"] })),
      [["deploy", 1, 1, 100, 0, 1], ["triage", 1, 1, 3000, 1.5, 0]],
    );
    assert.deepEqual(await fx.store.costReport({ since: start + 10 * DAY, by: ["job"] }), []);
  });

  Deno.test(`${name}: a call of a child session counts for its root's job and labels, once`, async () => {
    await using fx = await open();
    const root = await fx.store.createSession({ job: "lead", labels: { repository: "o/r" } });
    const child = await fx.store.createSession({ job: "helper", parent_id: root.id });
    const grandchild = await fx.store.createSession({ job: "helper", parent_id: child.id });
    await fx.store.addUsage(root.id, call(100, 1));
    await fx.store.addUsage(child.id, call(50, 0.5));
    await fx.store.addUsage(grandchild.id, call(50, 0.25));
    assert.deepEqual(brief(await fx.store.costReport({ by: ["job", "label:repository"] })), [
      ["lead", "o/r", 3, 1, 200, 1.75, 0],
    ]);
    assert.equal(await fx.store.jobSpend("lead", 0), 1.75);
    assert.equal(await fx.store.jobSpend("helper", 0), 0);
    // The child's own totals still count its own calls (its sessions show).
    assert.equal((await fx.store.getSession(child.id))!.cost_usd, 0.5);
  });

  Deno.test(`${name}: model calls outlive their session (money spent stays spent)`, async () => {
    await using fx = await open();
    const s = await fx.store.createSession({ job: "j", labels: { repository: "o/a" } });
    await fx.store.addUsage(s.id, call(100, 1));
    await fx.store.deleteSessions([s.id]);
    assert.deepEqual(brief(await fx.store.costReport({ by: ["label:repository"] })), [[
      "o/a",
      1,
      1,
      100,
      1,
      0,
    ]]);
  });

  Deno.test(`${name}: model calls copy to another store verbatim, once, identical ones included`, async () => {
    const clock = new SetClock(Date.UTC(2026, 0, 1, 12));
    await using from = await open({ clock });
    await using to = await open();
    const { a, b, c } = await seed(from.store, clock);
    // Two identical calls (same time, same counts) are two calls, in the copy too.
    await from.store.addUsage(c.id, call(50, 0.125, "local"));
    const child = await from.store.createSession({ job: "helper", parent_id: a.id });
    await from.store.addUsage(child.id, call(100, 0.5));
    await from.store.deleteSessions([c.id]);
    const roots = await from.store.modelCallSessions();
    assert.deepEqual(roots, [a.id, b.id, c.id].sort(), "a deleted session's calls too");
    let stored = 0;
    for (const id of roots) stored += await to.store.importModelCalls(await from.store.exportModelCalls(id));
    assert.equal(stored, 7);
    for (const id of roots) {
      assert.equal(await to.store.importModelCalls(await from.store.exportModelCalls(id)), 0);
    }
    for (const id of roots) {
      assert.deepEqual(await to.store.exportModelCalls(id), await from.store.exportModelCalls(id));
    }
    const calls = await to.store.exportModelCalls(a.id);
    assert.deepEqual(calls.map((r) => [r.caller_id, r.job, r.labels.repository, r.provider]), [
      [a.id, "triage", "o/a", "openai"],
      [a.id, "triage", "o/a", "openai"],
      [child.id, "triage", "o/a", "openai"],
    ]);
    for (const by of [["job", "day"], ["label:repository", "model"]] as const) {
      assert.deepEqual(await to.store.costReport({ by }), await from.store.costReport({ by }));
    }
    assert.deepEqual(await to.store.jobSpend("deploy", 0), await from.store.jobSpend("deploy", 0));
  });

  Deno.test(`${name}: costReport refuses a label key that is not one`, async () => {
    await using fx = await open();
    await assert.rejects(fx.store.costReport({ by: ['label:a"b'] }), /label key/);
    await assert.rejects(fx.store.costReport({ by: ["label:"] }), /label key/);
  });
}
