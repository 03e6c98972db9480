import assert from "node:assert/strict";
import { ValidationError } from "../core/errors.ts";
import { addSessions, deactivate, tempStore } from "./_testing.ts";
import { deleteSessions } from "./remove.ts";
import { searchMessages } from "./search.ts";

Deno.test("search finds a phrase in a compacted (inactive) row among 1 000 sessions and marks it", async () => {
  await using fx = await tempStore();
  const sessions = await addSessions(fx, 1000);
  const target = sessions[417]!;
  await fx.store.appendMessages(target.id, [{
    role: "user",
    content: "the rollback of the payments canary failed twice",
  }]);
  await fx.store.appendMessages(target.id, [{
    role: "assistant",
    content: "summary: payments canary was rolled back",
  }]);
  deactivate(fx.store, target.id, [4]);

  const hits = await searchMessages(fx.store, '"payments canary failed"');
  assert.equal(hits.length, 1);
  assert.equal(hits[0]!.session_id, target.id);
  assert.equal(hits[0]!.seq, 4);
  assert.equal(hits[0]!.active, false);
  assert.equal(hits[0]!.job, target.job);
  assert.match(hits[0]!.snippet, /«payments canary failed»/);

  // Unquoted words are ANDed, in any order: both rows mention payments and canary.
  const both = await searchMessages(fx.store, "canary payments");
  assert.deepEqual(both.map((h) => h.seq).sort(), [4, 5]);
  assert.ok(both.find((h) => h.seq === 5)!.active);
});

Deno.test("search filters by job, honours the limit and accepts a prefix", async () => {
  await using fx = await tempStore();
  const sessions = await addSessions(fx, 200);
  const hits = await searchMessages(fx.store, "pipeline", { job: "deploy", limit: 1000 });
  assert.equal(hits.length, sessions.filter((s) => s.job === "deploy").length);
  assert.ok(hits.every((h) => h.job === "deploy"));
  assert.equal((await searchMessages(fx.store, "pipeline", { limit: 5 })).length, 5);
  assert.equal((await searchMessages(fx.store, "pipe*", { limit: 1000 })).length, 200);
  assert.equal((await searchMessages(fx.store, "pipe", { limit: 1000 })).length, 0);
  const archived = await searchMessages(fx.store, `"build number 9 of"`);
  assert.equal(archived.length, 1);
  assert.equal(archived[0]!.session_archived, true);
});

Deno.test("search treats FTS5 syntax as plain text and rejects an empty query", async () => {
  await using fx = await tempStore();
  await fx.store.appendMessages((await fx.store.createSession({ job: "x" })).id, [
    { role: "user", content: "run NOT (the) tests AND deploy: now" },
  ]);
  assert.equal((await searchMessages(fx.store, 'NOT (the) AND deploy: "unclosed')).length, 0);
  assert.equal((await searchMessages(fx.store, "tests AND deploy:")).length, 1);
  await assert.rejects(searchMessages(fx.store, ' " ( '), ValidationError);
});

Deno.test("messages of a deleted session leave the index", async () => {
  await using fx = await tempStore();
  const [a, b] = await addSessions(fx, 2);
  assert.equal((await searchMessages(fx.store, "pipeline")).length, 2);
  await deleteSessions(fx.store, [a!.id]);
  assert.deepEqual((await searchMessages(fx.store, "pipeline")).map((h) => h.session_id), [b!.id]);
});

Deno.test("search lists newest first by default, best match first with order relevance", async () => {
  await using fx = await tempStore();
  const id = (await fx.store.createSession({ job: "x" })).id;
  await fx.store.appendMessages(id, [
    { role: "user", content: "canary canary canary" },
    { role: "user", content: "a long message that mentions the canary only once among many other words" },
    { role: "user", content: "no match here" },
  ]);
  assert.deepEqual((await searchMessages(fx.store, "canary")).map((h) => h.seq), [2, 1]);
  assert.deepEqual((await searchMessages(fx.store, "canary", { order: "relevance" })).map((h) => h.seq), [
    1,
    2,
  ]);
  // Rows appended after a search are indexed by the next one.
  await fx.store.appendMessages(id, [{ role: "assistant", content: "canary again" }]);
  assert.deepEqual((await searchMessages(fx.store, "canary")).map((h) => h.seq), [4, 2, 1]);
});
