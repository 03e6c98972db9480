import assert from "node:assert/strict";
import { createLogger } from "./log.ts";

function capture(level?: "error" | "warn" | "info" | "debug") {
  const lines: string[] = [];
  const log = createLogger({
    ...(level ? { level } : {}),
    write: (line) => lines.push(line),
    redact: (text) => text.replaceAll("sk-secret", "[REDACTED]"),
  });
  return { log, lines };
}

Deno.test("a line names its level; a child prefixes [name] once, a grandchild [parent:name]", () => {
  const { log, lines } = capture();
  log.info("plain");
  const compaction = log.child("compaction");
  compaction.warn("lease lost");
  compaction.child("summary").error("timed out");
  log.child("plugins").info("started");
  assert.deepEqual(lines, [
    "hermes info: plain",
    "hermes warn: [compaction] lease lost",
    "hermes error: [compaction:summary] timed out",
    "hermes info: [plugins] started",
  ]);
});

Deno.test("lines below the level are dropped, in children too; every line is redacted", () => {
  const { log, lines } = capture("warn");
  log.info("hidden");
  log.child("c").debug("hidden");
  log.warn("key sk-secret");
  log.child("c").error("shown");
  assert.deepEqual(lines, ["hermes warn: key [REDACTED]", "hermes error: [c] shown"]);
  const verbose = capture("debug");
  verbose.log.child("c").debug("shown");
  assert.deepEqual(verbose.lines, ["hermes debug: [c] shown"]);
});
