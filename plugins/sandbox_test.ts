/**
 * Escape attempts from a plugin granted nothing (docs/plugins.md): each is refused at load or fails inside the
 * plugin while the host goes on; with the matching grants the same operations succeed.
 */
import assert from "node:assert/strict";
import { ValidationError } from "../runtime/core/errors.ts";
import { notAborted, pluginTest, proberFixture, rejection, SECRET } from "./_testing.ts";
import { NO_SCOPE } from "../runtime/tools/tool.ts";

/** Operations the prober tool tries, one per call; the arguments come from the test at run time. */
const OPS = `{
  read: (arg) => Deno.readTextFile(arg),
  import: async (arg) => JSON.stringify(await import(arg)),
  write: async (arg) => { await Deno.writeTextFile(arg, "pwned"); return "written"; },
  env_get: (arg) => String(Deno.env.get(arg)),
  env_all: () => Object.keys(Deno.env.toObject()).sort().join(","),
  fetch: async (arg) => (await fetch(arg)).text(),
  run: async (arg) => String((await new Deno.Command(arg).output()).code),
  ffi: () => String(Deno.dlopen("libc.so.6", { getpid: { parameters: [], result: "i32" } }).symbols.getpid()),
  npm: async () => String(Object.keys(await import("npm:" + "yaml")).length),
  remote: async () => String(Object.keys(await import("https://" + "esm.sh/yaml")).length),
  request: async (arg) => {
    const status = await Deno.permissions.request({ name: "read", path: arg });
    return status.state + ":" + (await Deno.readTextFile(arg)).length;
  },
  sys: () => Deno.hostname(),
  ping: () => "pong",
}`;

const setUp = () => proberFixture(OPS);

pluginTest("a plugin granted nothing is denied every privileged operation and the host goes on", async () => {
  await using s = await setUp();
  const host = await s.f.start([{ path: "prober" }], {
    env: { OPENAI_API_KEY: "sk-parent-secret-123456", HOME: "/root" },
  });
  const [probe] = host.tools();
  const attempts: [string, string | undefined][] = [
    ["read", "/etc/passwd"],
    ["read", `${s.outside}/secret.txt`],
    ["import", `file://${s.outside}/secret.js`],
    ["import", `file:///etc/passwd`],
    ["write", `${s.f.dir}/pwned.txt`],
    ["write", `${s.outside}/pwned.txt`],
    ["env_get", "OPENAI_API_KEY"],
    ["env_all", undefined],
    ["fetch", `http://127.0.0.1:${s.port}/`],
    ["fetch", "https://example.com/"],
    ["run", "/bin/true"],
    ["ffi", undefined],
    ["npm", undefined],
    ["remote", undefined],
    ["request", "/etc/passwd"],
    ["sys", undefined],
  ];
  for (const [op, arg] of attempts) {
    const outcome = await probe!.run(arg === undefined ? { op } : { op, arg }, context(s.f.dir), NO_SCOPE);
    assert.equal(outcome.status, "error", `${op} ${arg}: ${outcome.content}`);
    assert.match(
      outcome.content,
      /NotCapable: Requires|Requires read access|--no-npm is specified|--no-remote is specified/,
      `${op} ${arg}`,
    );
    assert.ok(!outcome.content.includes(SECRET) && !outcome.content.includes("sk-parent"), `${op} leaked`);
  }
  const errors = s.f.events.filter((e) => e.type === "plugin.error");
  assert.equal(errors.length, attempts.length);
  assert.ok(errors.every((e) => e.plugin === "prober" && e.hook === "tool probe"));
  await assert.rejects(Deno.stat(`${s.f.dir}/pwned.txt`), Deno.errors.NotFound);
  await assert.rejects(Deno.stat(`${s.outside}/pwned.txt`), Deno.errors.NotFound);
  assert.equal(host.failure("prober"), undefined);
  assert.deepEqual(await probe!.run({ op: "ping" }, context(s.f.dir), NO_SCOPE), {
    status: "ok",
    content: "pong",
  });
});

