import assert from "node:assert/strict";
import { z } from "zod";
import { silentLogger } from "../core/log.ts";
import { LineWriter } from "../core/lines.ts";
import { ErrorCode, RpcError } from "./protocol.ts";
import { type MethodTable, RpcServer } from "./server.ts";

function setup() {
  const out: unknown[] = [];
  const writer = new LineWriter({
    write: (chunk) => {
      for (const line of new TextDecoder().decode(chunk).split("\n")) if (line) out.push(JSON.parse(line));
      return Promise.resolve(chunk.length);
    },
  });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => release = resolve);
  const methods: MethodTable = new Map();
  methods.set("echo", {
    params: z.strictObject({ text: z.string(), n: z.number().optional() }),
    handler: (p) => p,
  });
  methods.set("slow", { handler: async () => (await gate, "slow done") });
  methods.set("boom", {
    handler: () => {
      throw new RangeError("mapped");
    },
  });
  methods.set("busy", {
    handler: () => Promise.reject(new RpcError(ErrorCode.sessionBusy, "busy", { session_id: "s" })),
  });
  const server = new RpcServer({
    methods,
    writer,
    log: silentLogger,
    mapError: (error) =>
      error instanceof RangeError ? new RpcError(ErrorCode.invalidInput, error.message) : undefined,
  });
  const settle = async () => {
    await server.idle();
    await writer.flush();
  };
  return { server, out, release, settle };
}

Deno.test("RpcServer: typed params, application errors and mapped errors", async () => {
  const { server, out, settle } = setup();
  server.handleLine('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"text":"hi","n":2}}');
  server.handleLine('{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":3}}');
  server.handleLine('{"jsonrpc":"2.0","id":3,"method":"echo","params":{"text":"a","extra":1}}');
  server.handleLine('{"jsonrpc":"2.0","id":4,"method":"boom"}');
  server.handleLine('{"jsonrpc":"2.0","id":5,"method":"busy"}');
  server.handleLine('{"jsonrpc":"2.0","id":6,"method":"echo"}');
  await settle();
  type Reply = { error: { code: number; message: string; data: { path: string } } };
  const byId = (id: number) => out.find((m) => (m as { id: number }).id === id) as Reply;
  assert.deepEqual(byId(1), { jsonrpc: "2.0", id: 1, result: { text: "hi", n: 2 } });
  assert.equal(byId(2).error.code, -32602);
  assert.equal(byId(2).error.data.path, "text");
  assert.equal(byId(3).error.data.path, "extra");
  assert.deepEqual(byId(4).error, { code: ErrorCode.invalidInput, message: "mapped" });
  assert.deepEqual(byId(5).error, { code: -32002, message: "busy", data: { session_id: "s" } });
  assert.equal(byId(6).error.data.path, "text", "absent params are validated as {}");
});

Deno.test("RpcServer: a batch answers in request order once every member is done; notifications get nothing", async () => {
  const { server, out, release, settle } = setup();
  server.handleLine(JSON.stringify([
    { jsonrpc: "2.0", id: "a", method: "slow" },
    { jsonrpc: "2.0", method: "echo", params: { text: "note" } },
    { jsonrpc: "2.0", id: "b", method: "echo", params: { text: "x" } },
    { jsonrpc: "2.0", id: "c", method: "missing" },
    "junk",
  ]));
  server.handleLine('{"jsonrpc":"2.0","method":"slow"}');
  await new Promise((resolve) => setTimeout(resolve, 0));
  assert.deepEqual(out, [], "nothing is written before the slow member finishes");
  assert.equal(server.inFlight, 2);
  release();
  await settle();
  assert.equal(out.length, 1);
  const batch = out[0] as unknown as { id: unknown; result?: unknown; error?: { code: number } }[];
  assert.deepEqual(batch.map((m) => m.id), ["a", "b", "c", null]);
  assert.equal(batch[0]!.result, "slow done");
  assert.equal(batch[2]!.error!.code, -32601);
  assert.equal(batch[3]!.error!.code, -32600);
});

Deno.test("RpcServer: after close() new requests are refused with -32006 while running ones finish", async () => {
  const { server, out, release, settle } = setup();
  server.handleLine('{"jsonrpc":"2.0","id":1,"method":"slow"}');
  server.close();
  server.handleLine('{"jsonrpc":"2.0","id":2,"method":"echo","params":{"text":"late"}}');
  const idle = server.idle();
  release();
  await idle;
  await settle();
  const ids = out.map((
    m,
  ) => [(m as { id: number }).id, (m as { error?: { code: number } }).error?.code ?? "ok"]);
  assert.deepEqual(ids, [[2, -32006], [1, "ok"]]);
});
