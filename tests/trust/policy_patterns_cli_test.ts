/**
 * Trust-policy patterns judge what a value means, not how it is spelled: URLs are compared scheme, host,
 * port and path apart (`*` in a host is one label), host rules in the sandbox grammar, and `http_fetch`
 * itself refuses the host's own network unless an entry names the address. Each denial beside the
 * legitimate value that still passes. Real CLI; the fetch cases against a local server that records hits.
 */
import assert from "node:assert/strict";
import { hermes, runEvents, tempDir, writeFiles } from "../_testing/cli.ts";

const SCRIPTED = "model: { provider: scripted, script: ./r.yaml }\n";

async function project(files: Record<string, string>): Promise<string> {
  const dir = await tempDir("hermes-patterns-");
  return await writeFiles(dir, { "r.yaml": "- content: done\n", ...files });
}

/** `hermes --policy policy.yaml validate job.yaml`: exit code and stderr. */
async function validate(dir: string, args: string[] = ["--policy", "policy.yaml"]) {
  return await hermes([...args, "validate", "job.yaml"], { cwd: dir, home: dir });
}

Deno.test("policy patterns: a base_url pattern compares the host, not the text; a real host of the pattern passes", async () => {
  const policy = 'models: { base_urls: ["https://*.openai.azure.com/*"] }\n';
  const cases: [string, boolean][] = [
    ["https://ATTACKER/.openai.azure.com/", false],
    ["https://attacker.example/x.openai.azure.com/v1", false],
    ["https://x.openai.azure.com@attacker.example/v1", false],
    ["https://a.b.openai.azure.com/v1", false],
    ["https://myres.openai.azure.com:8443/v1", false],
    ["http://myres.openai.azure.com/v1", false],
    ["https://myres.openai.azure.com/openai/v1", true],
    ["https://MyRes.OpenAI.Azure.com/openai/v1", true],
  ];
  for (const [url, allowed] of cases) {
    const dir = await project({
      "policy.yaml": policy,
      "job.yaml": `name: p\nmodel: { provider: openai, name: m, base_url: "${url}" }\nprompt: hi\n`,
    });
    try {
      const run = await validate(dir);
      if (allowed) assert.equal(run.code, 0, `${url}: ${run.stderr}`);
      else {
        assert.equal(run.code, 2, `${url} must be refused: ${run.stderr}`);
        assert.match(run.stderr, /model\.base_url: refused by policy policy\.yaml \(models\.base_urls at /);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("policy patterns: mcp.urls and approval.urls parse the URL too", async () => {
  const dir = await project({
    "policy.yaml":
      'mcp: { urls: ["https://*.example.com/mcp"] }\napproval: { urls: ["https://approve.example.com/*"] }\n',
    "job.yaml": `name: p
${SCRIPTED}prompt: hi
mcp_servers:
  bad: { url: "https://evil.test/.example.com/mcp" }
  good: { url: "https://tools.example.com/mcp" }
approval: { url: "https://evil.test/approve.example.com/x" }
`,
  });
  try {
    const run = await validate(dir);
    assert.equal(run.code, 2, run.stderr);
    const lines = run.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 2, run.stderr);
    assert.match(lines[0]!, /mcp_servers\.bad\.url: refused by policy policy\.yaml \(mcp\.urls at /);
    assert.match(lines[1]!, /approval\.url: refused by policy policy\.yaml \(approval\.urls at /);
    // The neighbour: the approver the pattern names.
    await Deno.writeTextFile(
      `${dir}/job.yaml`,
      `name: p\n${SCRIPTED}prompt: hi\napproval: { url: "https://approve.example.com/hook" }\n`,
    );
    const ok = await validate(dir);
    assert.equal(ok.code, 0, ok.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("policy patterns: network.hosts covers host rules, not strings that end like them", async () => {
  const dir = await project({ "policy.yaml": 'network: { hosts: ["*.example.com"] }\n' });
  try {
    for (const host of ["127.0.0.1#.example.com", "evil.test/.example.com", "example.com", "*"]) {
      await Deno.writeTextFile(
        `${dir}/job.yaml`,
        `name: p\n${SCRIPTED}prompt: hi\ntools: { http_fetch: { hosts: ["${host}"] } }\n`,
      );
      const run = await validate(dir);
      assert.equal(run.code, 2, `${host} must be refused: ${run.stderr}`);
      assert.match(run.stderr, /tools\.http_fetch\.hosts\[0\]/, run.stderr);
      assert.doesNotMatch(run.stderr, /\bat \S+:\d+:\d+\)?$/m, "no stack trace");
    }
    // The neighbours: a name below example.com, and the wildcard itself, in a run that completes.
    await Deno.writeTextFile(
      `${dir}/job.yaml`,
      `name: p\n${SCRIPTED}prompt: hi\ntools: { http_fetch: { hosts: [api.example.com, "*.example.com:443"] } }\n`,
    );
    const run = await hermes(["--policy", "policy.yaml", "run", "job.yaml"], { cwd: dir, home: dir });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /done/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("policy patterns: a bad pattern in the policy file is one line naming it, exit 2", async () => {
  const dir = await project({
    "policy.yaml": 'models: { base_urls: ["api.openai.com*"] }\n',
    "job.yaml": `name: p\n${SCRIPTED}prompt: hi\n`,
  });
  try {
    const run = await validate(dir);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /policy\.yaml:1:\d+: .*base_urls.*URL pattern/);
    assert.equal(run.stderr.trimEnd().split("\n").length, 1, run.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("policy patterns: model.script is judged by the read roots; the job's own replies file passes", async () => {
  const outside = await tempDir("hermes-patterns-outside-");
  await writeFiles(outside, { "r.yaml": "- content: read from outside\n" });
  const dir = await project({
    "policy.yaml": "read: [.]\n",
    "job.yaml": `name: p\nmodel: { provider: scripted, script: ${outside}/r.yaml }\nprompt: hi\n`,
  });
  try {
    for (const args of [["--policy", "policy.yaml"], ["--untrusted"]]) {
      const run = await hermes([...args, "run", "job.yaml"], { cwd: dir, home: dir });
      assert.equal(run.code, 2, `${args}: ${run.stdout}${run.stderr}`);
      assert.match(
        run.stderr,
        /job\.yaml:2:\d+: model\.script: refused by .*\(read\b.*is not under an allowed root/,
      );
      assert.doesNotMatch(run.stdout, /read from outside/);
    }
    await Deno.writeTextFile(`${dir}/job.yaml`, `name: p\n${SCRIPTED}prompt: hi\n`);
    for (const args of [["--policy", "policy.yaml"], ["--untrusted"]]) {
      const run = await hermes([...args, "run", "job.yaml"], { cwd: dir, home: dir });
      assert.equal(run.code, 0, `${args}: ${run.stderr}`);
      assert.match(run.stdout, /done/);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("http_fetch: a name of this machine is refused unless the entry names the address; the address itself is fetched", async () => {
  const hits: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    hits.push(new URL(request.url).pathname);
    return new Response("internal secret");
  });
  const port = server.addr.port;
  const dir = await project({
    "r.yaml": `- tool_calls: [{ name: http_fetch, arguments: { url: "http://localhost:${port}/by-name" } }]
- tool_calls: [{ name: http_fetch, arguments: { url: "http://127.0.0.1:${port}/by-address" } }]
- content: done
`,
    "job.yaml": `name: p
${SCRIPTED}prompt: hi
tools: { http_fetch: { hosts: ["localhost:${port}", "127.0.0.1:${port}"] } }
`,
  });
  try {
    const { code, stderr, events } = await runEvents(dir);
    assert.equal(code, 0, stderr);
    const [byName, byAddress] = events.filter((e) => e.type === "tool.result");
    assert.equal(byName!.status, "denied");
    assert.match(String(byName!.content), /resolves to an internal address \(127\.0\.0\.1/);
    assert.deepEqual([byAddress!.status, byAddress!.content], ["ok", "HTTP 200\ninternal secret"]);
    assert.deepEqual(hits, ["/by-address"]);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("policy patterns: a templated output.file is judged as the job directory it may land in", async () => {
  const job =
    `name: p\n${SCRIPTED}prompt: hi\ninputs: { name: {} }\noutput: { file: "{{ inputs.name }}.md" }\n`;
  const dir = await project({ "policy.yaml": "write: [./out]\n", "job.yaml": job });
  try {
    const refused = await hermes(["--policy", "policy.yaml", "run", "job.yaml", "--input", "name=job"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(
      refused.stderr,
      /job\.yaml:\d+:\d+: output\.file: refused by policy policy\.yaml \(write at /,
    );
    assert.equal(await Deno.readTextFile(`${dir}/job.yaml`), job, "nothing written");
    // The neighbours: the same job inside the write root, and under --untrusted (its directory is its root).
    await writeFiles(dir, { "out/job.yaml": job, "out/r.yaml": "- content: done\n" });
    const inside = await hermes(
      ["--policy", "../policy.yaml", "run", "job.yaml", "--input", "name=report"],
      { cwd: `${dir}/out`, home: dir },
    );
    assert.equal(inside.code, 0, inside.stderr);
    assert.equal(await Deno.readTextFile(`${dir}/out/report.md`), "done");
    const untrusted = await hermes(["run", "job.yaml", "--untrusted", "--input", "name=u"], {
      cwd: dir,
      home: dir,
    });
    assert.equal(untrusted.code, 0, untrusted.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("policy patterns: paths an MCP server's args name are judged by the read roots", async () => {
  const outside = await tempDir("hermes-patterns-outside-");
  const dir = await project({
    "policy.yaml": 'read: [.]\nmcp: { commands: ["*"] }\n',
    "data/notes.txt": "notes",
    "job.yaml": `name: p\n${SCRIPTED}prompt: hi
mcp_servers:
  files: { command: npx, args: ["-y", "@modelcontextprotocol/server-filesystem", "${outside}", ./data] }
`,
  });
  try {
    const run = await validate(dir);
    assert.equal(run.code, 2, run.stderr);
    const lines = run.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, run.stderr);
    assert.match(
      lines[0]!,
      /mcp_servers\.files\.args\[2\]: refused by policy policy\.yaml \(read at .*is not under an allowed root/,
    );
    // The neighbour: only the job's own directory named.
    await Deno.writeTextFile(
      `${dir}/job.yaml`,
      `name: p\n${SCRIPTED}prompt: hi\nmcp_servers:\n  files: { command: npx, args: ["-y", "@modelcontextprotocol/server-filesystem", ./data] }\n`,
    );
    const ok = await validate(dir);
    assert.equal(ok.code, 0, ok.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});
