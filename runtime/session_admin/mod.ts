/** Store-level session administration: what `hermes sessions` and the RPC `session.*` methods act through. */
export * from "./records.ts";
export * from "./remove.ts";
export * from "./prune.ts";
export * from "./search.ts";
export * from "./export.ts";
export * from "./transcript.ts";
