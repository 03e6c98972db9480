import assert from "node:assert/strict";
import { toOutcome } from "./convert.ts";

Deno.test("mcp results: text, structured content not already in the text, binary parts as placeholders", () => {
  const outcome = toOutcome({
    content: [
      { type: "text", text: "two parts" },
      { type: "audio", mimeType: "audio/wav", data: "AAAA" },
      {
        type: "resource",
        resource: { uri: "file:///a.bin", mimeType: "application/octet-stream", blob: "AAAAAA==" },
      },
      { type: "resource_link", uri: "file:///b.md", name: "b", description: "the b file" },
    ],
    structuredContent: { count: 2 },
  });
  assert.deepEqual(outcome, {
    status: "ok",
    content: [
      "two parts",
      "[audio: audio/wav, 3 bytes, not shown]",
      "[resource file:///a.bin (application/octet-stream)] 4 bytes of binary data, not shown",
      '[resource link file:///b.md "b"] the b file',
      'structured content:\n{\n  "count": 2\n}',
    ].join("\n\n"),
  });
});

Deno.test("mcp results: structured content the text already carries is not repeated", () => {
  assert.equal(
    toOutcome({ content: [{ type: "text", text: '{"a":1}' }], structuredContent: { a: 1 } }).content,
    '{"a":1}',
  );
  assert.equal(
    toOutcome({ content: [{ type: "text", text: "file body" }], structuredContent: { content: "file body" } })
      .content,
    "file body",
  );
});

Deno.test("mcp results: isError is a tool error; an empty result says so", () => {
  assert.deepEqual(toOutcome({ content: [{ type: "text", text: "Access denied" }], isError: true }), {
    status: "error",
    content: "error: Access denied",
  });
  assert.deepEqual(toOutcome({ content: [] }), { status: "ok", content: "(no content)" });
});
