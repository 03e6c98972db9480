/**
 * Contract: the commit of a compaction re-checks the lease and writes all or nothing; later appends stay
 * after the compacted set; the log records every pass (committed or not) with its measures and the
 * session's running totals; a row may be appended archived (the full text of a tool result cut at insertion).
 */
import assert from "node:assert/strict";
import type {
  CommitRequest,
  CompactionLogRow,
  PassMeasures,
  TranscriptRow,
} from "../../../runtime/store/store.ts";
import { liveHolder, type OpenStore } from "./_testing.ts";

const TTL = 60_000;
const NOW = Date.UTC(2026, 0, 1);

export function compactionContract(name: string, open: OpenStore): void {
  /** 14 messages and a held lease; the request replaces rows 5–10 by one summary. */
  const setup = async () => {
    const fx = await open();
    const { store } = fx;
    const sessionId = (await store.createSession({ job: "j" })).id;
    await store.appendMessages(
      sessionId,
      Array.from(
        { length: 14 },
        (_, i) => ({ role: i % 2 ? "assistant" as const : "user" as const, content: `m${i}` }),
      ),
    );
    const holder = liveHolder();
    await store.acquireLease({ sessionId, holder, now: NOW, ttlMs: TTL });
    const active = await store.activeMessages(sessionId);
    const middle = active.slice(4, 10);
    const request: CommitRequest = {
      sessionId,
      nonce: holder.nonce,
      now: NOW,
      kind: "summarize",
      reason: "manual",
      archive: middle.map((m) => m.id),
      insert: [{ role: "user", content: "[summary] s", kind: "summary", pos: middle[0]!.pos }],
      beforeTokens: 1000,
      detail: { watermark: 14 },
      estimate: (rows) => rows.length,
    };
    return { fx, store, sessionId, active, middle, request };
  };

  Deno.test(`${name}: commit archives the middle, places the summary there, keeps later appends after it`, async () => {
    const { fx, store, sessionId, active, middle, request } = await setup();
    await using _ = fx;
    const late = await (await fx.connect()).appendMessages(sessionId, [
      { role: "user", content: "appended meanwhile 1" },
      { role: "assistant", content: "appended meanwhile 2" },
    ]);
    let estimated: readonly TranscriptRow[] = [];
    const result = await store.commitCompaction({ ...request, estimate: (rows) => (estimated = rows, 42) });
    assert.equal(result.committed, true);
    assert.equal(result.committed && result.afterTokens, 42);
    const after = await store.activeMessages(sessionId);
    assert.deepEqual(after.map((m) => m.id).filter((id) => id <= active.at(-1)!.id), [
      ...active.slice(0, 4).map((m) => m.id),
      ...active.slice(10).map((m) => m.id),
    ]);
    assert.deepEqual([after[4]!.kind, after[4]!.content, after[4]!.pos], [
      "summary",
      "[summary] s",
      middle[0]!.pos,
    ]);
    assert.deepEqual(
      after.slice(-2).map((m) => m.id),
      late.map((m) => m.id),
      "later appends follow the compacted set",
    );
    assert.deepEqual(
      estimated.map((r) => r.id),
      after.map((m) => m.id),
      "the estimate sees the committed transcript",
    );
    const archived = (await store.allMessages(sessionId)).filter((m) => !m.active);
    assert.deepEqual(archived.map((m) => m.id), middle.map((m) => m.id), "replaced rows are kept");
    const log = await store.compactionLog(sessionId);
    const expected: CompactionLogRow = {
      id: result.committed ? result.compactionId : 0,
      session_id: sessionId,
      kind: "summarize",
      reason: "manual",
      outcome: "committed",
      before_tokens: 1000,
      after_tokens: 42,
      messages_removed: 5,
      created_at: NOW,
      detail: { watermark: 14 },
      threshold_tokens: null,
      window_tokens: null,
      occupancy: null,
      duration_ms: null,
      absorbed_messages: null,
      absorbed_tokens: null,
      summary_tokens: null,
      total_passes: 1,
      total_committed: 1,
      total_hard: 1,
      total_saved_tokens: 958,
    };
    assert.deepEqual(log, [expected]);
    assert.deepEqual(result.committed && result.log, expected, "the commit returns its log row");
    const seqs = (await store.allMessages(sessionId)).map((m) => m.seq);
    assert.equal(new Set(seqs).size, seqs.length, "the summary got a fresh seq");
  });

  Deno.test(`${name}: commit updates one state value in the same transaction`, async () => {
    const { fx, store, sessionId, request } = await setup();
    await using _ = fx;
    await store.setState(sessionId, "guard", { strikes: 1 });
    const seen: unknown[] = [];
    await store.commitCompaction({
      ...request,
      estimate: () => 7,
      state: { key: "guard", update: (current, after) => (seen.push(current, after), { strikes: 0, after }) },
    });
    assert.deepEqual(seen, [{ strikes: 1 }, 7]);
    assert.deepEqual(await store.getState(sessionId, "guard"), { strikes: 0, after: 7 });
  });

  Deno.test(`${name}: a state update that returns undefined leaves the value alone`, async () => {
    const { fx, store, sessionId, request } = await setup();
    await using _ = fx;
    const result = await store.commitCompaction({
      ...request,
      state: { key: "guard", update: () => undefined },
    });
    assert.equal(result.committed, true);
    assert.equal(await store.getState(sessionId, "guard"), undefined);
  });

  Deno.test(`${name}: commit with an expired lease writes nothing`, async () => {
    const { fx, store, sessionId, request } = await setup();
    await using _ = fx;
    const before = await store.allMessages(sessionId);
    const result = await store.commitCompaction({ ...request, now: NOW + TTL });
    assert.equal(result.committed, false);
    assert.match(!result.committed ? result.reason : "", /^the lease expired at /);
    assert.deepEqual(await store.allMessages(sessionId), before);
    assert.deepEqual(await store.compactionLog(sessionId), []);
    // The same commit one millisecond earlier succeeds.
    assert.equal((await store.commitCompaction({ ...request, now: NOW + TTL - 1 })).committed, true);
  });

  Deno.test(`${name}: commit with a lease taken over by another holder writes nothing`, async () => {
    const { fx, store, sessionId, request } = await setup();
    await using _ = fx;
    const before = await store.allMessages(sessionId);
    await store.acquireLease({ sessionId, holder: liveHolder(), now: NOW + TTL, ttlMs: TTL });
    const result = await store.commitCompaction(request);
    assert.match(!result.committed ? result.reason : "", /^the lease was taken over by pid \d+ on /);
    assert.deepEqual(await store.allMessages(sessionId), before);
    assert.deepEqual(await store.compactionLog(sessionId), []);
  });

  Deno.test(`${name}: commit with a released lease writes nothing`, async () => {
    const { fx, store, sessionId, request } = await setup();
    await using _ = fx;
    await store.releaseLease({ sessionId, nonce: request.nonce });
    const before = await store.allMessages(sessionId);
    const result = await store.commitCompaction(request);
    assert.match(!result.committed ? result.reason : "", /released or reclaimed/);
    assert.deepEqual(await store.allMessages(sessionId), before);
    assert.deepEqual(await store.compactionLog(sessionId), []);
  });

  Deno.test(`${name}: rows that are no longer active roll the whole commit back`, async () => {
    const { fx, store, sessionId, middle, request } = await setup();
    await using _ = fx;
    // Another compaction (under the same lease) replaced one of the rows first.
    const first = await store.commitCompaction({ ...request, archive: [middle[2]!.id], insert: [] });
    assert.equal(first.committed, true);
    const before = await store.allMessages(sessionId);
    const result = await store.commitCompaction({
      ...request,
      state: { key: "guard", update: () => ({ touched: true }) },
    });
    assert.equal(result.committed, false);
    assert.match(!result.committed ? result.reason : "", /changed while the compaction ran/);
    assert.deepEqual(await store.allMessages(sessionId), before);
    assert.equal((await store.compactionLog(sessionId)).length, 1, "the second log row is rolled back");
    assert.equal(await store.getState(sessionId, "guard"), undefined);
  });

  Deno.test(`${name}: the compaction log is per session, oldest first, and goes with the session`, async () => {
    const { fx, store, sessionId, middle, request } = await setup();
    await using _ = fx;
    await store.commitCompaction({
      ...request,
      archive: [middle[0]!.id],
      insert: [],
      kind: "prune_tool_results",
      reason: "threshold",
    });
    await store.commitCompaction({ ...request, archive: [middle[1]!.id], insert: [] });
    const log = await store.compactionLog(sessionId);
    assert.deepEqual(log.map((r) => [r.kind, r.reason, r.messages_removed]), [
      ["prune_tool_results", "threshold", 1],
      ["summarize", "manual", 1],
    ]);
    assert.ok(log[0]!.id < log[1]!.id);
    assert.deepEqual(await store.compactionLog("other"), []);
    await store.releaseLease({ sessionId, nonce: request.nonce });
    await store.deleteSessions([sessionId]);
    assert.deepEqual(await store.compactionLog(sessionId), []);
  });

  const MEASURES: PassMeasures = {
    thresholdTokens: 3000,
    windowTokens: 4000,
    durationMs: 12,
    absorbedMessages: 6,
    absorbedTokens: 700,
    summaryTokens: 90,
  };

  Deno.test(`${name}: a committed pass logs its measures and occupancy (after ÷ threshold)`, async () => {
    const { fx, store, request } = await setup();
    await using _ = fx;
    const result = await store.commitCompaction({ ...request, measures: MEASURES, estimate: () => 750 });
    assert.ok(result.committed);
    assert.deepEqual(
      [
        result.log.threshold_tokens,
        result.log.window_tokens,
        result.log.occupancy,
        result.log.duration_ms,
        result.log.absorbed_messages,
        result.log.absorbed_tokens,
        result.log.summary_tokens,
      ],
      [3000, 4000, 0.25, 12, 6, 700, 90],
    );
  });

  Deno.test(`${name}: passes that changed nothing are logged without a lease, with running totals`, async () => {
    const { fx, store, sessionId, middle, request } = await setup();
    await using _ = fx;
    await store.releaseLease({ sessionId, nonce: request.nonce });
    const refused = await store.recordCompactionPass({
      sessionId,
      now: NOW,
      kind: "micro_summarize",
      reason: "between_turns",
      outcome: "refused_growth",
      tokens: 1500,
      measures: MEASURES,
      detail: { why: "not_smaller" },
    });
    assert.deepEqual(
      [
        refused.outcome,
        refused.before_tokens,
        refused.after_tokens,
        refused.messages_removed,
        refused.occupancy,
      ],
      ["refused_growth", 1500, 1500, 0, 0.5],
    );
    assert.deepEqual(refused.detail, { why: "not_smaller" });
    assert.deepEqual(
      [refused.total_passes, refused.total_committed, refused.total_hard, refused.total_saved_tokens],
      [1, 0, 0, 0],
    );
    await store.acquireLease({ sessionId, holder: { ...liveHolder(), nonce: "n2" }, now: NOW, ttlMs: TTL });
    const micro = await store.commitCompaction({
      ...request,
      nonce: "n2",
      kind: "micro_summarize",
      reason: "between_turns",
      archive: [middle[0]!.id, middle[1]!.id],
      insert: [{ role: "assistant", content: "s", kind: "summary", pos: middle[1]!.pos }],
      estimate: () => 1200,
    });
    const hard = await store.commitCompaction({
      ...request,
      nonce: "n2",
      archive: [middle[2]!.id],
      insert: [],
      beforeTokens: 1200,
      estimate: () => 1300,
    });
    const blocked = await store.recordCompactionPass({
      sessionId,
      now: NOW,
      kind: "summarize",
      reason: "pre_api",
      outcome: "cooldown",
      tokens: 1300,
    });
    assert.ok(micro.committed && hard.committed);
    assert.deepEqual(micro.log.messages_removed, 1, "active rows before − after");
    assert.deepEqual(
      (await store.compactionLog(sessionId)).map((r) => [
        r.outcome,
        r.total_passes,
        r.total_committed,
        r.total_hard,
        r.total_saved_tokens,
      ]),
      [
        ["refused_growth", 1, 0, 0, 0],
        ["committed", 2, 1, 0, -200],
        ["committed", 3, 2, 1, -300],
        ["cooldown", 4, 2, 1, -300],
      ],
    );
    assert.equal(blocked.occupancy, null, "no threshold, no occupancy");
    const other = (await store.createSession({ job: "j" })).id;
    const first = await store.recordCompactionPass({
      sessionId: other,
      now: NOW,
      kind: "summarize",
      reason: "manual",
      outcome: "nothing_to_do",
      tokens: 10,
    });
    assert.equal(first.total_passes, 1, "totals are per session");
  });

  Deno.test(`${name}: a row appended archived is stored but not in the active transcript`, async () => {
    const fx = await open();
    await using _ = fx;
    const { store } = fx;
    const sessionId = (await store.createSession({ job: "j" })).id;
    const version = await store.transcriptVersion(sessionId);
    const [full, cut] = await store.appendMessages(sessionId, [
      { role: "tool", tool_call_id: "c1", name: "read_file", content: "full text", active: false },
      { role: "tool", tool_call_id: "c1", name: "read_file", content: "cut text" },
    ]);
    assert.deepEqual([full!.active, cut!.active], [false, true]);
    assert.deepEqual((await store.activeMessages(sessionId)).map((m) => m.content), ["cut text"]);
    assert.deepEqual((await store.transcriptRows(sessionId)).map((r) => r.id), [cut!.id]);
    assert.deepEqual(
      (await store.allMessages(sessionId)).map((m) => [m.content, m.active]),
      [["full text", false], ["cut text", true]],
    );
    assert.notEqual(await store.transcriptVersion(sessionId), version);
    assert.deepEqual((await store.estimateInput(sessionId)).after.map((r) => r.id), [cut!.id]);
  });
}
