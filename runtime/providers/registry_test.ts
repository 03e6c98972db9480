/**
 * The provider registry: a provider is its module plus one registry line. A toy provider
 * (testdata/toy_provider.ts) is registered below with that one line and runs a real turn, tool round
 * included, through the real agent loop on a real SQLite store.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { Agent } from "../agent/agent.ts";
import { Budget } from "../agent/limits.ts";
import { resolveModel } from "../config/model.ts";
import { jobJsonSchema, ModelConfig } from "../config/job_schema.ts";
import { systemClock } from "../core/clock.ts";
import { ValidationError } from "../core/errors.ts";
import { EventBus } from "../core/events.ts";
import { noHooks } from "../core/hooks.ts";
import { silentLogger } from "../core/log.ts";
import { openSqliteStore } from "../store/sqlite/sqlite_store.ts";
import type { Tool } from "../tools/tool.ts";
import { createProvider } from "./create.ts";
import { PROVIDER_NAMES, providerOf, type ProviderRegistry, PROVIDERS } from "./registry.ts";

/** The built-in registry plus the toy's line; `loads` counts imports of the toy's module. */
function withToy() {
  const loads: string[] = [];
  const registry: ProviderRegistry = {
    ...PROVIDERS,
    toy: {
      about: "toy",
      apiKeyEnv: "TOY_API_KEY",
      baseUrlEnv: "TOY_BASE_URL",
      load: () => (loads.push("toy"), import("./testdata/toy_provider.ts")),
    },
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
    assert.equal(turn.final, "toy-1 at http://toy.invalid/v1 with a key: echoed hello");
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
