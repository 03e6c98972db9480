/**
 * Completion notifications of queued runs through the real CLI: a receiver that fails the first two
 * deliveries gets the third, signed (HMAC-SHA256 over timestamp and body) and with the same delivery id; a
 * receiver that never answers costs the worker nothing; a notify command gets the record on stdin; a
 * notification URL outside the trust policy is refused at submit (exit 2, nothing queued).
 */
import assert from "node:assert/strict";
import { hermes, spawnHermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { createHmac } from "node:crypto";
import { startServe } from "../_testing/serve.ts";

const SECRET = "s3cret-for-tests";

/** What a receiver computes (node:crypto, not the program's own code): sha256=HMAC(secret, timestamp.body). */
function signature(secret: string, timestamp: string, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
}

function job(notify: string): string {
  return `name: notified
model: { provider: scripted, script: ./replies.yaml }
inputs: { n: { type: number, default: 1 } }
prompt: run {{ inputs.n }}
notify:
${notify}
`;
}

async function workspace(notify: string, files: Record<string, string> = {}) {
  const dir = await writeFiles(await tempDir("hermes-notify-"), {
    "job.yaml": job(notify),
    "replies.yaml": "- content: done\n",
    ...files,
  });
  const cli: typeof hermes = (args, options = {}) =>
    hermes(args, { cwd: dir, home: `${dir}/home`, ...options, env: { HOOK_SECRET: SECRET, ...options.env } });
  const daemon = () =>
    spawnHermes(["daemon", "--concurrency", "1"], {
      cwd: dir,
      home: `${dir}/home`,
      env: { HOOK_SECRET: SECRET },
    });
  return { dir, cli, daemon };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, deadlineMs = 60_000): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`gave up waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("notify: a receiver failing twice gets the third delivery, signed, with the same delivery id", async () => {
  const seen: { headers: Headers; body: string }[] = [];
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
    seen.push({ headers: request.headers, body: await request.text() });
    return new Response(seen.length <= 2 ? "not yet" : "ok", { status: seen.length <= 2 ? 503 : 200 });
  });
  const url = `http://127.0.0.1:${server.addr.port}/hook`;
  const { dir, cli, daemon } = await workspace(
    `  - { url: "${url}", secret_env: HOOK_SECRET, on: [success] }`,
  );
  const child = daemon();
  try {
    const id = (await cli(["submit", "job.yaml"])).stdout.trim();
    const waited = await cli(["runs", "wait", id, "--output", "json"]);
    assert.equal(waited.code, 0, waited.stderr);
    const run = await until("the third delivery", async () => {
      const shown = JSON.parse((await cli(["runs", "show", id, "--json"])).stdout);
      return shown.deliveries[0]?.status === "delivered" ? shown : undefined;
    });
    assert.equal(seen.length, 3);
    const ids = new Set(seen.map((s) => s.headers.get("x-hermes-delivery")));
    assert.equal(ids.size, 1, "one delivery id across the retries");
    assert.equal(run.deliveries[0].id, [...ids][0]);
    assert.equal(run.deliveries[0].attempts, 3);
    assert.equal(run.deliveries[0].response_status, 200);
    const third = seen[2]!;
    assert.equal(third.headers.get("x-hermes-event"), "run.success");
    const timestamp = third.headers.get("x-hermes-timestamp")!;
    assert.match(timestamp, /^\d+$/);
    assert.equal(third.headers.get("x-hermes-signature-256"), signature(SECRET, timestamp, third.body));
    assert.notEqual(
      third.headers.get("x-hermes-signature-256"),
      signature("another secret", timestamp, third.body),
    );
    const payload = JSON.parse(third.body);
    assert.equal(payload.event, "run.success");
    assert.equal(payload.run.id, id);
    assert.equal(payload.run.status, "success");
    assert.equal(payload.run.result.final, "done");
    // The notification changed nothing of the run.
    assert.equal(run.status, "success");
    assert.equal(run.exit_code, 0);
  } finally {
    child.kill("SIGTERM");
    await child.output();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("notify: a receiver that never answers costs the worker nothing; a command gets the record", async () => {
  let hits = 0;
  const hang = Promise.withResolvers<void>();
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async () => {
    hits++;
    await hang.promise;
    return new Response("late");
  });
  const url = `http://127.0.0.1:${server.addr.port}/hook`;
  const { dir, cli, daemon } = await workspace(
    `  - { url: "${url}" }\n  - { command: ["./record.sh"], on: [success] }`,
    { "record.sh": '#!/bin/sh\ncat > "notified-$$.json"\n' },
  );
  await Deno.chmod(`${dir}/record.sh`, 0o755);
  const child = daemon();
  try {
    const ids: string[] = [];
    for (let n = 1; n <= 3; n++) {
      ids.push((await cli(["submit", "job.yaml", "--input", `n=${n}`])).stdout.trim());
    }
    // One worker slot: each run starts while the previous one's delivery still hangs.
    for (const id of ids) {
      const waited = await cli(["runs", "wait", id, "--timeout", "60s"]);
      assert.equal(waited.code, 0, waited.stderr);
    }
    assert.ok(hits >= 1, "the receiver was called");
    const shown = JSON.parse((await cli(["runs", "show", ids[0]!, "--json"])).stdout);
    assert.equal(shown.status, "success");
    const files = await until("the command's three records", async () => {
      const names: string[] = [];
      for await (const entry of Deno.readDir(dir)) {
        if (entry.name.startsWith("notified-")) names.push(entry.name);
      }
      return names.length === 3 ? names : undefined;
    });
    const records = files.map((f) => JSON.parse(Deno.readTextFileSync(`${dir}/${f}`)));
    assert.deepEqual(new Set(records.map((r) => r.run.id)), new Set(ids));
  } finally {
    child.kill("SIGTERM");
    const out = await child.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    hang.resolve();
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("notify: a URL outside the trust policy is refused at submit (exit 2, nothing queued)", async () => {
  const { dir, cli } = await workspace(`  - { url: "https://evil.example/hook" }`, {
    "policy.yaml": 'notify: { urls: ["https://hooks.example.com/*"] }\n',
    "ok.yaml": job(`  - { url: "https://hooks.example.com/hermes" }`),
  });
  const refused = await cli(["--policy", "policy.yaml", "submit", "job.yaml"]);
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /job\.yaml:\d+:\d+: notify\[0\]\.url: refused by policy .*notify\.urls.*evil\.example/,
  );
  assert.equal(JSON.parse((await cli(["runs", "list", "--json"])).stdout).length, 0);
  const allowed = await cli(["--policy", "policy.yaml", "submit", "ok.yaml"]);
  assert.equal(allowed.code, 0, allowed.stderr);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("notify: a run worked by hermes serve is notified as a daemon's is", async () => {
  const seen: { headers: Headers; body: string }[] = [];
  const receiver = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
    seen.push({ headers: request.headers, body: await request.text() });
    return new Response("ok");
  });
  const url = `http://127.0.0.1:${receiver.addr.port}/hook`;
  const { dir, cli } = await workspace(`  - { url: "${url}", secret_env: HOOK_SECRET, on: [success] }`);
  await using server = await startServe(`${dir}/home`, [], { cwd: dir, env: { HOOK_SECRET: SECRET } });
  try {
    const id = (await cli(["submit", "job.yaml"])).stdout.trim();
    const waited = await cli(["runs", "wait", id, "--output", "json"]);
    assert.equal(waited.code, 0, waited.stderr);
    const run = await until("the delivery", async () => {
      const shown = JSON.parse((await cli(["runs", "show", id, "--json"])).stdout);
      return shown.deliveries[0]?.status === "delivered" ? shown : undefined;
    });
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.headers.get("x-hermes-event"), "run.success");
    const timestamp = seen[0]!.headers.get("x-hermes-timestamp")!;
    assert.equal(
      seen[0]!.headers.get("x-hermes-signature-256"),
      signature(SECRET, timestamp, seen[0]!.body),
    );
    assert.equal(run.deliveries[0].id, seen[0]!.headers.get("x-hermes-delivery"));
  } finally {
    await server.stop();
    await receiver.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("notify: cancelling a queued run delivers to entries listening for cancelled, once, not to others", async () => {
  const seen: { path: string; body: string }[] = [];
  const receiver = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, async (request) => {
    seen.push({ path: new URL(request.url).pathname, body: await request.text() });
    return new Response("ok");
  });
  const base = `http://127.0.0.1:${receiver.addr.port}`;
  const { cli, daemon, dir } = await workspace(
    `  - { url: "${base}/cancelled", secret_env: HOOK_SECRET, on: [cancelled] }\n` +
      `  - { url: "${base}/success", on: [success] }`,
  );
  // No worker yet: the run is cancelled while queued, so no worker ever holds it.
  const id = (await cli(["submit", "job.yaml", "--not-before", "1h"])).stdout.trim();
  const cancelled = await cli(["runs", "cancel", id]);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  const first = daemon();
  const second = daemon();
  try {
    const run = await until("the cancelled delivery", async () => {
      const shown = JSON.parse((await cli(["runs", "show", id, "--json"])).stdout);
      return shown.deliveries[0]?.status === "delivered" ? shown : undefined;
    });
    assert.equal(run.status, "cancelled");
    assert.equal(run.deliveries.length, 1);
    assert.match(run.deliveries[0].target, /\/cancelled$/);
    // Two workers looked: the delivery was sent once, to the entry listening for cancelled.
    await new Promise((r) => setTimeout(r, 1_500));
    assert.deepEqual(seen.map((s) => s.path), ["/cancelled"]);
    assert.equal(JSON.parse(seen[0]!.body).run.status, "cancelled");
  } finally {
    for (const child of [first, second]) {
      child.kill("SIGTERM");
      await child.output();
    }
    await receiver.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
