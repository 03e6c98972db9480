/**
 * `sessions list` answered by list_quick.ts (before main.ts sets a command up) prints exactly what list.ts
 * prints, for every form of its flags: list_quick.ts reads the plain forms itself and leaves the rest to
 * list.ts. The oracle is the same CLI on the same store with a config.yaml naming the store (`store:`), which
 * list_quick.ts leaves to list.ts.
 */
import assert from "node:assert/strict";
import { addSessions, tempStore } from "../../runtime/session_admin/_testing.ts";
import { hermes } from "./_testing.ts";

const FORMS = [
  [],
  ["--json"],
  ["--limit", "3"],
  ["--limit", "0"],
  ["--limit", "-1"],
  ["--limit", "2x"],
  ["--limit=2"],
  ["--limit", "1", "--limit", "2"],
  ["--status", "failed"],
  ["--status", "bogus"],
  ["--job", "triage", "--limit", "2", "--json"],
  ["--job"],
  ["--job", "--json"],
  ["--archived"],
  ["--archived", "--status", "interrupted"],
  ["--since", "3650d"],
  ["-q", "--limit", "1"],
  ["--quiet", "--log-level", "error", "--limit", "1"],
  ["extra"],
  ["--jsn"],
  ["--", "--json"],
];

Deno.test("sessions list: the quick answer and list.ts agree on every flag form, valid or not", async () => {
  await using fx = await tempStore();
  await addSessions(fx, 12);
  const config = `${fx.dir}/config.yaml`;
  for (const form of FORMS) {
    const args = ["sessions", "list", ...form, "--home", fx.dir];
    await Deno.remove(config).catch(() => {});
    const quick = await hermes(args);
    await Deno.writeTextFile(config, "store:\n  retry: 30s\n");
    const full = await hermes(args);
    assert.deepEqual(quick, full, form.join(" "));
  }
  // The forms above do list something, and tell it apart.
  await Deno.remove(config);
  const all = await hermes(["sessions", "list", "--home", fx.dir]);
  const two = await hermes(["sessions", "list", "--limit", "2", "--home", fx.dir]);
  assert.equal(JSON.parse(all.stdout).length, 11);
  assert.equal(JSON.parse(two.stdout).length, 2);
});

Deno.test("sessions list: a config.yaml naming the store is followed, one that does not is not", async () => {
  await using fx = await tempStore(); // a home with a store of its own (no sessions)
  const config = `${fx.dir}/config.yaml`;
  // A PostgreSQL server nobody listens for: the home's state.db is not what the list may show.
  await Deno.writeTextFile(config, "store:\n  url: postgres://hermes@127.0.0.1:9/none\n  retry: 1s\n");
  const named = await hermes(["sessions", "list", "--home", fx.dir]);
  assert.notEqual(named.code, 0, named.stdout);
  assert.equal(named.stdout, "");
  assert.match(named.stderr, /127\.0\.0\.1/);
  await Deno.writeTextFile(config, "# no store here\n");
  const own = await hermes(["sessions", "list", "--home", fx.dir]);
  assert.equal(own.code, 0, own.stderr);
  assert.equal(own.stdout, "[]\n");
});