pluginTest("with the matching grants the same operations succeed", async () => {
  await using s = await setUp();
  await s.f.write({ "out/.keep": "" });
  const host = await s.f.start([{
    path: "prober",
    permissions: {
      read: ["/etc/passwd", s.outside],
      write: ["./out"],
      env: ["OPENAI_API_KEY"],
      // true: a host list next to run and ffi is refused at load (they are not bound by it).
      net: true,
      run: ["/bin/true"],
      ffi: true,
      sys: ["hostname"],
    },
  }], { env: { OPENAI_API_KEY: "sk-parent-secret-123456", HOME: "/root" } });
  const [probe] = host.tools();
  const ok = async (op: string, arg?: string) => {
    const outcome = await probe!.run(arg === undefined ? { op } : { op, arg }, context(s.f.dir), NO_SCOPE);
    assert.equal(outcome.status, "ok", `${op} ${arg}: ${outcome.content}`);
    return outcome.content;
  };
  assert.match(await ok("read", "/etc/passwd"), /^root:/);
  assert.equal(await ok("read", `${s.outside}/secret.txt`), SECRET);
  assert.match(await ok("import", `file://${s.outside}/secret.js`), /top secret/);
  assert.equal(await ok("write", "./out/written.txt"), "written");
  assert.equal(await Deno.readTextFile(`${s.f.dir}/out/written.txt`), "pwned");
  assert.equal(await ok("env_get", "OPENAI_API_KEY"), "sk-parent-secret-123456");
  assert.equal(await ok("fetch", `http://127.0.0.1:${s.port}/`), "served");
  assert.equal(await ok("run", "/bin/true"), "0");
  assert.match(await ok("ffi"), /^\d+$/);
  assert.equal(
    await ok("request", "/etc/passwd"),
    `granted:${(await Deno.readTextFile("/etc/passwd")).length}`,
  );
  assert.equal(await ok("sys"), Deno.hostname());
  // Granted one variable, the plugin still cannot enumerate the environment, nor write outside ./out.
  assert.equal((await probe!.run({ op: "env_all" }, context(s.f.dir), NO_SCOPE)).status, "error");
  assert.equal(
    (await probe!.run({ op: "write", arg: "./elsewhere.txt" }, context(s.f.dir), NO_SCOPE)).status,
    "error",
  );
  assert.equal(
    (await probe!.run({ op: "fetch", arg: "http://127.0.0.2:9/" }, context(s.f.dir), NO_SCOPE)).status,
    "error",
  );
});

pluginTest(
  "read_only paths stay read-only inside a plugin's write grant; the rest of it is written",
  async () => {
    await using s = await setUp();
    await Deno.mkdir(`${s.f.dir}/work/.git`, { recursive: true });
    await Deno.writeTextFile(`${s.f.dir}/work/.git/config`, "[core]\n");
    await Deno.writeTextFile(`${s.f.dir}/work/job.yaml`, "name: job\n");
    const host = await s.f.start([{ path: "prober", permissions: { write: ["./work"] } }], {
      read_only: [`${s.f.dir}/work/.git`, `${s.f.dir}/work/job.yaml`],
    });
    const [probe] = host.tools();
    const run = (arg: string) => probe!.run({ op: "write", arg }, context(s.f.dir), NO_SCOPE);
    assert.equal((await run("./work/.git/config")).status, "error");
    assert.equal((await run("./work/job.yaml")).status, "error");
    assert.equal((await run("./work/notes.txt")).status, "ok");
    assert.equal(await Deno.readTextFile(`${s.f.dir}/work/.git/config`), "[core]\n");
    assert.equal(await Deno.readTextFile(`${s.f.dir}/work/job.yaml`), "name: job\n");
    assert.equal(await Deno.readTextFile(`${s.f.dir}/work/notes.txt`), "pwned");
  },
);

