/**
 * Appends across repeated PostgreSQL crashes (`pg_ctl stop -m immediate`, then start) on a throwaway
 * cluster, through the retrying store the CLI uses: every append lands exactly once, in order, whether its
 * transaction was cut off before, during or after its COMMIT (a lost acknowledgement is resolved by asking
 * the server, runtime/store/postgres/_db.ts). Skipped with a visible reason without PostgreSQL's binaries,
 * except under CI=true.
 */
import assert from "node:assert/strict";
import { systemClock } from "../../runtime/core/clock.ts";
import { openPostgresStore } from "../../runtime/store/postgres/postgres_store.ts";
import { isTransientPgError } from "../../runtime/store/postgres/faults.ts";
import type { RetryNotice } from "../../runtime/store/retry.ts";
import { retryingStore } from "../../runtime/store/retrying_store.ts";
import { clusterSkipReason, throwawayCluster } from "../_testing/pg_cluster.ts";

const APPENDS = 400;
const CRASHES = 3;
const NAME = `postgres crashes: ${APPENDS} appends across ${CRASHES} crash-restarts land once each, in order`;

async function appendsAcrossCrashes(): Promise<void> {
  const cluster = await throwawayCluster();
  if ("skip" in cluster) return assert.fail(cluster.skip);
  await using _ = cluster;
  const notices: RetryNotice[] = [];
  const options = {
    policy: { budgetMs: 60_000, clock: systemClock, maxDelayMs: 200 },
    transient: isTransientPgError,
    where: "the throwaway cluster",
    onRetry: (n: RetryNotice) => notices.push(n),
  };
  const store = retryingStore(await openPostgresStore(cluster.url, { commitCheck: options }), options);
  try {
    const session = await store.createSession({ job: "appends" });
    let appended = 0;
    const writer = (async () => {
      for (let i = 0; i < APPENDS; i++) {
        // Two rows per append, as a tool call and its result are stored together.
        await store.appendMessages(session.id, [
          { role: "user", content: `question ${i}` },
          { role: "assistant", content: `answer ${i}` },
        ]);
        appended = i + 1;
      }
    })();
    for (let crash = 0; crash < CRASHES; crash++) {
      const target = Math.floor((APPENDS * (crash + 1)) / (CRASHES + 1));
      while (appended < target) await new Promise((resolve) => setTimeout(resolve, 5));
      await cluster.restart(300);
    }
    await writer;
    const rows = await store.allMessages(session.id);
    assert.equal(rows.length, APPENDS * 2, "no append lost, none doubled");
    assert.deepEqual(
      rows.map((m) => m.content),
      Array.from({ length: APPENDS }, (_, i) => [`question ${i}`, `answer ${i}`]).flat(),
    );
    assert.deepEqual(rows.map((m) => m.seq), rows.map((_, i) => i + 1), "seqs without a gap");
    assert.ok(notices.length > 0, "the crashes were waited out");
    console.log(
      `${notices.length} retries (${
        notices.filter((n) => n.operation === "the commit check").length
      } asking whether a cut-off COMMIT committed)`,
    );
  } finally {
    await store.close();
  }
}

/**
 * A Unix-socket proxy in front of the server that, for every `every`-th transaction, drops the connection
 * when the server answers COMMIT (its CommandComplete "COMMIT"): the transaction committed, and the client
 * never hears it. What a server restart at exactly the wrong moment does, every time.
 */
function commitCutter(upstream: string, listenDir: string, port: number, every: number) {
  const listener = Deno.listen({ transport: "unix", path: `${listenDir}/.s.PGSQL.${port}` });
  const tag = new TextEncoder().encode("COMMIT\0");
  let commits = 0;
  let cut = 0;
  const holds = (chunk: Uint8Array) => {
    outer: for (let i = 0; i + tag.length <= chunk.length; i++) {
      for (let j = 0; j < tag.length; j++) if (chunk[i + j] !== tag[j]) continue outer;
      return true;
    }
    return false;
  };
  const conns = new Set<Deno.Conn>();
  const pending: Promise<unknown>[] = [];
  const serving = (async () => {
    for await (const client of listener) {
      const server = await Deno.connect({ transport: "unix", path: upstream });
      conns.add(client).add(server);
      const close = () => {
        for (const c of [client, server]) {
          if (!conns.delete(c)) continue;
          try {
            c.close();
          } catch { /* closed already */ }
        }
      };
      pending.push(client.readable.pipeTo(server.writable).catch(() => {}).finally(close));
      pending.push(
        (async () => {
          const writer = client.writable.getWriter();
          try {
            for await (const chunk of server.readable) {
              if (holds(chunk) && ++commits % every === 0) {
                cut++;
                return;
              }
              await writer.write(chunk);
            }
          } catch { /* either side went away */ }
        })().finally(close),
      );
    }
  })().catch(() => {});
  return {
    get cut() {
      return cut;
    },
    async close() {
      listener.close();
      for (const c of [...conns]) {
        conns.delete(c);
        try {
          c.close();
        } catch { /* closed already */ }
      }
      await serving;
      await Promise.allSettled(pending);
    },
  };
}

const LOST = 60;
const LOST_NAME = `postgres lost COMMIT acknowledgements: ${LOST} appends, every 4th COMMIT answer cut off ` +
  "after the server committed, land once each, in order";

async function appendsWithLostAcks(): Promise<void> {
  const cluster = await throwawayCluster();
  if ("skip" in cluster) return assert.fail(cluster.skip);
  await using _ = cluster;
  const params = new URLSearchParams(cluster.url.split("?")[1]);
  const proxyDir = await Deno.makeTempDir({ prefix: "hermes-cut-" });
  const port = Number(params.get("port"));
  const cutter = commitCutter(`${params.get("host")}/.s.PGSQL.${port}`, proxyDir, port, 4);
  const notices: RetryNotice[] = [];
  const options = {
    policy: { budgetMs: 30_000, clock: systemClock, maxDelayMs: 100 },
    transient: isTransientPgError,
    where: "the proxy",
    onRetry: (n: RetryNotice) => notices.push(n),
  };
  const url = cluster.url.replace(`host=${params.get("host")}`, `host=${proxyDir}`);
  const store = retryingStore(await openPostgresStore(url, { commitCheck: options }), options);
  try {
    const session = await store.createSession({ job: "lost-acks" });
    for (let i = 0; i < LOST; i++) {
      const stored = await store.appendMessages(session.id, [{ role: "user", content: `message ${i}` }]);
      assert.equal(stored.length, 1);
    }
    const rows = await store.allMessages(session.id);
    assert.deepEqual(rows.map((m) => m.content), Array.from({ length: LOST }, (_, i) => `message ${i}`));
    assert.deepEqual(rows.map((m) => m.seq), rows.map((_, i) => i + 1));
    assert.ok(cutter.cut >= LOST / 4 - 1, `only ${cutter.cut} COMMIT answers were cut`);
    assert.ok(
      notices.every((n) => n.operation !== "appendMessages"),
      "a committed append is never run again",
    );
  } finally {
    await store.close();
    await cutter.close();
    await Deno.remove(proxyDir, { recursive: true });
  }
}

const skip = await clusterSkipReason();
for (const [name, fn] of [[NAME, appendsAcrossCrashes], [LOST_NAME, appendsWithLostAcks]] as const) {
  if (skip === undefined) Deno.test(name, fn);
  else if (Deno.env.get("CI") === "true") {
    Deno.test(name, () => assert.fail(`cannot run under CI=true: ${skip}`));
  } else Deno.test({ name: `${name} (skipped: ${skip})`, ignore: true, fn() {} });
}
