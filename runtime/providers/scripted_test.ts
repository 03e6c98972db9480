import assert from "node:assert/strict";
import { providerContract } from "../../tests/provider_contract.ts";
import { ManualClock, systemClock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import { createScriptedProvider, loadScript } from "./scripted.ts";

providerContract("scripted", (script) =>
  Promise.resolve({
    provider: createScriptedProvider(script, { clock: systemClock }),
    close: () => Promise.resolve(),
  }));

Deno.test("scripted: a delay waits on the injected clock", async () => {
  const clock = new ManualClock();
  const provider = createScriptedProvider([{ content: "late", delay: "5s" }], { clock });
  let settled = false;
  const reply = provider.complete({ model: "m", messages: [{ role: "user", content: "hi" }], tools: [] })
    .then((r) => (settled = true, r));
  await clock.advance(4000);
  assert.equal(settled, false);
  await clock.advance(1000);
  assert.equal((await reply).message.content, "late");
});

Deno.test("scripted: loadScript rejects a missing file and a malformed entry", async () => {
  assert.throws(() => loadScript("/nonexistent/replies.yaml"), ValidationError);
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/r.yaml`, "- { nothing: here }\n");
  assert.throws(() => loadScript(`${dir}/r.yaml`), /reply 1: expected "content", "tool_calls" or "error"/);
  await Deno.writeTextFile(`${dir}/ok.yaml`, "replies:\n  - { content: hi }\n");
  assert.equal(loadScript(`${dir}/ok.yaml`).length, 1);
});
