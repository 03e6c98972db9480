/**
 * Every route's real responses, from a real `hermes serve`, validate against the OpenAPI document it serves
 * at /v1/openapi.json (the same as `hermes schema openapi`): successes, each event of a run's stream, and
 * the problem+json errors.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { call, readSse, type Reply, startServe } from "../_testing/serve.ts";
import { startOpenAIServer } from "../_testing/openai_server.ts";

type Doc = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
};

Deno.test("serve: every route's responses validate against /v1/openapi.json", async () => {
  const model = await startOpenAIServer({
    script: [
      { match: "more", content: "prompted" },
      { match: "ask", tool_calls: [{ name: "read_file", arguments: { path: "/etc/hostname" } }] },
      { match: "ask", content: "asked" },
      { content: "ran" },
      { content: "ran" },
    ],
  });
  const home = await tempDir();
  const jobs = await writeFiles(`${home}/jobs`, {
    "greet.yaml":
      `name: greet\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\nprompt: hello\n` +
      `triggers: { webhook: { secret_env: HOOK_SECRET, events: [issues] } }\n`,
    "ask.yaml": `name: ask\nmodel: { name: m, base_url: "${model.url}", api_key_env: none }\nprompt: ask\n` +
      `tools: { read_file: { paths: [./in] } }\napproval: { api: true }\n`,
  });
  try {
    const made = await hermes(["tokens", "create", "--scope", "admin"], { home });
    const admin = made.stdout.trim();
    const reader = (await hermes(["tokens", "create", "--scope", "runs:read"], { home })).stdout.trim();
    await using server = await startServe(home, ["--jobs", jobs, "--max-body", "1KiB"], {
      cwd: home,
      env: { HOOK_SECRET: "hook" },
    });
    const served = await call(`${server.url}/v1/openapi.json`);
    assert.equal(served.status, 200);
    const printed = await hermes(["schema", "openapi"], { home });
    assert.deepEqual(JSON.parse(printed.stdout), served.body);
    const doc = served.body as Doc;
    assert.equal((doc as unknown as { openapi: string }).openapi, "3.1.0");

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema(doc as object, "api");
    const covered = new Set<string>();
    const check = (route: string, method: string, reply: Reply) => {
      const response = doc.paths[route]?.[method]?.responses[String(reply.status)];
      assert.ok(response, `${method} ${route}: status ${reply.status} is not documented`);
      covered.add(`${method} ${route}`);
      const type = reply.headers.get("content-type")!.split(";")[0]!;
      const content = response.content?.[type] as { schema?: { $ref?: string } } | undefined;
      assert.ok(content, `${method} ${route} ${reply.status}: ${type} is not documented`);
      if (!content.schema?.$ref) return;
      const validate = ajv.getSchema(`api${content.schema.$ref}`)!;
      assert.ok(
        validate(reply.body),
        `${method} ${route} ${reply.status}: ${ajv.errorsText(validate.errors)}`,
      );
    };
    const u = (path: string) => `${server.url}${path}`;

    check("/healthz", "get", await call(u("/healthz")));
    check("/readyz", "get", await call(u("/readyz")));
    check("/metrics", "get", await call(u("/metrics")));
    covered.add("get /v1/openapi.json");

    const submitted = await call(u("/v1/runs"), { token: admin, body: { job: "greet" } });
    check("/v1/runs", "post", submitted);
    const id = submitted.body.id as string;
    const stream = await readSse(u(`/v1/runs/${id}/events`), { token: admin });
    assert.equal(stream.events.at(-1)!.event, "result");
    const event = ajv.getSchema("api#/components/schemas/Event")!;
    for (const e of stream.events) {
      assert.ok(event(JSON.parse(e.data)), `${e.event}: ${ajv.errorsText(event.errors)}`);
    }
    covered.add("get /v1/runs/{id}/events");
    check("/v1/runs/{id}", "get", await call(u(`/v1/runs/${id}`), { token: admin }));
    check("/v1/runs", "get", await call(u("/v1/runs"), { token: admin }));
    const queued = await call(u("/v1/runs"), { token: admin, body: { job: "greet", priority: -1 } });
    check(
      "/v1/runs/{id}/cancel",
      "post",
      await call(u(`/v1/runs/${queued.body.id}/cancel`), { token: admin, method: "POST" }),
    );

    const session = (await call(u(`/v1/runs/${id}`), { token: admin })).body.session_id as string;
    check("/v1/sessions", "get", await call(u("/v1/sessions"), { token: admin }));
    check("/v1/sessions/{id}", "get", await call(u(`/v1/sessions/${session}`), { token: admin }));
    check(
      "/v1/sessions/{id}/messages",
      "get",
      await call(u(`/v1/sessions/${session}/messages`), { token: admin }),
    );
    const prompted = await call(u(`/v1/sessions/${session}/prompt`), {
      token: admin,
      body: { text: "more" },
    });
    check("/v1/sessions/{id}/prompt", "post", prompted);
    assert.equal(prompted.body.final, "prompted", JSON.stringify(prompted.body));

    // A parked tool call: listed, read, decided (then 409), its events in the stream.
    const asking = await call(u("/v1/runs"), { token: admin, body: { job: "ask" } });
    let listed = await call(u("/v1/approvals"), { token: admin });
    for (let i = 0; i < 1200 && listed.body.approvals?.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      listed = await call(u("/v1/approvals"), { token: admin });
    }
    check("/v1/approvals", "get", listed);
    const parked = listed.body.approvals[0].id as string;
    check("/v1/approvals/{id}", "get", await call(u(`/v1/approvals/${parked}`), { token: admin }));
    const allow = { decision: "allow", reason: "fine" };
    check(
      "/v1/approvals/{id}",
      "post",
      await call(u(`/v1/approvals/${parked}`), { token: admin, body: allow }),
    );
    const asked = await readSse(u(`/v1/runs/${asking.body.id}/events`), { token: admin });
    assert.ok(asked.events.some((e) => e.event === "approval.resolved"));
    for (const e of asked.events) {
      assert.ok(event(JSON.parse(e.data)), `${e.event}: ${ajv.errorsText(event.errors)}`);
    }
    check(
      "/v1/approvals/{id}",
      "post",
      await call(u(`/v1/approvals/${parked}`), { token: admin, body: allow }),
    );
    check("/v1/approvals/{id}", "post", await call(u("/v1/approvals/nope"), { token: admin, body: allow }));
    check("/v1/approvals/{id}", "get", await call(u("/v1/approvals/nope"), { token: admin }));
    check("/v1/approvals", "get", await call(u("/v1/approvals"), { token: reader }));

    // The errors, each as documented.
    check("/v1/runs", "get", await call(u("/v1/runs")));
    check("/v1/sessions", "get", await call(u("/v1/sessions"), { token: reader }));
    check("/v1/runs/{id}", "get", await call(u("/v1/runs/nope"), { token: reader }));
    check("/v1/runs", "post", await call(u("/v1/runs"), { token: admin, body: { job: "missing" } }));
    check("/v1/runs", "post", await call(u("/v1/runs"), { token: admin, body: { job: 1 } }));
    check("/v1/runs", "post", await call(u("/v1/runs"), { token: admin, body: { job: "x".repeat(2000) } }));
    check(
      "/v1/runs",
      "post",
      await call(u("/v1/runs"), { token: admin, body: "job=x", headers: { "content-type": "text/plain" } }),
    );
    check(
      "/v1/sessions/{id}/prompt",
      "post",
      await call(u("/v1/sessions/nope/prompt"), { token: admin, body: { text: "x" } }),
    );

    const hook = (event: string, signature?: string, body = "{}") =>
      call(u("/v1/hooks/greet"), {
        body,
        headers: {
          "x-github-event": event,
          "x-github-delivery": `d-${event}`,
          "x-hub-signature-256": signature ??
            "sha256=" + createHmac("sha256", "hook").update(body).digest("hex"),
        },
      });
    check("/v1/hooks/{job}", "post", await hook("issues"));
    check("/v1/hooks/{job}", "post", await hook("push"));
    check("/v1/hooks/{job}", "post", await hook("issues", "sha256=" + "0".repeat(64)));
    check("/v1/hooks/{job}", "post", await hook("issues", undefined, "{"));
    check("/v1/hooks/{job}", "post", await call(u("/v1/hooks/missing"), { body: {} }));

    const routes = Object.entries(doc.paths).flatMap(([route, methods]) =>
      Object.keys(methods).map((m) => `${m} ${route}`)
    );
    assert.deepEqual(routes.filter((r) => !covered.has(r)), [], "every documented route was exercised");
    assert.equal(await server.stop(), 0, server.stderr());
  } finally {
    await model.close();
    await Deno.remove(home, { recursive: true });
  }
});
