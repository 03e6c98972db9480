/** Contract: full-text search over every stored message, compacted rows and archived sessions marked. */
import assert from "node:assert/strict";
import type { SearchRequest } from "../../../runtime/store/store.ts";
import { compactRows, type OpenStore, SetClock } from "./_testing.ts";

const words = (...terms: string[]): SearchRequest["terms"] =>
  terms.map((t) => ({ words: t.split(" "), prefix: false }));

export function searchContract(name: string, open: OpenStore): void {
  Deno.test(`${name}: search matches words (ANDed), phrases and prefixes, and marks compacted rows`, async () => {
    const clock = new SetClock();
    await using fx = await open({ clock });
    const { store } = fx;
    const s = await store.createSession({ job: "ops" });
    const rows = await store.appendMessages(s.id, [
      { role: "user", content: "the rollback of the payments canary failed twice" },
      { role: "assistant", content: "summary: payments canary was rolled back" },
      { role: "user", content: "unrelated" },
    ]);
    await compactRows(store, s.id, [rows[0]!.id]);
    const search = (terms: SearchRequest["terms"], more: Partial<SearchRequest> = {}) =>
      store.searchMessages({ terms, limit: 20, order: "newest", ...more });

    const phrase = await search(words("payments canary failed"));
    assert.deepEqual(phrase, [{
      session_id: s.id,
      job: "ops",
      session_archived: false,
      seq: 1,
      role: "user",
      kind: "message",
      active: false,
      created_at: clock.at,
      content: "the rollback of the payments canary failed twice",
    }]);
    assert.deepEqual((await search(words("canary", "payments"))).map((h) => [h.seq, h.active]), [[2, true], [
      1,
      false,
    ]]);
    assert.deepEqual(await search(words("canary payments")), [], "a phrase keeps its word order");
    assert.deepEqual((await search([{ words: ["roll"], prefix: true }])).map((h) => h.seq), [2, 1]);
    assert.deepEqual(await search(words("roll")), [], "without a prefix only whole words match");
  });

  Deno.test(`${name}: search filters by job, limits, orders, and sees archived sessions and new rows`, async () => {
    await using fx = await open();
    const { store } = fx;
    const a = await store.createSession({ job: "a" });
    const b = await store.createSession({ job: "b" });
    await store.appendMessages(a.id, [
      { role: "user", content: "canary canary canary" },
      { role: "user", content: "a long message that mentions the canary only once among many other words" },
    ]);
    await store.appendMessages(b.id, [{ role: "user", content: "canary in b" }]);
    await store.archiveSessions([b.id]);
    const search = (more: Partial<SearchRequest> = {}) =>
      store.searchMessages({ terms: words("canary"), limit: 20, order: "newest", ...more });
    assert.deepEqual((await search()).map((h) => [h.job, h.seq, h.session_archived]), [
      ["b", 1, true],
      ["a", 2, false],
      ["a", 1, false],
    ]);
    assert.deepEqual((await search({ job: "a" })).map((h) => h.seq), [2, 1]);
    assert.equal((await search({ limit: 1 })).length, 1);
    assert.deepEqual((await search({ job: "a", order: "relevance" })).map((h) => h.seq), [1, 2]);
    await store.appendMessages(a.id, [{ role: "assistant", content: "canary again" }]);
    assert.deepEqual(
      (await search({ job: "a" })).map((h) => h.seq),
      [3, 2, 1],
      "rows appended since are found",
    );
  });

  Deno.test(`${name}: syncSearchIndex catches up once; a deleted session leaves the index`, async () => {
    await using fx = await open();
    const { store } = fx;
    const a = await store.createSession({ job: "a" });
    const b = await store.createSession({ job: "b" });
    await store.appendMessages(a.id, [{ role: "user", content: "pipeline one" }]);
    await store.appendMessages(b.id, [{ role: "user", content: "pipeline two" }, {
      role: "user",
      content: "x",
    }]);
    assert.equal(await store.syncSearchIndex(), 3);
    assert.equal(await store.syncSearchIndex(), 0);
    await store.deleteSessions([a.id]);
    const hits = await store.searchMessages({ terms: words("pipeline"), limit: 20, order: "newest" });
    assert.deepEqual(hits.map((h) => h.session_id), [b.id]);
  });
}
