/**
 * The repository's conventions through the real CLI and the OpenAI-compatible server: AGENTS.md files from
 * the repository root down to the job's directory reach the first request's system prompt in that order
 * (and the result lists them); `instructions.agents_md: false` and a policy's repository_instructions: false
 * keep them out; under --untrusted they come marked as repository content. An Agent Skill's name and
 * description are in the system prompt, its body reaches the model only after the `skill` tool is called.
 */
import assert from "node:assert/strict";
import type { ScriptEntry } from "../../runtime/providers/script.ts";
import { hermes, tempDir, writeFiles } from "../_testing/cli.ts";
import { type ChatRequestBody, startOpenAIServer, textOf } from "../_testing/openai_server.ts";

const ROOT_RULE = "ROOT-RULE: run the linter before committing.";
const SUB_RULE = "SUB-RULE: this package uses tabs.";
const SKILL_BODY = "SKILL-BODY: deploy by running scripts/deploy.sh with the target name.";

async function gitInit(dir: string): Promise<void> {
  const { code, stderr } = await new Deno.Command("git", { args: ["init", "-q", dir], stderr: "piped" })
    .output();
  assert.equal(code, 0, new TextDecoder().decode(stderr));
}

function systemOf(request: ChatRequestBody): string {
  const system = request.messages!.find((m) => m.role === "system");
  return system ? textOf(system.content) : "";
}

