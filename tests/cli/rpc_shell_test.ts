/** `hermes rpc` from a shell pipeline: bash pipes three requests through it and checks the answers with jq. */
import assert from "node:assert/strict";
import { MAIN, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";

const SCRIPT = String.raw`
set -euo pipefail
cd "$JOB_DIR"
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize"}' \
  '{"jsonrpc":"2.0","id":2,"method":"job.run","params":{"path":"job.yaml","inputs":{"who":"shell"}}}' \
  '{"jsonrpc":"2.0","id":3,"method":"job.validate","params":{"path":"job.yaml"}}' \
  | "$DENO" run -A "$MAIN" rpc --home "$JOB_DIR/home" > out.jsonl
# One JSON message per line, nothing else on stdout.
jq -e . out.jsonl > /dev/null
jq -se '[.[] | select(.id == 1)][0].result.server.name == "hermes"' out.jsonl
jq -se '[.[] | select(.id == 1)][0].result.methods | index("session.prompt") != null' out.jsonl
jq -se '[.[] | select(.id == 2)][0].result | .status == "success" and .final == "Hello, shell!"' out.jsonl
jq -se '[.[] | select(.id == 3)][0].result == {"valid": true, "name": "greet"}' out.jsonl
jq -se '[.[] | select(.method == "event" and .params.type == "tool.result")] | length == 1' out.jsonl
jq -r 'select(.method == "event" and .params.type == "tool.result") | .params.content' out.jsonl
`;

Deno.test(
  { name: "rpc shell: printf | hermes rpc | jq answers three requests", ignore: withoutSandbox },
  async () => {
    const jq = await new Deno.Command("bash", {
      args: ["-c", "command -v jq"],
      stdout: "null",
      stderr: "null",
    })
      .output();
    assert.equal(jq.code, 0, "jq must be installed (apt-get install -y jq)");
    const dir = await writeFiles(await tempDir("hermes-rpc-shell-"), {
      "job.yaml": `name: greet
model: { provider: scripted, script: ./replies.yaml }
inputs: { who: { type: string, required: true } }
prompt: Greet {{ inputs.who }}.
tools:
  shell: { allow: ["echo *"] }
`,
      "replies.yaml": `- tool_calls: [{ name: shell, arguments: { command: "echo checked" } }]
- content: Hello, shell!
`,
    });
    const { code, stdout, stderr } = await new Deno.Command("bash", {
      args: ["-c", SCRIPT],
      env: { JOB_DIR: dir, DENO: Deno.execPath(), MAIN, NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(stdout);
    assert.equal(code, 0, `${text}\n${new TextDecoder().decode(stderr)}`);
    assert.deepEqual(text.trim().split("\n"), ["true", "true", "true", "true", "true", "checked"]);
  },
);
