/**
 * `model.transport: websocket` against HTTP on the Responses API: a 30-round tool session (each round a
 * reasoning item, a function call and a 2 KB tool output, then an answer) on the scripted Responses server
 * over loopback, interleaved (HTTP, WebSocket, HTTP, …), streamed as a session with `stream: true` would be.
 *
 * Two views: the model calls of one session through the provider in this process (what the transport
 * changes: per-call request set-up and the transcript sent again each round over HTTP, against one
 * connection and only the new items per round), and the whole `hermes run` as a subprocess (start-up, tools
 * and store included). Medians with min–max.
 */
import { createOpenAIProvider } from "../runtime/providers/openai.ts";
import type { ModelRequest } from "../runtime/providers/provider.ts";
import type { Message } from "../runtime/core/types.ts";
import {
  type ResponsesBody,
  type ResponsesReply,
  startResponsesServer,
} from "../tests/_testing/responses_server.ts";
import { interleave, ratio, report, spread } from "./_stats.ts";

const ROUNDS = 30;
const OUTPUT = "x".repeat(2048);
const MAIN = new URL("../main.ts", import.meta.url).pathname;

const reply = (_body: ResponsesBody, index: number): ResponsesReply => {
  const round = index % (ROUNDS + 1);
  return round === ROUNDS ? { reasoning: "enough", content: "done" } : {
    reasoning: `round ${round + 1}`,
    tool_calls: [{ name: "read_file", arguments: { path: "note.txt" } }],
  };
};

await using server = await startResponsesServer({ respond: reply });
const tools = [{
  name: "read_file",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } } },
}];

/** One session's model calls, ROUNDS tool rounds and the answer; the elapsed ms. */
async function session(transport: "http" | "websocket"): Promise<number> {
  const provider = createOpenAIProvider({
    model: "gpt-5-codex",
    baseURL: server.url,
    apiKey: "none",
    api: "responses",
    transport,
    reasoning: true,
    stream: true,
  });
  const messages: Message[] = [{ role: "system", content: "You are terse." }, {
    role: "user",
    content: "read",
  }];
  const started = performance.now();
  for (let round = 0; round <= ROUNDS; round++) {
    const request: ModelRequest = { model: "gpt-5-codex", messages, tools };
    const response = await provider.complete(request, { onDelta: () => {} });
    messages.push(response.message);
    for (const call of response.message.tool_calls ?? []) {
      messages.push({ role: "tool", tool_call_id: call.id, name: call.name, content: OUTPUT });
    }
    if (!response.message.tool_calls) break;
  }
  const elapsed = performance.now() - started;
  await provider.close?.();
  if (messages.length !== 2 + ROUNDS * 2 + 1) throw new Error(`the session ended early: ${messages.length}`);
  return elapsed;
}

const inProcess = await interleave({
  http: () => session("http"),
  websocket: () => session("websocket"),
}, { rounds: 15, warmup: 2 });
report(`${ROUNDS} tool rounds, model calls in process: HTTP`, spread(inProcess.http));
report(`${ROUNDS} tool rounds, model calls in process: WebSocket`, spread(inProcess.websocket));
report("  WebSocket / HTTP", ratio(inProcess.websocket, inProcess.http));

const dir = await Deno.makeTempDir({ prefix: "hermes-ws-bench-" });
await Deno.writeTextFile(`${dir}/note.txt`, OUTPUT);
const job = (transport: string) =>
  [
    "name: ws-bench",
    `model: { name: gpt-5-codex, base_url: "${server.url}", api_key_env: none, api: responses, ` +
    `transport: ${transport}, stream: true, context_window: 100000000 }`,
    "prompt: read the note again and again",
    `tools:\n  read_file: { paths: ["."], dedup: false }`,
    `limits: { max_turns: ${ROUNDS + 5} }`,
  ].join("\n") + "\n";
await Deno.writeTextFile(`${dir}/http.yaml`, job("http"));
await Deno.writeTextFile(`${dir}/websocket.yaml`, job("websocket"));

async function cli(transport: string): Promise<number> {
  const started = performance.now();
  const { code, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", MAIN, "--home", dir, "run", `${transport}.yaml`],
    cwd: dir,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  const elapsed = performance.now() - started;
  if (code !== 0) {
    throw new Error(`hermes run (${transport}) exited ${code}: ${new TextDecoder().decode(stderr)}`);
  }
  return elapsed;
}

const whole = await interleave({ http: () => cli("http"), websocket: () => cli("websocket") }, {
  rounds: 7,
  warmup: 1,
});
report(`${ROUNDS} tool rounds, whole hermes run: HTTP`, spread(whole.http));
report(`${ROUNDS} tool rounds, whole hermes run: WebSocket`, spread(whole.websocket));
report("  WebSocket / HTTP", ratio(whole.websocket, whole.http));
await Deno.remove(dir, { recursive: true });
