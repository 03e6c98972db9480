/**
 * The API's OpenAPI 3.1 document, generated from the zod schemas the routes validate with (schemas.ts) and
 * the event schemas of the CLI's output: served at /v1/openapi.json and printed by `hermes schema openapi`.
 */
import { z } from "zod";
import { eventsJsonSchema } from "../core/event_schema.ts";
import * as S from "./schemas.ts";

type Json = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: "input" | "output" = "output"): Json {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, {
    target: "draft-2020-12",
    io,
    unrepresentable: "any",
    override: ({ jsonSchema }) => {
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
    },
  }) as Json;
  return rest;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (name: string, description: string) => ({
  description,
  content: { "application/json": { schema: ref(name) } },
});
const problem = (description: string) => ({
  description,
  content: { "application/problem+json": { schema: ref("Problem") } },
});
const guarded = {
  "400": problem("Invalid request"),
  "401": problem("No token, or not a live one"),
  "403": problem("The token lacks the scope"),
  "429": problem("Over the token's rate limit (see Retry-After)"),
};
const idParam = (what: string) => ({
  name: "id",
  in: "path",
  required: true,
  schema: { type: "string" },
  description: `The ${what}'s id or a unique prefix of it`,
});

function queryParams(schema: z.ZodObject): Json[] {
  const { properties = {} } = schemaOf(schema, "input") as { properties?: Record<string, Json> };
  return Object.entries(properties).map(([name, s]) => ({ name, in: "query", required: false, schema: s }));
}

function op(scope: string | null, summary: string, rest: Json): Json {
  return { summary, ...(scope ? { security: [{ bearer: [scope] }] } : { security: [] }), ...rest };
}

export function openApiDocument(version: string): Json {
  const document = describedApi(version);
  // Each operation named for generated clients (and linters): its method and path, e.g. getRunsByIdEvents.
  for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(operations)) {
      operation.operationId ??= operationId(method, path);
    }
  }
  return document;
}

function operationId(method: string, path: string): string {
  const words = path.split("/").filter((part) => part !== "" && part !== "v1").map((part) => {
    const param = /^\{(.+)\}$/.exec(part)?.[1];
    const word = (param ? `by_${param}` : part).replace(
      /[^A-Za-z0-9]+(.)?/g,
      (_m, c: string) => (c ?? "").toUpperCase(),
    );
    return word.charAt(0).toUpperCase() + word.slice(1);
  });
  return method + words.join("");
}

