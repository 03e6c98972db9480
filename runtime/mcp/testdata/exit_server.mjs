// A stdio MCP server that exits in the middle of a `die` call (tests: a crash mid-run is a tool error and
// the server is restarted once at most). Plain node, no dependencies: it answers the few requests it needs.
// With --linger it also outlives a closed stdin, as a careless server would (tests: no orphans).
import { createInterface } from "node:readline";

const send = (message) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
const tools = [
  { name: "ping", description: "Answers pong", inputSchema: { type: "object", properties: {} } },
  { name: "die", description: "Exits while answering", inputSchema: { type: "object", properties: {} } },
];
createInterface({ input: process.stdin }).on("line", (line) => {
  const request = JSON.parse(line);
  if (request.method === "initialize") {
    send({
      id: request.id,
      result: {
        protocolVersion: request.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: "exit-server", version: "1.0.0" },
      },
    });
  } else if (request.method === "tools/list") {
    send({ id: request.id, result: { tools } });
  } else if (request.method === "tools/call" && request.params.name === "die") {
    process.exit(3);
  } else if (request.method === "tools/call") {
    send({ id: request.id, result: { content: [{ type: "text", text: `pong ${process.pid}` }] } });
  } else if (request.id !== undefined) {
    send({ id: request.id, error: { code: -32601, message: "Method not found" } });
  }
});

if (process.argv.includes("--linger")) setInterval(() => {}, 1 << 30);
