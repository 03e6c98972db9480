/**
 * The provider registry: a provider is its module plus one registry entry. A toy provider
 * (testdata/toy_provider.ts) is registered below with that one entry, which carries its one setting of its
 * own (`model.greeting`: schema and resolver); it runs a real turn, tool round included, through the real
 * agent loop on a real SQLite store, and its setting is checked by the real job loader.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Agent } from "../agent/agent.ts";
import { Budget } from "../agent/limits.ts";
import { resolveModel } from "../config/model.ts";
import { loadJob } from "../config/prechecked.ts";
import { App, resultOf } from "../app/mod.ts";
import { jobJsonSchema, ModelConfig } from "../config/job_schema.ts";
import { systemClock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import { EventBus } from "../core/events.ts";
import { noHooks } from "../core/hooks.ts";
import { silentLogger } from "../core/log.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { Tool } from "../tools/tool.ts";
import { createProvider } from "./create.ts";
import { PROVIDER_NAMES, providerEntry, providerOf, type ProviderRegistry, PROVIDERS } from "./registry.ts";

/** The built-in registry plus the toy's entry; `loads` counts imports of the toy's module. */
function withToy() {
  const loads: string[] = [];
  const registry: ProviderRegistry = {
    ...PROVIDERS,
    toy: providerEntry({
      about: "toy",
      apiKeyEnv: "TOY_API_KEY",
      baseUrlEnv: "TOY_BASE_URL",
      settings: {
        greeting: (zod) =>
          zod.enum(["hello", "ahoy"]).describe("provider toy: the first word of its answers"),
      },
      resolve: (spec, model) => ({ ...model, settings: { greeting: (spec.greeting as string) ?? "hello" } }),
      load: () => (loads.push("toy"), import("./testdata/toy_provider.ts")),
    }),
  };
  return { registry, loads };
}

const echo: Tool = {
  spec: { name: "echo", description: "echo", parameters: { type: "object" } },
  run: (args) => Promise.resolve({ status: "ok", content: `echoed ${String(args.text)}` }),
};

