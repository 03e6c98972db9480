import assert from "node:assert/strict";
import { firstDifference, normaliseRequest } from "./normalise.ts";
import type { ModelRequest } from "../providers/provider.ts";

const request = (ids: [string, string], content = "list the files"): ModelRequest => ({
  model: "m",
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content },
    {
      role: "assistant",
      content: "",
      tool_calls: [{ id: ids[0], name: "list_dir", arguments: "{}" }, {
        id: ids[1],
        name: "read_file",
        arguments: "{}",
      }],
    },
    { role: "tool", tool_call_id: ids[1], name: "read_file", content: "b" },
    { role: "tool", tool_call_id: ids[0], name: "list_dir", content: "a" },
  ],
  tools: [{ name: "list_dir", description: "d", parameters: { type: "object" } }],
  max_tokens: 100,
});

Deno.test("normaliseRequest: provider ids become call_1, call_2 … in order of first appearance", () => {
  const normal = normaliseRequest(request(["call_8fK2x", "toolu_01ab"]));
  assert.deepEqual(normal.messages[2]!.tool_calls!.map((c) => c.id), ["call_1", "call_2"]);
  assert.deepEqual(normal.messages.slice(3).map((m) => m.tool_call_id), ["call_2", "call_1"]);
  // Two runs whose provider made up other ids ask the same thing.
  assert.equal(firstDifference(normal, normaliseRequest(request(["a", "b"]))), null);
});

Deno.test("firstDifference names the message, its role and field, recorded and now", () => {
  const recorded = normaliseRequest(request(["a", "b"]));
  assert.equal(
    firstDifference(recorded, normaliseRequest(request(["a", "b"], "list all the files"))),
    'message 2 (user) content: recorded "list the files", now "list all the files"',
  );
  const shorter = normaliseRequest(request(["a", "b"]));
  shorter.messages.pop();
  assert.match(
    firstDifference(recorded, shorter)!,
    /^messages: 5 recorded, 4 now: recorded has message 5 \(tool\)/,
  );
  const tools = normaliseRequest(request(["a", "b"]));
  tools.tools[0]!.parameters = { type: "object", required: ["path"] };
  assert.match(firstDifference(recorded, tools)!, /^tool 1 parameters: recorded \{"type":"object"\}, now /);
  const limit = { ...recorded, max_tokens: 200 };
  assert.equal(firstDifference(recorded, limit), "max_tokens: recorded 100, now 200");
  assert.equal(firstDifference(recorded, { ...recorded, model: "n" }), 'model: recorded "m", now "n"');
});

Deno.test("firstDifference shows long text around where it departs", () => {
  const long = "x".repeat(500);
  const recorded = normaliseRequest(request(["a", "b"], `${long}A${long}`));
  const now = normaliseRequest(request(["a", "b"], `${long}B${long}`));
  const text = firstDifference(recorded, now)!;
  assert.match(text, /recorded …"x+A x*"…|recorded …"x+Ax+"…/);
  assert.ok(text.length < 400, text);
});