pluginTest(
  "env: true shows the granted environment only (plus Deno's shim switch and cache dir), never the host's own",
  async () => {
    await using s = await setUp();
    const host = await s.f.start([{ path: "prober", permissions: { env: true } }], {
      env: { ALPHA: "1", BETA: "2" },
    });
    assert.deepEqual(await host.tools()[0]!.run({ op: "env_all" }, context(s.f.dir), NO_SCOPE), {
      status: "ok",
      content: "ALPHA,BETA,DENO_DIR,DENO_DISABLE_NODE_SHIM",
    });
  },
);

pluginTest(
  "static, literal dynamic, JSON, text, npm, jsr, remote and data imports are refused at load",
  async () => {
    await using s = await setUp();
    const o = s.outside;
    const cases: [string, string][] = [
      ["static", `import { secret } from "${o}/secret.js";`],
      ["static-relative", `import "../../../../../../../../${o}/secret.js";`],
      ["json", `import data from "${o}/secret.json" with { type: "json" };`],
      ["text", `import text from "${o}/secret.txt" with { type: "text" };`],
      ["passwd", `import text from "/etc/passwd" with { type: "text" };`],
      ["dynamic-literal", `export const later = () => import("${o}/secret.js");`],
      ["npm", `import "npm:yaml";`],
      ["jsr", `import "jsr:@std/path";`],
      ["remote", `import "https://example.com/mod.ts";`],
      ["data", `import "data:text/javascript,export default 1";`],
    ];
    for (const [name, code] of cases) {
      await s.f.write({
        [`${name}/plugin.json`]: JSON.stringify({ name, version: "1", entry: "mod.js" }),
        [`${name}/mod.js`]: `${code}\nexport function register() {}\n`,
      });
      const error = await rejection(s.f.start([{ path: name }]));
      assert.ok(error instanceof ValidationError, `${name}: ${error}`);
      assert.match(error.message, new RegExp(`^Cannot load plugin "${name}" \\(${name}\\): `), name);
      assert.match(error.message, /outside the plugin's directory|is refused/, `${name}: ${error.message}`);
    }
    // A symbolic link inside the plugin's directory that points outside it is refused too.
    await s.f.write({
      "linked/plugin.json": JSON.stringify({ name: "linked", version: "1", entry: "mod.js" }),
    });
    await s.f.write({
      "linked/mod.js": `import { secret } from "./secret.js";\nexport function register() {}\n`,
    });
    await Deno.symlink(`${o}/secret.js`, `${s.f.dir}/linked/secret.js`);
    assert.match((await rejection(s.f.start([{ path: "linked" }]))).message, /\(real path .*\) is outside/);
  },
);

pluginTest("imports inside the plugin's own directory and node: built-ins load and run", async () => {
  await using s = await setUp();
  await s.f.write({
    "local/plugin.json": JSON.stringify({ name: "local", version: "1", entry: "src/mod.ts" }),
    "local/src/mod.ts": `
      import { join } from "node:path";
      import { greet } from "../lib/greet.ts";
      import data from "../data.json" with { type: "json" };
      import text from "../notes.txt" with { type: "text" };
      export function register(ctx: { registerCommand(n: string, d: object): void }) {
        ctx.registerCommand("local", { description: "", handler: async () =>
          [greet(), data.value, text.trim(), join("a", "b"), (await import("../lib/lazy.ts")).lazy].join(" ") });
      }`,
    "local/lib/greet.ts": `export const greet = (): string => "hello";`,
    "local/lib/lazy.ts": `export const lazy = "lazy";`,
    "local/data.json": `{"value": 7}`,
    "local/notes.txt": "note\n",
  });
  const host = await s.f.start([{ path: "local" }]);
  assert.equal(
    await host.commands()[0]!.run("", { session_id: "s", source: "cli", signal: notAborted }),
    "hello 7 note a/b lazy",
  );
});

function context(dir: string) {
  return { session_id: "s1", job_dir: dir, env: {}, host_env: {}, signal: notAborted };
}