Deno.test("registry: a toy provider (one module, one registry line) runs a turn with its env defaults", async () => {
  const { registry, loads } = withToy();
  const env = { TOY_API_KEY: "toy-secret", TOY_BASE_URL: "http://toy.invalid/v1" };
  const model = resolveModel({ provider: "toy", name: "toy-1" }, { env, dir: "/jobs", providers: registry });
  assert.equal(model.provider, "toy");
  assert.equal(model.api_key_env, "TOY_API_KEY");
  assert.equal(model.base_url, "http://toy.invalid/v1");
  assert.deepEqual(loads, [], "resolving a model imports no provider");
  const provider = await createProvider(model, { env, clock: systemClock, providers: registry });
  assert.deepEqual(loads, ["toy"]);
  assert.equal(provider.name, "toy");

  const dir = await Deno.makeTempDir({ prefix: "hermes-registry-" });
  const store = openSqliteStore(`${dir}/state.db`);
  try {
    const session = await store.createSession({ job: "toy" });
    const agent = new Agent({
      store,
      sessionId: session.id,
      provider,
      model: model.name,
      tools: [echo],
      hooks: noHooks,
      events: new EventBus(systemClock),
      clock: systemClock,
      log: silentLogger,
      budget: new Budget(),
      toolContext: { job_dir: dir, env: {}, host_env: {} },
    });
    const turn = await agent.prompt("hello", { source: "cli" });
    assert.equal(turn.final, "hello, toy-1 at http://toy.invalid/v1 with a key: echoed hello");
    assert.equal(turn.model_calls, 2);
    const stored = (await store.activeMessages(session.id)).map((m) => m.role);
    assert.deepEqual(stored, ["user", "assistant", "tool", "assistant"]);
  } finally {
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("registry: the toy's key variable unset is a clear error before its module loads; the job may name another", async () => {
  const { registry, loads } = withToy();
  const model = resolveModel({ provider: "toy", name: "toy-1" }, {
    env: {},
    dir: "/jobs",
    providers: registry,
  });
  assert.equal(model.base_url, null);
  await assert.rejects(
    createProvider(model, { env: {}, clock: systemClock, providers: registry }),
    (error: unknown) =>
      error instanceof ValidationError && /TOY_API_KEY \(model\.api_key_env\) is not set/.test(error.message),
  );
  assert.deepEqual(loads, []);
  const named = resolveModel({ provider: "toy", name: "toy-1", api_key_env: "MY_KEY" }, {
    env: {},
    dir: "/jobs",
    providers: registry,
  });
  const provider = await createProvider(named, {
    env: { MY_KEY: "k" },
    clock: systemClock,
    providers: registry,
  });
  assert.equal(provider.name, "toy");
  const keyless = resolveModel({ provider: "toy", name: "t", api_key_env: "none" }, {
    env: {},
    dir: "/",
    providers: registry,
  });
  assert.equal(
    (await createProvider(keyless, { env: {}, clock: systemClock, providers: registry })).name,
    "toy",
  );
});

Deno.test("registry: an unknown provider name is refused by the factory, naming the known ones", async () => {
  assert.throws(
    () => resolveModel({ provider: "nope", name: "m" }, { env: {}, dir: "/" }),
    /Cannot use provider "nope": expected one of openai, anthropic, azure, scripted/,
  );
  const model = {
    ...resolveModel({ name: "m" }, { env: { OPENAI_API_KEY: "k" }, dir: "/" }),
    provider: "nope",
  };
  await assert.rejects(
    createProvider(model, { env: {}, clock: systemClock }),
    /expected one of openai, anthropic, azure, scripted/,
  );
});

Deno.test("registry: the job schema's provider choices and env defaults come from the registry", () => {
  const model =
    (jobJsonSchema() as { properties: { model: { properties: Record<string, Record<string, unknown>> } } })
      .properties.model.properties;
  assert.deepEqual(model.provider!.enum, PROVIDER_NAMES);
  assert.deepEqual(PROVIDER_NAMES, Object.keys(PROVIDERS));
  for (const [name, entry] of Object.entries(PROVIDERS)) {
    assert.match(
      String(model.provider!.description),
      new RegExp(`${name}: ${entry.about.replace(/[()]/g, "\\$&")}`),
    );
  }
  assert.match(String(model.api_key_env!.description), /OPENAI_API_KEY for openai/);
  assert.match(String(model.base_url!.description), /\$OPENAI_BASE_URL for openai/);
  assert.ok(ModelConfig.safeParse({ provider: "scripted", script: "r.yaml" }).success);
  assert.equal(ModelConfig.safeParse({ provider: "toy" }).success, false);
});

Deno.test("registry: the default provider rule — named, implied by a key it needs, else openai", () => {
  const { registry } = withToy();
  assert.equal(providerOf(undefined), "openai");
  assert.equal(providerOf({}), "openai");
  assert.equal(providerOf({ script: "r.yaml" } as { provider?: string }), "scripted");
  assert.equal(providerOf({ provider: "openai", script: "r.yaml" } as { provider?: string }), "openai");
  assert.equal(providerOf({ provider: "toy" }, registry), "toy");
  const scripted = resolveModel({ script: "r.yaml" }, { env: {}, dir: "/jobs" });
  assert.deepEqual([scripted.provider, scripted.name, (scripted.settings as { script: string }).script], [
    "scripted",
    "scripted",
    "/jobs/r.yaml",
  ]);
  assert.throws(
    () => resolveModel({ provider: "scripted" }, { env: {}, dir: "/jobs" }),
    /model\.script is required for provider scripted/,
  );
  const openai = resolveModel({ name: "gpt" }, { env: { OPENAI_BASE_URL: "http://local/v1" }, dir: "/" });
  assert.deepEqual([openai.provider, openai.api_key_env, openai.base_url], [
    "openai",
    "OPENAI_API_KEY",
    "http://local/v1",
  ]);
});

Deno.test("registry: implementations are reached only through the registry's lazy imports, with static paths", async () => {
  const info = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", fileURLToPath(new URL("../config/job_schema.ts", import.meta.url))],
    stdout: "piped",
    stderr: "inherit",
  });
  const { modules } = JSON.parse(new TextDecoder().decode((await info.output()).stdout)) as {
    modules: { specifier: string; dependencies?: { code?: { specifier: string }; isDynamic?: boolean }[] }[];
  };
  const bySpecifier = new Map(modules.map((m) => [m.specifier, m]));
  const root = new URL("../config/job_schema.ts", import.meta.url).href;
  const statics = new Set<string>();
  const visit = (specifier: string) => {
    if (statics.has(specifier)) return;
    statics.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dep.code && !dep.isDynamic) visit(dep.code.specifier);
    }
  };
  visit(root);
  const registry = new URL("./registry.ts", import.meta.url).href;
  assert.ok(statics.has(registry), "the job schema reads the registry");
  for (const file of ["./openai.ts", "./scripted.ts"]) {
    const href = new URL(file, import.meta.url).href;
    assert.ok(!statics.has(href), `${file} is not loaded with the job schema`);
    const edge = bySpecifier.get(registry)!.dependencies!.find((d) => d.code?.specifier === href);
    assert.equal(edge?.isDynamic, true, `${file} is a lazy import of the registry with a static path`);
  }
  assert.ok(
    ![...statics].some((s) => s.startsWith("npm:") && s.includes("openai")),
    "no openai SDK at start-up",
  );
});

