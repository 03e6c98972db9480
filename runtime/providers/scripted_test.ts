import assert from "node:assert/strict";
import { providerContract } from "../../tests/contracts/provider.ts";
import { systemClock } from "../core/clock.ts";
import { ManualClock } from "../core/_testing.ts";
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

Deno.test("scripted: loadScript accepts a list or {replies}, and rejects a missing file", async () => {
  assert.throws(() => loadScript("/nonexistent/replies.yaml"), ValidationError);
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/ok.yaml`,
      "replies:\n  - { content: hi }\n  - tool_calls: [{ name: x }]\n",
    );
    assert.equal(loadScript(`${dir}/ok.yaml`).length, 2);
    await Deno.writeTextFile(`${dir}/list.yaml`, "- content: a\n- error: { status: 500, message: boom }\n");
    assert.equal(loadScript(`${dir}/list.yaml`).length, 2);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("scripted: a malformed replies file is one located ValidationError", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (
      const [text, expected] of [
        ["- content: ok\n- content: 5\n", /^r\.yaml:2:12: \[1\]\.content: .*expected string/],
        ["- tool_calls: notalist\n", /^r\.yaml:1:15: \[0\]\.tool_calls: .*expected array/],
        ["- tool_calls:\n    - arguments: {}\n", /^r\.yaml:2:7: \[0\]\.tool_calls\[0\]\.name: /],
        ["- content: slow\n  delay: forever\n", /^r\.yaml:2:10: \[0\]\.delay: expected a duration/],
        ["- { match: here }\n", /^r\.yaml:1:3: \[0\]: expected "content", "tool_calls" or "error"/],
        ["- contnet: hi\n", /^r\.yaml:1:3: unknown key "\[0\]\.contnet" \(did you mean "content"\?\)/],
        ["- content: [unclosed\n", /^r\.yaml:2:1: invalid YAML: /],
        ["just text\n", /^r\.yaml:1:1: expected a list of replies/],
      ] as const
    ) {
      await Deno.writeTextFile(`${dir}/r.yaml`, text);
      const error = (() => {
        try {
          loadScript(`${dir}/r.yaml`);
        } catch (caught) {
          return caught;
        }
      })();
      assert.ok(error instanceof ValidationError, `${JSON.stringify(text)}: ${error}`);
      assert.match(error.message.replace(`${dir}/`, ""), expected);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
