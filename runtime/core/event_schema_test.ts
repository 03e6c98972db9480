import assert from "node:assert/strict";
import { hermes, ROOT } from "../../tests/_testing/cli.ts";
import { outputSchemas } from "../../tests/_testing/output_schemas.ts";
import { ManualClock } from "./_testing.ts";
import { eventFields } from "./event_schema.ts";
import { EventBus, type EventType, SCHEMA_VERSION } from "./events.ts";
import { buildResult, endingOfAnswer, NO_USAGE } from "../session/outcome.ts";

for (const name of ["result", "events", "cassette"]) {
  Deno.test(`output schemas: schemas/${name}.schema.json is what \`hermes schema ${name}\` prints`, async () => {
    const printed = await hermes(["schema", name]);
    assert.equal(printed.code, 0, printed.stderr);
    const committed = await Deno.readTextFile(`${ROOT}/schemas/${name}.schema.json`);
    assert.equal(
      committed,
      printed.stdout,
      `schemas/${name}.schema.json is stale: run \`deno task schemas\``,
    );
  });
}

Deno.test("output schemas: `hermes schema` is `hermes schema job`; an unknown name is one line, exit 2", async () => {
  const [plain, job, unknown] = await Promise.all([
    hermes(["schema"]),
    hermes(["schema", "job"]),
    hermes(["schema", "event"]),
  ]);
  assert.equal(plain.code, 0, plain.stderr);
  assert.equal(plain.stdout, job.stdout);
  assert.ok(JSON.parse(job.stdout).properties.prompt, "the job-file schema");
  assert.equal(unknown.code, 2);
  assert.equal(unknown.stdout, "");
  assert.equal(
    unknown.stderr.trim(),
    'hermes schema: unknown schema "event": expected job (the default), result, events, cassette or openapi',
  );
});

Deno.test("output schemas: one $defs entry per event type, each with schema_version", async () => {
  const schemas = await outputSchemas();
  assert.deepEqual(schemas.types.sort(), Object.keys(eventFields).sort());
  const events = JSON.parse(await Deno.readTextFile(`${ROOT}/schemas/events.schema.json`));
  for (const type of schemas.types as EventType[]) {
    const def = events.$defs[type];
    for (const member of def.anyOf ?? [def]) {
      assert.ok(member.required.includes("schema_version"), type);
      assert.equal(member.properties.schema_version.const, SCHEMA_VERSION, type);
    }
  }
});

Deno.test("output schemas: emitted events and built results match; a changed one does not", async () => {
  const schemas = await outputSchemas();
  const bus = new EventBus(new ManualClock(Date.UTC(2026, 0, 2)));
  const call = bus.emit("s", {
    type: "tool.call",
    tool: "shell",
    tool_call_id: "c1",
    args: { command: "ls" },
  });
  const end = bus.emit("s", {
    type: "turn.end",
    turn: 1,
    usage: {
      prompt_tokens: 3,
      completion_tokens: 2,
      cached_tokens: 0,
      cache_write_tokens: 0,
      reasoning_tokens: 0,
    },
    cost_usd: null,
    finish_reason: "stop",
  });
  assert.deepEqual(schemas.event(call), []);
  assert.deepEqual(schemas.event(end), []);
  const { schema_version: _, ...unversioned } = call;
  assert.match(schemas.event(unversioned).join("\n"), /must have required property 'schema_version'/);
  assert.match(
    schemas.event({ ...call, schema_version: 2 }).join("\n"),
    /schema_version must be equal to constant/,
  );
  assert.match(schemas.event({ ...call, extra: 1 }).join("\n"), /must NOT have additional properties.*extra/);
  assert.match(schemas.event({ ...call, type: "tool.cal" }).join("\n"), /unknown event type "tool.cal"/);
  assert.match(
    schemas.event({ ...end, usage: { prompt_tokens: 3, completion_tokens: 2 } }).join("\n"),
    /usage.*cached_tokens/,
  );
  assert.match(schemas.event({ ...call, ts: "yesterday" }).join("\n"), /\/ts must match format "date-time"/);

  const result = buildResult(endingOfAnswer({ final: "done" }), {
    session_id: "s",
    job: "j",
    labels: {},
    final: "done",
    output: null,
    turns: 1,
    before: NO_USAGE,
    after: { ...NO_USAGE, prompt_tokens: 5 },
    started: 0,
    ended: 10,
    compactions: 0,
  });
  assert.equal(result.schema_version, SCHEMA_VERSION);
  assert.deepEqual(Object.keys(result).slice(0, 3), ["type", "schema_version", "status"]);
  assert.deepEqual(schemas.result(result), []);
  assert.match(schemas.result({ ...result, status: "ok" }).join("\n"), /\/status must be equal to one of/);
  assert.match(schemas.result({ ...result, turn: 1 }).join("\n"), /additional properties/);
  // The stream-json result line is the same object with its envelope's seq and ts.
  assert.deepEqual(schemas.result({ ...result, seq: 7, ts: "2026-01-02T00:00:00.000Z" }), []);
  assert.match(schemas.result({ ...result, seq: 0 }).join("\n"), /must be > ?=? ?[01]/);
});
