import assert from "node:assert/strict";
import { distinctNames, type PluginManifest, readManifest } from "./manifest.ts";

const single = (entry: string, name: string): PluginManifest => ({
  name,
  version: "0.0.0",
  description: "",
  root: entry,
  entry,
  requested: {},
});

Deno.test("a single-file plugin is named by its file, or by its directory for mod.ts / index.ts", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir());
  try {
    await Deno.mkdir(`${dir}/My Plugin`);
    await Deno.writeTextFile(`${dir}/My Plugin/mod.ts`, "export function register() {}\n");
    await Deno.writeTextFile(`${dir}/memory.ts`, "export function register() {}\n");
    assert.equal((await readManifest("./memory.ts", dir)).name, "memory");
    assert.equal((await readManifest("./My Plugin/mod.ts", dir)).name, "my-plugin");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("colliding derived names are qualified by parent directories; explicit names and repeats stay", () => {
  const named = distinctNames([
    single("/j/a/memory.ts", "memory"),
    single("/j/b/memory.ts", "memory"),
    single("/x/one/a/mod.ts", "a"),
    single("/x/two/a/mod.ts", "a"),
    single("/j/solo.ts", "solo"),
    single("/j/solo.ts", "solo"),
    { ...single("/j/dir/main.ts", "from-json"), root: "/j/dir" },
  ]).map((m) => m.name);
  assert.deepEqual(named, ["a.memory", "b.memory", "one.a", "two.a", "solo", "solo", "from-json"]);
});
