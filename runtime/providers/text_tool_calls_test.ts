import assert from "node:assert/strict";
import type { ToolSpec } from "../core/types.ts";
import type { ModelRequest, ModelResponse, Provider } from "./provider.ts";
import { parseTextToolCalls, withTextToolCalls } from "./text_tool_calls.ts";

const TOOLS: ToolSpec[] = [
  { name: "read_file", description: "", parameters: {} },
  { name: "list_dir", description: "", parameters: {} },
];
const READ = { name: "read_file", arguments: '{"path":"a.txt"}' };

Deno.test("parseTextToolCalls: the forms local models write", () => {
  const forms: [string, string][] = [
    [
      "Hermes/Qwen <tool_call> block",
      '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n</tool_call>',
    ],
    [
      "Llama 3.1 python_tag",
      '<|python_tag|>{"name": "read_file", "parameters": {"path": "a.txt"}}<|eom_id|>',
    ],
    ["Mistral [TOOL_CALLS]", '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a.txt"}}]'],
    ["a bare JSON answer", '{"name": "read_file", "arguments": {"path": "a.txt"}}'],
    ["a ```json fence", '```json\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n```'],
    [
      "the function spelling",
      '{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\":\\"a.txt\\"}"}}',
    ],
    ["the tool/parameters spelling", '{"tool": "read_file", "parameters": {"path": "a.txt"}}'],
  ];
  for (const [form, text] of forms) {
    assert.deepEqual(parseTextToolCalls(text, TOOLS), { content: "", calls: [READ] }, form);
  }
});

Deno.test("parseTextToolCalls: several calls, and the prose around tagged ones kept as the content", () => {
  const text =
    'Let me look.\n<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>\n' +
    '<tool_call>{"name": "list_dir", "arguments": {}}</tool_call>';
  assert.deepEqual(parseTextToolCalls(text, TOOLS), {
    content: "Let me look.",
    calls: [READ, { name: "list_dir", arguments: "{}" }],
  });
  assert.deepEqual(
    parseTextToolCalls(
      '[{"name": "list_dir", "arguments": {}}, {"name": "read_file", "arguments": {"path": "a.txt"}}]',
      TOOLS,
    )
      ?.calls.map((c) => c.name),
    ["list_dir", "read_file"],
  );
});

Deno.test("parseTextToolCalls: an answer stays an answer — prose, unknown tools, bad JSON, non-object arguments", () => {
  const answers = [
    "The file says hello.",
    'Here is the config: {"name": "read_file", "arguments": {}} as you asked.',
    '{"name": "rm_rf", "arguments": {}}',
    '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call><tool_call>{"name": "nope"}</tool_call>',
    "<tool_call>{not json}</tool_call>",
    '{"name": "read_file", "arguments": [1, 2]}',
    '{"name": "read_file", "arguments": "not json"}',
    '{"answer": 42}',
    "[]",
  ];
  for (const text of answers) assert.equal(parseTextToolCalls(text, TOOLS), null, text);
});

Deno.test("parseTextToolCalls: tagged calls count only as the end of the answer", () => {
  const block = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>';
  for (
    const text of [
      `The file holds ${block} and nothing else.`,
      `${block}\nThat is what it says.`,
      `${block}\nthen\n${block}`,
    ]
  ) {
    assert.equal(parseTextToolCalls(text, TOOLS), null, text);
  }
  assert.deepEqual(parseTextToolCalls(`Reading it.\n${block}\n\n${block}\n`, TOOLS)?.calls, [READ, READ]);
});

Deno.test("parseTextToolCalls: a call that also appears in the request's input was copied, and stays text", () => {
  const block = '<tool_call>{"name": "read_file", "arguments": {"path": "a.txt"}}</tool_call>';
  const copies: [string, string, string][] = [
    ["verbatim", block, `notes\n${block}\n`],
    [
      "reformatted",
      '<tool_call>\n{ "arguments": {"path":"a.txt"}, "name":"read_file" }\n</tool_call>',
      block,
    ],
    [
      "a bare answer copied from a bare line",
      '{"name": "read_file", "arguments": {"path": "a.txt"}}',
      'x\n{"name":"read_file","arguments":{"path":"a.txt"}}\ny',
    ],
    ["behind a JSON result's escapes", block, JSON.stringify({ status: 200, body: `page ${block}` })],
  ];
  for (const [how, answer, input] of copies) {
    assert.equal(parseTextToolCalls(answer, TOOLS, ["the prompt", input]), null, how);
  }
  // The neighbour: a result that names the path, or holds another call, leaves the model's own call alone.
  const other = '<tool_call>{"name": "list_dir", "arguments": {}}</tool_call>';
  assert.deepEqual(parseTextToolCalls(block, TOOLS, ["a.txt\nb.txt", other])?.calls, [READ]);
});

function providerAnswering(content: string, tool_calls?: ModelResponse["message"]["tool_calls"]): Provider {
  return {
    name: "fixed",
    complete: () =>
      Promise.resolve({
        message: { role: "assistant", content, ...(tool_calls ? { tool_calls } : {}) },
        usage: null,
        finish_reason: "stop",
      }),
  };
}

const request = (tools = TOOLS): ModelRequest => ({ model: "m", messages: [], tools });

Deno.test("withTextToolCalls: a call quoted from a tool result of the request stays the answer", async () => {
  const call = '{"name": "read_file", "arguments": {"path": "a.txt"}}';
  const asked = (content: string): ModelRequest => ({
    model: "m",
    tools: TOOLS,
    messages: [{ role: "user", content: "go" }, {
      role: "tool",
      content,
      tool_call_id: "1",
      name: "read_file",
    }],
  });
  const quoted = await withTextToolCalls(providerAnswering(call)).complete(asked(`see ${call}`));
  assert.deepEqual([quoted.message.content, quoted.message.tool_calls, quoted.finish_reason], [
    call,
    undefined,
    "stop",
  ]);
  const own = await withTextToolCalls(providerAnswering(call)).complete(asked("a.txt"));
  assert.equal(own.message.tool_calls?.[0]?.name, "read_file");
});

Deno.test("withTextToolCalls: a written call becomes a tool call with a fresh id; real calls and plain answers pass", async () => {
  const written = await withTextToolCalls(
    providerAnswering('{"name": "read_file", "arguments": {"path": "a.txt"}}'),
  )
    .complete(request());
  assert.equal(written.finish_reason, "tool_calls");
  assert.equal(written.message.content, "");
  assert.equal(written.message.tool_calls?.length, 1);
  assert.equal(written.message.tool_calls![0]!.name, "read_file");
  assert.match(written.message.tool_calls![0]!.id, /^call_[0-9a-f]{24}$/);
  const again = await withTextToolCalls(providerAnswering('{"name": "read_file", "arguments": {}}')).complete(
    request(),
  );
  assert.notEqual(again.message.tool_calls![0]!.id, written.message.tool_calls![0]!.id);
  const real = [{ id: "x", name: "list_dir", arguments: "{}" }];
  assert.deepEqual(
    (await withTextToolCalls(providerAnswering("", real)).complete(request())).message.tool_calls,
    real,
  );
  const plain = await withTextToolCalls(providerAnswering("Done.")).complete(request());
  assert.deepEqual([plain.message.content, plain.finish_reason, plain.message.tool_calls], [
    "Done.",
    "stop",
    undefined,
  ]);
  // A request without tools (a summary call) never gets one.
  const summary = await withTextToolCalls(providerAnswering('{"name": "read_file", "arguments": {}}'))
    .complete(request([]));
  assert.equal(summary.message.tool_calls, undefined);
});
