/**
 * `provider: anthropic` with `platform: bedrock | vertex` through the real CLI and Anthropic's Bedrock and
 * Vertex SDKs, against the scripted Anthropic server on each cloud's route: Bedrock requests must carry a
 * SigV4 signature that verifies with the test secret key, Vertex requests the OAuth token a scripted STS
 * endpoint issued for the workload-identity credential file named by GOOGLE_APPLICATION_CREDENTIALS.
 */
import assert from "node:assert/strict";
import { runEvents, tempDir, writeFiles } from "../_testing/cli.ts";
import { startAnthropicServer } from "../_testing/anthropic_server.ts";

const ACCESS_KEY = "AKIDEXAMPLE0TEST1234";
const SECRET_KEY = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY";
const SESSION_TOKEN = "session-token-for-tests";

const encoder = new TextEncoder();
const hex = (bytes: ArrayBuffer) =>
  [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
const sha256 = async (data: string | Uint8Array<ArrayBuffer>) =>
  hex(await crypto.subtle.digest("SHA-256", typeof data === "string" ? encoder.encode(data) : data));
async function hmac(key: Uint8Array<ArrayBuffer> | string, data: string): Promise<Uint8Array<ArrayBuffer>> {
  const raw = typeof key === "string" ? encoder.encode(key) : key;
  const k = await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", k, encoder.encode(data)));
}

/** Why a request's SigV4 signature is wrong (null: it verifies), recomputed from the request itself. */
async function sigV4Problem(request: Request, body: string, region: string): Promise<string | null> {
  const auth = request.headers.get("authorization") ?? "";
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/
      .exec(auth);
  if (!m) return `authorization is not a SigV4 header: ${auth}`;
  const [, key, day, signedRegion, service, signedHeaders, signature] = m;
  if (key !== ACCESS_KEY) return `signed with key ${key}`;
  if (signedRegion !== region || service !== "bedrock") return `scope ${signedRegion}/${service}`;
  const date = request.headers.get("x-amz-date") ?? "";
  if (!/^\d{8}T\d{6}Z$/.test(date) || !date.startsWith(day!)) return `x-amz-date ${date}`;
  if (request.headers.get("x-amz-security-token") !== SESSION_TOKEN) return "no session token";
  const names = signedHeaders!.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date")) return `signed headers ${signedHeaders}`;
  const url = new URL(request.url);
  // Outside S3, SigV4 escapes the (already escaped) path once more.
  const path = url.pathname.split("/").map((s) => encodeURIComponent(s)).join("/");
  const headers = names.map((n) => `${n}:${(request.headers.get(n) ?? "").trim()}\n`).join("");
  const canonical = `POST\n${path}\n\n${headers}\n${signedHeaders}\n${await sha256(body)}`;
  const scope = `${day}/${region}/bedrock/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", date, scope, await sha256(canonical)].join("\n");
  let k = await hmac(`AWS4${SECRET_KEY}`, day!);
  for (const part of [region, "bedrock", "aws4_request"]) k = await hmac(k, part);
  const expected = hex((await hmac(k, toSign)).buffer as ArrayBuffer);
  return expected === signature ? null : "the signature does not verify with the secret key";
}

for (const stream of [false, true]) {
  Deno.test(`platform bedrock (stream: ${stream}): a tool round on /model/{id}/invoke${stream ? "-with-response-stream" : ""}, SigV4-signed with the AWS_* credentials`, async () => {
    const problems: string[] = [];
    await using server = await startAnthropicServer({
      bedrock: true,
      // The signature is recomputed from the request as it arrived: a problem is kept and answered 401.
      authorize: async (request, body) => {
        const problem = await sigV4Problem(request, body, "us-west-2");
        if (problem) problems.push(problem);
        return problem;
      },
      script: [
        { tool_calls: [{ name: "list_dir", arguments: { path: "." } }] },
        { content: "One job file." },
      ],
    });
    {
      const dir = await writeFiles(await tempDir(), {
        "job.yaml": "name: bedrock\nmodel: { provider: anthropic, platform: bedrock, " +
          `name: anthropic.claude-test-v1:0, stream: ${stream}, base_url: "${server.url}" }\n` +
          'prompt: list the files\ntools:\n  list_dir: { paths: ["."] }\n',
      });
      const { code, stderr, events } = await runEvents(dir, {
        env: {
          AWS_ACCESS_KEY_ID: ACCESS_KEY,
          AWS_SECRET_ACCESS_KEY: SECRET_KEY,
          AWS_SESSION_TOKEN: SESSION_TOKEN,
          AWS_REGION: "us-west-2",
          AWS_BEARER_TOKEN_BEDROCK: "",
        },
      });
      assert.equal(code, 0, stderr);
      assert.equal(events.at(-1)!.final, "One job file.");
      assert.deepEqual(problems, []);
      assert.equal(server.records.length, 2);
      const body = server.records[1]!.body;
      assert.equal(body.model, undefined, "Bedrock takes the model from the path");
      assert.equal(typeof body.anthropic_version, "string");
      assert.equal((body.messages![2]!.content as { type: string }[])[0]!.type, "tool_result");
      const paths = server.records.map((r) => new URL(r.url).pathname);
      const route = stream ? "invoke-with-response-stream" : "invoke";
      assert.deepEqual(paths, [0, 1].map(() => `/model/anthropic.claude-test-v1:0/${route}`));
    }
  });
}

Deno.test("platform bedrock: a signature with the wrong secret is caught by the check (it can fail)", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = await request.text();
    return new Response(await sigV4Problem(request, body, "us-west-2") ?? "ok");
  });
  try {
    const { AnthropicBedrock } = await import("@anthropic-ai/bedrock-sdk");
    let answer = "";
    const client = new AnthropicBedrock({
      awsAccessKey: ACCESS_KEY,
      awsSecretKey: "not-the-secret",
      awsSessionToken: SESSION_TOKEN,
      awsRegion: "us-west-2",
      apiKey: null,
      baseURL: `http://127.0.0.1:${server.addr.port}`,
      maxRetries: 0,
      fetch: async (input, init) => {
        const response = await fetch(input, init);
        answer = await response.text();
        return Response.json({
          id: "m",
          type: "message",
          role: "assistant",
          content: [],
          stop_reason: "end_turn",
        });
      },
    });
    await client.messages.create({ model: "m", max_tokens: 10, messages: [{ role: "user", content: "x" }] });
    assert.equal(answer, "the signature does not verify with the secret key");
  } finally {
    await server.shutdown();
  }
});

