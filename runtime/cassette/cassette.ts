/**
 * A cassette: every model exchange and tool execution of a recorded run, in order, with the job it ran, so
 * that `hermes replay` can run the job again with each answer served from it. A versioned JSON document
 * (`hermes schema cassette`, schema.ts). Model requests are kept normalised (normalise.ts): what a replay
 * compares them with must not differ by ids a provider made up or anything else that changes between runs.
 */
import type { JobFile } from "../config/job_schema.ts";
import type { Message, Usage } from "../core/types.ts";
import type { ToolStatus } from "../tools/tool.ts";
import type { NormalRequest } from "./normalise.ts";

/** Bumped when a cassette's meaning changes; a replay refuses other versions (it cannot know what they mean). */
export const CASSETTE_VERSION = 1;

export interface Cassette {
  cassette_version: typeof CASSETTE_VERSION;
  /** The Hermes version that recorded it (informative). */
  hermes_version: string;
  job: CassetteJob;
  /** How the recorded session ended; null when it did not (the process stopped first). */
  outcome: { status: string; terminal_reason: string } | null;
  /** Model exchanges and tool executions, in the order they happened. */
  exchanges: Exchange[];
}

export interface CassetteJob {
  name: string;
  /** `sha256:` of the resolved job and its inputs (stable JSON): tells whether a replay runs the same job. */
  hash: string;
  /** Where the job file was, when there was one (informative: a replay without --job runs `spec`). */
  path: string | null;
  dir: string;
  inputs: Record<string, unknown>;
  /** The resolved job (secrets replaced): what a replay without --job runs. */
  spec: JobFile;
}

export type Exchange = ModelExchange | ToolExchange;

export interface ModelExchange {
  type: "model";
  request: NormalRequest;
  /** The provider's answer; absent when it failed (then `error`). */
  response?: RecordedResponse;
  error?: { message: string; status: number | null; reason: string };
  duration_ms: number;
}

export interface RecordedResponse {
  message: Message;
  usage: Usage | null;
  finish_reason: string;
  /** The text as it streamed in, chunk by chunk (absent when the provider did not stream). */
  stream?: string[];
}

export interface ToolExchange {
  type: "tool";
  tool: string;
  tool_call_id: string;
  /** The MCP server of the tool, when it has one. */
  server?: string;
  args: Record<string, unknown>;
  result: { status: ToolStatus; content: string };
  duration_ms: number;
}

/** `sha256:<hex>` of the job as it ran: the resolved spec and its inputs, keys sorted. */
export async function jobHash(spec: JobFile, inputs: Record<string, unknown>): Promise<string> {
  const bytes = new TextEncoder().encode(stableJson({ spec, inputs }));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256:${Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** JSON with object keys sorted at every level, so equal values give equal text. */
export function stableJson(value: unknown): string {
  return JSON.stringify(sorted(value));
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value).sort().flatMap((key) => {
        const v = (value as Record<string, unknown>)[key];
        return v === undefined ? [] : [[key, sorted(v)]];
      }),
    );
  }
  return value;
}
