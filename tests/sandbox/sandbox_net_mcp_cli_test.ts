/**
 * A stdio MCP server's `sandbox.net` host list through `hermes run` (real bwrap, bridge and proxy): the
 * server (a bash script) and the curl it runs reach the granted local server through the proxy; the other
 * gets 403; a connection ignoring the proxy has no route.
 */
import assert from "node:assert/strict";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { withoutSandbox } from "../_testing/sandbox.ts";
import { netTargets } from "../../runtime/sandbox/_testing.ts";

/** Just enough MCP over stdio (one tool, `probe`) for the client to start it and call it. */
const SERVER = `#!/bin/bash
granted=$1; other=$2
while IFS= read -r line; do
  id=$(jq -c '.id // empty' <<<"$line"); method=$(jq -r '.method // empty' <<<"$line")
  case "$method" in
    initialize)
      jq -cn --argjson id "$id" --arg v "$(jq -r .params.protocolVersion <<<"$line")" \\
        '{jsonrpc:"2.0",id:$id,result:{protocolVersion:$v,capabilities:{tools:{}},serverInfo:{name:"probe",version:"1"}}}';;
    tools/list)
      jq -cn --argjson id "$id" '{jsonrpc:"2.0",id:$id,result:{tools:[{name:"probe",description:"probe",inputSchema:{type:"object"}}]}}';;
    tools/call)
      out=$(curl -sS -m 10 "http://127.0.0.1:$granted/" 2>&1; curl -sS -m 10 "http://127.0.0.1:$other/" 2>&1;
        curl -sS -m 5 --noproxy '*' "http://127.0.0.1:$granted/" >/dev/null 2>&1 || echo direct-refused)
      jq -cn --argjson id "$id" --arg t "$out" '{jsonrpc:"2.0",id:$id,result:{content:[{type:"text",text:$t}]}}';;
    *) [ -n "$id" ] && jq -cn --argjson id "$id" '{jsonrpc:"2.0",id:$id,result:{}}';;
  esac
done
`;

Deno.test({
  name: "run: an MCP server's host list holds for the server and the programs it runs",
  ignore: withoutSandbox,
  async fn() {
    const targets = netTargets();
    try {
      const g = targets.granted;
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": `name: mcp-net
model: { provider: scripted, script: ./r.yaml }
prompt: probe
mcp_servers:
  probe:
    command: bash
    args: [./server.sh, "${g}", "${targets.other}"]
    required: true
    sandbox: { net: ["127.0.0.1:${g}"] }
`,
        "r.yaml": `- tool_calls: [{ name: mcp__probe__probe, arguments: {} }]
- content: done
`,
        "server.sh": SERVER,
      });
      const { code, stderr, events } = await runEvents(dir);
      assert.equal(code, 0, stderr);
      const output = String(events.find((e) => e.type === "tool.result")?.content ?? "");
      assert.match(
        output,
        /^granted\nhermes sandbox proxy: 127\.0\.0\.1:\d+ is not in the sandbox's host list\ndirect-refused$/,
        output + stderr,
      );
    } finally {
      await targets.close();
    }
  },
});