Deno.test("registry: the toy's own setting is checked by the job loader at its line, refused for another provider, and reaches the provider", async () => {
  const { registry } = withToy();
  const dir = await Deno.makeTempDir({ prefix: "hermes-registry-" });
  const job = async (file: string, model: string) => {
    await Deno.writeTextFile(`${dir}/${file}`, `name: toy\nprompt: hi\nmodel:\n${model}`);
    return `${dir}/${file}`;
  };
  const refused = (pattern: RegExp) => (error: unknown) =>
    error instanceof ValidationError && pattern.test(error.message);
  try {
    const bad = await job("bad.yaml", "  provider: toy\n  name: toy-1\n  greeting: howdy\n");
    await assert.rejects(
      loadJob(bad, { providers: registry }),
      refused(/bad\.yaml:6:13: model\.greeting: .*"hello".*"ahoy"/),
    );
    // The built-in registry knows no such key, nor such a provider: both are located too.
    await assert.rejects(loadJob(bad), refused(/bad\.yaml:6:3: unknown key "model\.greeting"/));
    await assert.rejects(
      loadJob(bad),
      refused(/bad\.yaml:4:13: model\.provider: Invalid option: expected one of "openai"\|/),
    );

    const good = await job("good.yaml", "  provider: toy\n  name: toy-1\n  greeting: ahoy\n");
    const loaded = await loadJob(good, { providers: registry });
    const env = { TOY_API_KEY: "k" };
    const model = resolveModel(loaded.spec.model, { env, dir, providers: registry });
    assert.deepEqual(model.settings, { greeting: "ahoy" });
    const provider = await createProvider(model, { env, clock: systemClock, providers: registry });
    const reply = await provider.complete({
      model: "toy-1",
      messages: [{ role: "user", content: "hi" }],
      tools: [],
    });
    assert.equal(reply.message.content, "ahoy, toy-1 at null with a key: hi");
    const unset = resolveModel({ provider: "toy", name: "toy-1" }, { env, dir, providers: registry });
    assert.deepEqual(unset.settings, { greeting: "hello" }, "the entry's resolver gives the default");

    const other = await job("other.yaml", "  provider: openai\n  name: gpt\n  greeting: ahoy\n");
    const spec = (await loadJob(other, { providers: registry })).spec.model;
    assert.throws(
      () => resolveModel(spec, { env, dir, providers: registry }),
      refused(/^model\.greeting needs provider: toy \(provider is openai\)$/),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** Every local module main.ts can load, with its imports: static, dynamic and type-only alike. */
async function moduleGraph(): Promise<Map<string, string[]>> {
  const root = new URL("../../", import.meta.url).href;
  const info = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", fileURLToPath(new URL("main.ts", root))],
    stdout: "piped",
    stderr: "inherit",
  });
  const { modules } = JSON.parse(new TextDecoder().decode((await info.output()).stdout)) as {
    modules: {
      specifier: string;
      dependencies?: { code?: { specifier: string }; type?: { specifier: string } }[];
    }[];
  };
  const local = (specifier: string | undefined): specifier is string => specifier?.startsWith(root) ?? false;
  return new Map(
    modules.filter((m) => local(m.specifier)).map((m) => [
      m.specifier.slice(root.length),
      (m.dependencies ?? []).flatMap((d) => [d.code?.specifier, d.type?.specifier]).filter(local)
        .map((s) => s.slice(root.length)),
    ]),
  );
}

/** The import circles of a graph: its strongly connected components of more than one module (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node)!, index.get(next)!));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = stack.splice(stack.indexOf(node));
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
}

Deno.test("registry: no import circle runs through the providers — registry, implementations and model.ts", async () => {
  const graph = await moduleGraph();
  assert.ok(graph.has("runtime/providers/registry.ts") && graph.has("runtime/providers/openai.ts"));
  const through = circles(graph).filter((c) => c.some((file) => file.startsWith("runtime/providers/")));
  assert.deepEqual(through, []);
  // The check sees a circle closed by a lazy import: the shape the providers once had.
  const closed = new Map(graph);
  closed.set("runtime/providers/model.ts", [
    ...graph.get("runtime/providers/model.ts")!,
    "runtime/providers/registry.ts",
  ]);
  assert.ok(
    circles(closed).some((c) =>
      c.includes("runtime/providers/openai.ts") && c.includes("runtime/providers/model.ts")
    ),
  );
});

Deno.test("registry: no provider name is compared outside runtime/providers/", async () => {
  // The registry's names, and anthropic's platforms (model.platform), which were once compared in config/.
  const names = [...PROVIDER_NAMES, "bedrock", "vertex"].join("|");
  const compared = new RegExp(
    `(?:[!=]==?\\s*["'\`](?:${names})["'\`])|(?:["'\`](?:${names})["'\`]\\s*[!=]==?)|(?:case\\s+["'\`](?:${names})["'\`])`,
  );
  assert.ok(
    compared.test(`provider === "openai"`) && compared.test(`case "azure":`),
    "the pattern can match",
  );
  const root = new URL("../../", import.meta.url);
  const offenders: string[] = [];
  const scan = async (dir: string) => {
    for await (const entry of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}${entry.name}`;
      if (entry.isDirectory && path !== "runtime/providers") await scan(`${path}/`);
      else if (entry.isFile && /\.ts$/.test(entry.name) && !/_test\.ts$/.test(entry.name)) {
        const text = await Deno.readTextFile(new URL(path, root));
        text.split("\n").forEach((line, i) => {
          if (compared.test(line)) offenders.push(`${path}:${i + 1}: ${line.trim()}`);
        });
      }
    }
  };
  for (const dir of ["runtime/", "commands/", "loops/", "plugins/"]) await scan(dir);
  assert.deepEqual(offenders, []);
});

Deno.test("registry: an App given the toy's registry validates, runs and opens a job naming the toy with its setting", async () => {
  const { registry, loads } = withToy();
  const dir = await Deno.makeTempDir({ prefix: "hermes-registry-app-" });
  const model = (greeting: string) =>
    `name: toy-job\nprompt: hi\nmodel:\n  provider: toy\n  name: toy-1\n  api_key_env: none\n  greeting: ${greeting}\n`;
  await Deno.writeTextFile(`${dir}/job.yaml`, model("ahoy"));
  await Deno.writeTextFile(`${dir}/bad.yaml`, model("howdy"));
  const store = openSqliteStore(`${dir}/state.db`);
  const context = {
    store,
    events: new EventBus(systemClock),
    clock: systemClock,
    log: silentLogger,
    env: {},
    host: "test-host",
    config: undefined,
    cwd: dir,
    source: "rpc" as const,
  };
  const app = new App({ ...context, providers: registry });
  const builtIn = new App(context);
  try {
    assert.deepEqual(await app.validate({ path: "job.yaml" }), { valid: true, name: "toy-job" });
    const bad = await app.validate({ path: "bad.yaml" });
    assert.ok(!bad.valid && /bad\.yaml:7:13: model\.greeting: /.test(bad.error), JSON.stringify(bad));
    const unknown = await builtIn.validate({ path: "job.yaml" });
    assert.ok(
      !unknown.valid && unknown.errors.some((e) => /job\.yaml:7:3: unknown key "model\.greeting"/.test(e)),
      JSON.stringify(unknown),
    );
    assert.deepEqual(loads, [], "validating imports no provider");

    const result = await app.run({ job: { job: "job.yaml" } });
    assert.equal(result.status, "success");
    assert.equal(result.final, "ahoy, toy-1 at null with no key: hi");
    const session = await app.open({ job: "job.yaml" });
    const outcome = await app.prompt(session.id, "again");
    assert.equal(resultOf(outcome).final, "ahoy, toy-1 at null with no key: again");
  } finally {
    await app.close();
    await builtIn.close();
    await store.close();
    await Deno.remove(dir, { recursive: true });
  }
});
