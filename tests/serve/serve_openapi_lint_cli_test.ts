/**
 * The OpenAPI document a real `hermes serve` serves, linted by a third-party tool (Redocly's openapi-core,
 * its `recommended` rules; pinned in tests/_testing/npm_tools.lock): no error, and only the warnings named
 * here, each with its reason.
 */
import assert from "node:assert/strict";
import { tempDir, writeFiles } from "../_testing/cli.ts";
import { call, startServe } from "../_testing/serve.ts";

const LINTER = "npm:@redocly/openapi-core@2.64.0";
const TOOLS_LOCK = new URL("../_testing/npm_tools.lock", import.meta.url).pathname;

/** Warnings the document keeps on purpose. */
const ACCEPTED: { rule: string; pointer: RegExp; why: string }[] = [
  {
    rule: "operation-4xx-response",
    pointer: /^#\/paths\/~1(healthz|readyz|metrics|v1~1openapi\.json)\/get\/responses$/,
    why: "public routes without a token or a body: no client error exists for them",
  },
  {
    rule: "no-unused-components",
    pointer: /^#\/components\/schemas\/Event$/,
    why: "the events stream's data: OpenAPI 3.1 has no way to reference a schema per text/event-stream item",
  },
];

Deno.test("serve: /v1/openapi.json passes Redocly's recommended lint (no error, only the accepted warnings)", async () => {
  const home = await tempDir();
  try {
    await using server = await startServe(home);
    const served = await call(`${server.url}/v1/openapi.json`);
    assert.equal(served.status, 200);
    await writeFiles(home, {
      "openapi.json": JSON.stringify(served.body),
      "lint.ts": `import { createConfig, lintFromString } from "${LINTER}";\n` +
        `const config = await createConfig({ extends: ["recommended"] });\n` +
        `const source = await Deno.readTextFile(Deno.args[0]);\n` +
        `const problems = await lintFromString({ source, absoluteRef: Deno.args[0], config });\n` +
        `console.log(JSON.stringify(problems.map((p) => ({ severity: p.severity, rule: p.ruleId, ` +
        `message: p.message, pointer: p.location?.[0]?.pointer }))));\n`,
    });
    const { code, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--no-config",
        `--lock=${TOOLS_LOCK}`,
        "--frozen",
        `${home}/lint.ts`,
        `${home}/openapi.json`,
      ],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(code, 0, new TextDecoder().decode(stderr));
    const problems = JSON.parse(new TextDecoder().decode(stdout)) as {
      severity: string;
      rule: string;
      message: string;
      pointer: string;
    }[];
    const unexpected = problems.filter((p) =>
      p.severity === "error" || !ACCEPTED.some((a) => a.rule === p.rule && a.pointer.test(p.pointer))
    );
    assert.deepEqual(unexpected, []);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
});