function describedApi(version: string): Json {
  const events = eventsJsonSchema();
  const { $schema: _, ...eventSchema } = events;
  return {
    openapi: "3.1.0",
    info: {
      title: "Hermes HTTP API",
      version,
      description:
        "hermes serve: runs, their events, sessions, approvals. Errors are RFC 9457 problem details.",
      license: { name: "MIT", identifier: "MIT" },
    },
    // Relative: the server this document was fetched from (hermes serve --listen).
    servers: [{ url: "/", description: "The hermes serve answering this document" }],
    jsonSchemaDialect: "https://json-schema.org/draft/2020-12/schema",
    security: [{ bearer: [] }],
    paths: {
      "/healthz": { get: op(null, "Liveness", { responses: { "200": json("Health", "Serving") } }) },
      "/readyz": {
        get: op(null, "Readiness: the store answers", {
          responses: { "200": json("Ready", "Ready"), "503": problem("The store is not reachable") },
        }),
      },
      "/metrics": {
        get: op(null, "Prometheus metrics", {
          responses: { "200": { description: "Prometheus text format", content: { "text/plain": {} } } },
        }),
      },
      "/v1/openapi.json": {
        get: op(null, "This document", { responses: { "200": { description: "OpenAPI 3.1" } } }),
      },
      "/v1/runs": {
        post: op("runs:write", "Submit a job to the queue", {
          requestBody: { required: true, content: { "application/json": { schema: ref("SubmitBody") } } },
          responses: {
            "202": json("Submitted", "Queued (or the run its key submitted before)"),
            ...guarded,
            "404": problem("No such job name"),
            "413": problem("Body too large"),
            "415": problem("Not a JSON body"),
          },
        }),
        get: op("runs:read", "List runs, newest first", {
          parameters: queryParams(S.RunQuery),
          responses: { "200": json("RunList", "Runs"), ...guarded },
        }),
      },
      "/v1/runs/{id}": {
        get: op("runs:read", "A run, with its result when it ended", {
          parameters: [idParam("run")],
          responses: { "200": json("Run", "The run"), ...guarded, "404": problem("No such run") },
        }),
      },
      "/v1/runs/{id}/cancel": {
        post: op("runs:write", "Cancel a queued run, or ask its worker to stop a running one", {
          parameters: [idParam("run")],
          responses: {
            "202": json("Run", "The run as it is now"),
            ...guarded,
            "404": problem("No such run"),
          },
        }),
      },
      "/v1/runs/{id}/events": {
        get: op(
          "runs:read",
          "The run's events as Server-Sent Events (id: = seq); ends after the result event",
          {
            parameters: [
              idParam("run"),
              {
                name: "Last-Event-ID",
                in: "header",
                required: false,
                schema: { type: "string", pattern: "^[0-9]+$" },
                description: "Resume after this seq",
              },
              {
                name: "after",
                in: "query",
                required: false,
                schema: { type: "string", pattern: "^[0-9]+$" },
                description: "Resume after this seq (for clients that cannot set Last-Event-ID)",
              },
            ],
            responses: {
              "200": {
                description: "Each event's data is one event (components.schemas.Event)",
                content: { "text/event-stream": { schema: { type: "string" } } },
              },
              ...guarded,
              "404": problem("No such run"),
              "429": problem("Over the rate limit or the token's open streams"),
            },
          },
        ),
      },
      "/v1/hooks/{job}": {
        post: op(null, "A signed webhook delivery starts a run of a job with triggers.webhook", {
          description: "Authenticated by its signature (X-Hub-Signature-256, or X-Hermes-Timestamp and " +
            "X-Hermes-Signature-256), not a token. A delivery id seen before answers the run it started.",
          parameters: [
            {
              name: "job",
              in: "path",
              required: true,
              schema: { type: "string" },
              description: "The job's name in the server's jobs folder",
            },
          ],
          requestBody: { required: true, content: { "application/json": { schema: {} } } },
          responses: {
            "202": json("Submitted", "Queued (or the run this delivery id started before)"),
            "200": json("HookIgnored", "Acknowledged: the trigger does not list the event"),
            "400": problem("Not JSON, or a bad delivery id"),
            "401": problem("No signature, or one that does not match the body"),
            "404": problem("No such job, or it has no webhook trigger"),
            "413": problem("Body too large"),
            "415": problem("Not a JSON body"),
            "422": problem("The inputs mapped from the body do not fit the job; nothing was queued"),
          },
        }),
      },
      "/v1/approvals": {
        get: op("approvals", "Tool calls parked for a decision (approval: {api: true}), oldest first", {
          parameters: queryParams(S.ApprovalQuery),
          responses: { "200": json("ApprovalList", "Approvals"), ...guarded },
        }),
      },
      "/v1/approvals/{id}": {
        get: op("approvals", "An approval", {
          parameters: [{ ...idParam("approval"), description: "The approval's id" }],
          responses: {
            "200": json("Approval", "The approval"),
            ...guarded,
            "404": problem("No such approval"),
          },
        }),
        post: op("approvals", "Decide a pending approval: the waiting run continues at once", {
          parameters: [{ ...idParam("approval"), description: "The approval's id" }],
          requestBody: { required: true, content: { "application/json": { schema: ref("DecideBody") } } },
          responses: {
            "200": json("Approval", "The approval as decided"),
            ...guarded,
            "404": problem("No such approval"),
            "409": problem("Decided already, or its time is up"),
            "413": problem("Body too large"),
            "415": problem("Not a JSON body"),
          },
        }),
      },
      "/v1/sessions": {
        get: op("sessions:read", "List sessions, newest first", {
          parameters: queryParams(S.SessionQuery),
          responses: { "200": json("SessionList", "Sessions"), ...guarded },
        }),
      },
      "/v1/sessions/{id}": {
        get: op("sessions:read", "A session", {
          parameters: [idParam("session")],
          responses: {
            "200": json("SessionView", "The session"),
            ...guarded,
            "404": problem("No such session"),
          },
        }),
      },
      "/v1/sessions/{id}/messages": {
        get: op("sessions:read", "A session's transcript", {
          parameters: [idParam("session")],
          responses: {
            "200": json("Messages", "Its messages"),
            ...guarded,
            "404": problem("No such session"),
          },
        }),
      },
      "/v1/sessions/{id}/prompt": {
        post: op("sessions:write", "Run one turn of a session; answers its result", {
          parameters: [idParam("session")],
          requestBody: { required: true, content: { "application/json": { schema: ref("PromptBody") } } },
          responses: {
            "200": json("Result", "The turn's result object"),
            ...guarded,
            "404": problem("No such session"),
            "409": problem("The session is busy elsewhere"),
            "413": problem("Body too large"),
            "415": problem("Not a JSON body"),
          },
        }),
      },
    },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "hermes tokens create" } },
      schemas: {
        Problem: schemaOf(S.Problem),
        SubmitBody: schemaOf(S.SubmitBody, "input"),
        PromptBody: schemaOf(S.PromptBody, "input"),
        Run: schemaOf(S.Run),
        Submitted: schemaOf(S.Submitted),
        HookIgnored: schemaOf(S.HookIgnored),
        Approval: schemaOf(S.Approval),
        ApprovalList: schemaOf(S.ApprovalList),
        DecideBody: schemaOf(S.DecideBody, "input"),
        RunList: schemaOf(S.RunList),
        SessionList: schemaOf(S.SessionList),
        SessionView: schemaOf(S.SessionView),
        Messages: schemaOf(S.Messages),
        Result: schemaOf(S.Result),
        Health: schemaOf(S.Health),
        Ready: schemaOf(S.Ready),
        Event: rebase(eventSchema, "#/components/schemas/Event"),
      },
    },
  };
}

/** The events schema's `#/$defs/…` references, pointed at where it sits in this document. */
function rebase(schema: Json, at: string): Json {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', `"${at}/$defs/`));
}
