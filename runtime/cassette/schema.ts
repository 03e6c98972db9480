/**
 * The cassette format as a zod schema: it checks a cassette before a replay reads it (a hand-edited or
 * truncated file is exit 2 naming the field), and `hermes schema cassette` (schemas/cassette.schema.json)
 * is made from it. cassette.ts holds the TypeScript types the recorder writes; a test checks every
 * recorded cassette against this schema.
 */
import { z } from "zod";
import { ValidationError } from "../core/errors.ts";
import { type Cassette, CASSETTE_VERSION } from "./cassette.ts";

const count = z.number().int().nonnegative();

const toolCall = z.strictObject({
  id: z.string().describe(
    "The provider's id of the call (in requests: call_1, call_2, … in order of appearance)",
  ),
  name: z.string(),
  arguments: z.string().describe("The raw JSON text the model produced"),
});

// Kept as the provider signed it, whatever its kind (Anthropic thinking, OpenAI Responses reasoning items).
const reasoning = z.looseObject({ type: z.string() });

const message = z.strictObject({
  role: z.enum(["system", "user", "assistant", "tool"]),
  content: z.string(),
  tool_calls: z.array(toolCall).optional(),
  tool_call_id: z.string().optional(),
  name: z.string().describe("The tool's name, on tool messages").optional(),
  reasoning: z.array(reasoning).describe("Provider-signed reasoning sent back with the message").optional(),
});

const usage = z.strictObject({
  prompt_tokens: count,
  completion_tokens: count,
  cached_tokens: count.optional(),
  cache_write_tokens: count.optional(),
  reasoning_tokens: count.optional(),
});

const request = z.strictObject({
  model: z.string(),
  messages: z.array(message).describe("The transcript as sent, tool-call ids normalised"),
  tools: z.array(z.strictObject({
    name: z.string(),
    description: z.string(),
    parameters: z.record(z.string(), z.unknown()),
  })).describe("The tools offered, in the order offered"),
  max_tokens: count.optional(),
  temperature: z.number().optional(),
  output_schema: z.strictObject({ name: z.string(), schema: z.record(z.string(), z.unknown()) })
    .describe("output.schema, when asked of the provider natively").optional(),
});

const modelExchange = z.strictObject({
  type: z.literal("model"),
  request,
  response: z.strictObject({
    message: message.describe("The assistant's message"),
    usage: usage.nullable(),
    finish_reason: z.string(),
    stream: z.array(z.string()).describe("The text as it streamed in, chunk by chunk").optional(),
  }).describe("The answer; absent when the call failed").optional(),
  error: z.strictObject({
    message: z.string(),
    status: z.number().int().nullable(),
    reason: z.string().describe("provider_error or rate_limited"),
  }).describe("The provider's failure after its retries").optional(),
  duration_ms: count,
}).describe("One model call: the normalised request and what came back");

const toolExchange = z.strictObject({
  type: z.literal("tool"),
  tool: z.string(),
  tool_call_id: z.string(),
  server: z.string().describe("The MCP server of the tool").optional(),
  args: z.record(z.string(), z.unknown()).describe("The arguments it ran with (after pre_tool_call hooks)"),
  result: z.strictObject({ status: z.enum(["ok", "error", "denied"]), content: z.string() }),
  duration_ms: count,
}).describe("One tool execution (calls the job's rules denied are not executed, so not recorded)");

export const CassetteSchema = z.strictObject({
  cassette_version: z.literal(CASSETTE_VERSION),
  hermes_version: z.string(),
  job: z.strictObject({
    name: z.string(),
    hash: z.string().regex(/^sha256:[0-9a-f]{64}$/).describe(
      "SHA-256 of the resolved job and its inputs (keys sorted): whether a replay runs the same job",
    ),
    path: z.string().nullable(),
    dir: z.string(),
    inputs: z.record(z.string(), z.unknown()),
    spec: z.record(z.string(), z.unknown()).describe(
      "The resolved job (job.schema.json), secrets replaced: what hermes replay runs without --job",
    ),
  }),
  outcome: z.strictObject({ status: z.string(), terminal_reason: z.string() }).nullable(),
  exchanges: z.array(z.discriminatedUnion("type", [modelExchange, toolExchange])),
});

export function cassetteJsonSchema(): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(
    CassetteSchema.describe(
      `A Hermes cassette, version ${CASSETTE_VERSION}: a recorded run (hermes run --record, job key record:), ` +
        "replayed by hermes replay and hermes test",
    ),
    {
      target: "draft-2020-12",
      override: ({ jsonSchema }) => {
        if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      },
    },
  ) as Record<string, unknown>;
  return { $schema: "https://json-schema.org/draft/2020-12/schema", title: "Hermes cassette", ...rest };
}

/** Reads and checks a cassette file; a missing, malformed or foreign one is a ValidationError (exit 2). */
export async function loadCassette(path: string): Promise<Cassette> {
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch {
    throw new ValidationError(`Cannot read cassette "${path}": no such file`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`${path}: not JSON: ${(error as Error).message}`);
  }
  const version = (value as { cassette_version?: unknown } | null)?.cassette_version;
  if (version !== CASSETTE_VERSION) {
    throw new ValidationError(
      `Cannot replay ${path}: cassette_version is ${JSON.stringify(version ?? null)}; this Hermes reads ` +
        `version ${CASSETTE_VERSION}`,
    );
  }
  const parsed = CassetteSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ValidationError(`${path}: ${issue.path.join(".") || "(top)"}: ${issue.message}`);
  }
  return parsed.data as unknown as Cassette;
}