async function run(
  script: ScriptEntry[],
  options: {
    job?: string;
    model?: string;
    args?: string[];
    files?: Record<string, string>;
    home?: Record<string, string>;
  } = {},
) {
  const server = await startOpenAIServer(script);
  const repo = await tempDir();
  const home = await tempDir();
  await gitInit(repo);
  await writeFiles(repo, {
    "AGENTS.md": ROOT_RULE,
    "pkg/AGENTS.md": SUB_RULE,
    "pkg/job.yaml": `name: conventions
${options.model ?? `model: { name: m, base_url: "${server.url}", api_key_env: TEST_KEY }`}
system: You are the job's agent.
prompt: go
${options.job ?? ""}
`,
    ...options.files,
  });
  await writeFiles(home, { "keep": "", ...options.home });
  try {
    const { code, stdout, stderr } = await hermes(
      ["run", "job.yaml", "--output", "json", ...(options.args ?? [])],
      {
        cwd: `${repo}/pkg`,
        home: `${home}/hermes`,
        env: { TEST_KEY: "k", OPENAI_API_KEY: "k", OPENAI_BASE_URL: server.url, HOME: home },
      },
    );
    const result = stdout.trim() ? JSON.parse(stdout) : null;
    return { code, stderr, result, requests: server.requests, repo: Deno.realPathSync(repo) };
  } finally {
    await server.close();
    await Deno.remove(repo, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("AGENTS.md at the root and in the job's folder reach the first system prompt in order", async () => {
  const { code, stderr, result, requests, repo } = await run([{ content: "done" }]);
  assert.equal(code, 0, stderr);
  const system = systemOf(requests[0]!);
  const job = system.indexOf("You are the job's agent.");
  const root = system.indexOf(ROOT_RULE);
  const sub = system.indexOf(SUB_RULE);
  assert.ok(job >= 0 && root > job && sub > root, system);
  assert.match(system, /<agents_md path="AGENTS.md">/);
  assert.match(system, /<agents_md path="pkg\/AGENTS.md">/);
  assert.deepEqual(result.instructions, [`${repo}/AGENTS.md`, `${repo}/pkg/AGENTS.md`]);
});

Deno.test("instructions.agents_md: false keeps AGENTS.md out, and the result has no instructions", async () => {
  const { code, stderr, result, requests } = await run([{ content: "done" }], {
    job: "instructions: { agents_md: false }",
  });
  assert.equal(code, 0, stderr);
  assert.ok(!systemOf(requests[0]!).includes("RULE"), systemOf(requests[0]!));
  assert.equal(result.instructions, undefined);
});

Deno.test("AGENTS.md past instructions.max_bytes is cut and says so", async () => {
  const { code, stderr, requests } = await run([{ content: "done" }], {
    job: `instructions: { max_bytes: ${ROOT_RULE.length + 5} }`,
  });
  assert.equal(code, 0, stderr);
  const system = systemOf(requests[0]!);
  assert.ok(system.includes(ROOT_RULE), system);
  assert.ok(!system.includes(SUB_RULE), system);
  assert.match(system, /\[cut: the AGENTS\.md size cap/);
});

Deno.test("a policy's repository_instructions: false keeps AGENTS.md and repository skills out", async () => {
  const policy = "repository_instructions: false\n";
  const { code, stderr, requests } = await run([{ content: "done" }], {
    files: {
      "policy.yaml": policy,
      ".agents/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys the app\n---\n" + SKILL_BODY,
    },
    args: ["--policy", "../policy.yaml"],
  });
  assert.equal(code, 0, stderr);
  const system = systemOf(requests[0]!);
  assert.ok(!system.includes("RULE") && !system.includes("deploy"), system);
});

Deno.test("under --untrusted AGENTS.md is read as repository content, not as instructions", async () => {
  const { code, stderr, requests } = await run([{ content: "done" }], {
    // An untrusted job may not name its endpoint or key: they come from the environment.
    model: "model: { name: m }",
    args: ["--untrusted"],
  });
  assert.equal(code, 0, stderr);
  const system = systemOf(requests[0]!);
  assert.match(system, /does not trust the repository's content/);
  assert.ok(system.includes(ROOT_RULE) && system.includes(SUB_RULE), system);
  // The allowed neighbour: a trusted run gets them as instructions.
  const trusted = await run([{ content: "done" }]);
  assert.doesNotMatch(systemOf(trusted.requests[0]!), /does not trust/);
});

const toolNames = (request: ChatRequestBody) =>
  (request.tools ?? []).map((tool) => (tool as { function: { name: string } }).function.name);

Deno.test("a skill's body reaches the model only after the skill tool is called", async () => {
  const { code, stderr, requests } = await run([
    { tool_calls: [{ id: "s1", name: "skill", arguments: { name: "deploy" } }] },
    { content: "done" },
  ], {
    files: {
      ".agents/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys the app\n---\n" + SKILL_BODY,
      ".agents/skills/deploy/scripts/deploy.sh": "echo deploy\n",
      ".agents/skills/broken/SKILL.md": "no front matter",
    },
    home: {
      ".config/hermes/skills/review/SKILL.md": "---\nname: review\ndescription: Reviews a diff\n---\nR",
    },
  });
  assert.equal(code, 0, stderr);
  const [first, second] = requests;
  const system = systemOf(first!);
  assert.match(system, /- deploy: Deploys the app/);
  assert.match(system, /- review: Reviews a diff/);
  assert.ok(!system.includes("broken"), system);
  assert.ok(!JSON.stringify(first).includes("SKILL-BODY"), "the body is not in the first request");
  assert.ok(toolNames(first!).includes("skill"));
  const result = second!.messages!.find((m) => m.role === "tool" && m.tool_call_id === "s1");
  assert.ok(result, "the skill tool answered");
  const content = textOf(result.content);
  assert.ok(content.includes(SKILL_BODY), content);
  assert.match(content, /- scripts\/deploy\.sh/);
  assert.match(content, /- SKILL\.md/);
});

Deno.test("without skills there is no skill tool", async () => {
  const { code, stderr, requests } = await run([{ content: "done" }]);
  assert.equal(code, 0, stderr);
  assert.ok(!toolNames(requests[0]!).includes("skill"));
});

Deno.test("a policy's read roots bound the job's skills: directories (refused outside, allowed inside)", async () => {
  const files = {
    "policy.yaml": "read: [pkg]\n",
    "pkg/skills/deploy/SKILL.md": "---\nname: deploy\ndescription: Deploys the app\n---\n" + SKILL_BODY,
  };
  const outside = await run([{ content: "done" }], {
    job: "skills: [../elsewhere]",
    files,
    args: ["--policy", "../policy.yaml"],
  });
  assert.equal(outside.code, 2, outside.stderr);
  assert.match(
    outside.stderr,
    /job\.yaml:5:\d+: skills\[0\]: refused by policy .*policy\.yaml \(read at .*elsewhere is not under an allowed root/,
  );
  const inside = await run([{ content: "done" }], {
    job: "skills: [skills]",
    files,
    args: ["--policy", "../policy.yaml"],
  });
  assert.equal(inside.code, 0, inside.stderr);
  assert.match(systemOf(inside.requests[0]!), /- deploy: Deploys the app/);
});
