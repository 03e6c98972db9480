import assert from "node:assert/strict";
import { probeOnce, probeOptions } from "./probe.ts";

Deno.test("probeOptions: HERMES_BWRAP names the binary, else PATH is searched", () => {
  assert.deepEqual(probeOptions({ HERMES_BWRAP: "/opt/bwrap", PATH: "/bin" }), {
    bwrap: "/opt/bwrap",
    path: "/bin",
  });
  assert.deepEqual(probeOptions({}), { path: "" });
});

Deno.test("probeOnce: one probe however many users ask; a missing bwrap says why and how", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const probe = probeOnce({ bwrap: `${dir}/no-bwrap` });
    const [first, second] = [probe(), probe()];
    assert.equal(first, second, "the same probe, not a second run");
    const result = await first;
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.match(result.reason, /cannot be run/);
      assert.match(result.hint, /apt-get install bubblewrap/);
    }
  } finally {
    await Deno.remove(dir);
  }
});