Deno.test("platform vertex: streamRawPredict with the bearer token Google's STS issued for the credential file", async () => {
  const exchanges: URLSearchParams[] = [];
  const sts = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    exchanges.push(new URLSearchParams(await request.text()));
    return Response.json({
      access_token: "ya29.test-vertex-token",
      issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
      token_type: "Bearer",
      expires_in: 3600,
    });
  });
  const server = await startAnthropicServer({
    route: (method, path) =>
      method === "POST" &&
      path ===
        "/v1/projects/proj-test/locations/us-east5/publishers/anthropic/models/claude-test:streamRawPredict",
    authorize: (request) =>
      request.headers.get("authorization") === "Bearer ya29.test-vertex-token" ? null : "bad bearer token",
    script: [{ content: "Hello from Vertex." }],
  });
  try {
    const dir = await tempDir();
    await writeFiles(dir, {
      "subject.jwt": "subject-token-from-the-workload",
      "adc.json": JSON.stringify({
        type: "external_account",
        // No project number in the audience: the client then asks no resource manager for the project.
        audience: "//iam.googleapis.com/locations/global/workloadIdentityPools/p/providers/t",
        subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
        token_url: `http://127.0.0.1:${sts.addr.port}/v1/token`,
        credential_source: { file: `${dir}/subject.jwt` },
      }),
      "job.yaml":
        "name: vertex\nmodel: { provider: anthropic, platform: vertex, name: claude-test, stream: true, " +
        `base_url: "${server.url}/v1" }\nprompt: hi\n`,
    });
    const { code, stderr, events } = await runEvents(dir, {
      env: {
        CLOUD_ML_REGION: "us-east5",
        ANTHROPIC_VERTEX_PROJECT_ID: "proj-test",
        GOOGLE_APPLICATION_CREDENTIALS: `${dir}/adc.json`,
      },
    });
    assert.equal(code, 0, stderr);
    assert.equal(events.at(-1)!.final, "Hello from Vertex.");
    assert.equal(exchanges.length, 1);
    assert.equal(exchanges[0]!.get("subject_token"), "subject-token-from-the-workload");
    assert.equal(server.records.length, 1);
    assert.equal(server.records[0]!.status, 200);
    assert.equal(server.records[0]!.body.model, undefined, "Vertex takes the model from the path");
  } finally {
    await sts.shutdown();
    await server.close();
  }
});

Deno.test("platform vertex: without CLOUD_ML_REGION it is exit 2 before any request", async () => {
  const dir = await writeFiles(await tempDir(), {
    "job.yaml":
      "name: vertex\nmodel: { provider: anthropic, platform: vertex, name: claude-test }\nprompt: hi\n",
  });
  const { code, stderr } = await runEvents(dir, {
    env: { CLOUD_ML_REGION: "", ANTHROPIC_VERTEX_PROJECT_ID: "p" },
  });
  assert.equal(code, 2);
  assert.match(stderr, /CLOUD_ML_REGION is not set/);
});
