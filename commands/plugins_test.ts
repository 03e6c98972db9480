/** `hermes plugins list|check` as a user runs it: a real CLI subprocess. */
import assert from "node:assert/strict";
import { withoutSandbox } from "../tests/_testing/sandbox.ts";

const ROOT = new URL("..", import.meta.url).pathname;

async function hermes(args: string[], home: string) {
  const output = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${ROOT}main.ts`, "--home", home, ...args],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decode = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  return { code: output.code, stdout: decode(output.stdout), stderr: decode(output.stderr) };
}

Deno.test({
  name: "plugins check: exit 0 with the registrations, exit 2 with one line for a broken plugin",
  ignore: withoutSandbox,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-plugins-cli-" });
  try {
    const ok = await hermes(["plugins", "check", "examples/plugins/whoami.ts"], dir);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(
      ok.stdout,
      /^✓ whoami 0\.0\.0 \(.*examples\/plugins\/whoami\.ts\)\n {2}permissions: none\n {2}sandbox: bubblewrap .*\n {2}command \/whoami — /,
    );

    await Deno.writeTextFile(`${dir}/broken.ts`, "export function register(ctx {\n");
    const broken = await hermes(["plugins", "check", `${dir}/broken.ts`], dir);
    assert.equal(broken.code, 2);
    assert.equal(broken.stdout, "");
    const lines = broken.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, broken.stderr);
    assert.match(
      lines[0]!,
      /^hermes: Cannot load plugin "broken" \(.*broken\.ts\): SyntaxError: .*broken\.ts:1:\d+\)$/,
    );

    const usage = await hermes(["plugins", "inspect", "x"], dir);
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /^hermes plugins: expected `plugins list/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "plugins list --json of a job shows each plugin's grant and registrations; check refuses a short grant",
  ignore: withoutSandbox,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-plugins-cli-" });
  try {
    const examples = `${ROOT}examples/plugins`;
    await Deno.writeTextFile(
      `${dir}/job.yaml`,
      [
        "name: with-plugins",
        "prompt: hi",
        "plugins:",
        `  - path: ${examples}/memory`,
        "    permissions: { read: [./notes] }",
        "    config: { rules: be kind }",
        `  - path: ${examples}/whoami.ts`,
        "",
      ].join("\n"),
    );
    const listed = await hermes(["plugins", "list", "--json", `${dir}/job.yaml`], dir);
    assert.equal(listed.code, 0, listed.stderr);
    const plugins = JSON.parse(listed.stdout);
    assert.deepEqual(plugins.map((p: { name: string }) => p.name), ["memory", "whoami"]);
    assert.deepEqual(plugins[0].granted, { read: ["./notes"] });
    assert.deepEqual(plugins[0].hooks, ["pre_llm_call", "post_compaction", "on_session_delete"]);
    assert.deepEqual(plugins[1].commands.map((c: { name: string }) => c.name), ["whoami"]);

    await Deno.writeTextFile(
      `${dir}/short.yaml`,
      `name: short\nprompt: hi\nplugins:\n  - path: ${examples}/memory\n`,
    );
    const refused = await hermes(["plugins", "check", `${dir}/short.yaml`], dir);
    assert.equal(refused.code, 2);
    assert.match(
      refused.stderr.trim(),
      /^hermes: Cannot load plugin "memory" .*does not grant: read \.\/notes$/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "plugins list of a directory lists every plugin and reports a broken one without hiding the rest",
  ignore: withoutSandbox,
}, async () => {
  const dir = await Deno.makeTempDir({ prefix: "hermes-plugins-cli-" });
  try {
    await Deno.writeTextFile(
      `${dir}/a.js`,
      `export function register(ctx) { ctx.registerHook("on_session_end", () => {}); }`,
    );
    await Deno.writeTextFile(`${dir}/b.js`, `export const nothing = 1;`);
    await Deno.mkdir(`${dir}/c`);
    await Deno.writeTextFile(
      `${dir}/c/plugin.json`,
      JSON.stringify({ name: "c", version: "2.0.0", entry: "m.js" }),
    );
    await Deno.writeTextFile(`${dir}/c/m.js`, `export function register() {}`);
    const listed = await hermes(["plugins", "list", dir], dir);
    assert.equal(listed.code, 2);
    assert.match(
      listed.stdout,
      /✓ a 0\.0\.0 .*\n {2}permissions: none\n {2}sandbox: bubblewrap .*\n {2}hooks: on_session_end\n/,
    );
    assert.match(
      listed.stdout,
      /✗ .*b\.js\n {2}error: Cannot load plugin "b" .*does not export a register\(ctx\) function\n/,
    );
    assert.match(
      listed.stdout,
      /✓ c 2\.0\.0 .*\n {2}permissions: none\n {2}sandbox: bubblewrap .*\n {2}registers nothing\n/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
