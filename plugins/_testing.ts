/** Test helpers for the plugin host: a temp job directory with a real store, and collected events. */
import { dirname } from "node:path";
import { systemClock } from "../runtime/core/clock.ts";
import { EventBus, type HermesEvent } from "../runtime/core/events.ts";
import { createLogger } from "../runtime/core/log.ts";
import type { Store } from "../runtime/store/store.ts";
import { openSqliteStore } from "../runtime/store/sqlite/sqlite_store.ts";
import { type PluginHost, startPlugins, type StartPluginsOptions } from "./host.ts";
import type { PluginEntry } from "../runtime/config/job_schema.ts";
import { sandboxTests } from "../runtime/sandbox/_testing.ts";

/** Plugins run inside bubblewrap: where it cannot run, their tests skip (the reason printed; CI fails). */
export const { ignore: withoutSandbox } = await sandboxTests("plugin tests");

/** A test that starts plugin processes (in the real sandbox). */
export function pluginTest(name: string, fn: () => Promise<void>): void {
  Deno.test({ name, ignore: withoutSandbox, fn });
}

export interface Fixture extends AsyncDisposable {
  /** The job directory (a fresh temp dir). */
  dir: string;
  store: Store;
  /** The `plugin.error` events (the only type the host emits). */
  events: HermesEvent<"plugin.error">[];
  /** Host stderr lines. */
  logs: string[];
  /** Writes files (paths relative to `dir`), creating directories. */
  write(files: Record<string, string>): Promise<void>;
  /** Starts plugins against this fixture; they are stopped when the fixture is disposed. */
  start(entries: PluginEntry[], options?: Partial<StartPluginsOptions>): Promise<PluginHost>;
}

export async function fixture(): Promise<Fixture> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-plugins-" }));
  const store = openSqliteStore(`${dir}/state.db`);
  const events: HermesEvent<"plugin.error">[] = [];
  const logs: string[] = [];
  const bus = new EventBus(systemClock);
  bus.subscribe((event) => {
    if (event.type === "plugin.error") events.push(event);
  });
  const hosts: PluginHost[] = [];
  return {
    dir,
    store,
    events,
    logs,
    async write(files) {
      for (const [path, text] of Object.entries(files)) {
        await Deno.mkdir(dirname(`${dir}/${path}`), { recursive: true });
        await Deno.writeTextFile(`${dir}/${path}`, text);
      }
    },
    async start(entries, options = {}) {
      const host = await startPlugins(entries, {
        job_dir: dir,
        store,
        events: bus,
        log: createLogger({ level: "debug", write: (line) => logs.push(line) }),
        session_id: "s-default",
        ...options,
      });
      hosts.push(host);
      return host;
    },
    async [Symbol.asyncDispose]() {
      await Promise.all(hosts.map((host) => host.stop()));
      await store.close();
      await Deno.remove(dir, { recursive: true });
    },
  };
}

/** Rejects with the error `promise` rejects with; fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a rejection");
}

/** True while a process with this pid exists (and is not a zombie we could still reap). */
export function processAlive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return false;
  }
}

/** For command and tool contexts that are never cancelled. */
export const notAborted: AbortSignal = new AbortController().signal;

export const SECRET = "top secret contents";

export interface ProberFixture extends AsyncDisposable {
  f: Fixture;
  /** A real temp directory outside the job holding `secret.txt`, `secret.js` and `secret.json`. */
  outside: string;
  /** Port of a local HTTP server answering "served". */
  port: number;
}

/**
 * A job directory with the plugin `prober/` whose one tool `probe({op, arg})` calls `ops[op](arg)`; `ops`
 * is JavaScript source of an object literal of (async) functions. Escape tests try one operation each.
 */
export async function proberFixture(ops: string): Promise<ProberFixture> {
  const f = await fixture();
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-outside-" }));
  await Deno.writeTextFile(`${outside}/secret.txt`, SECRET);
  await Deno.writeTextFile(`${outside}/secret.js`, `export const secret = ${JSON.stringify(SECRET)};`);
  await Deno.writeTextFile(`${outside}/secret.json`, JSON.stringify({ secret: SECRET }));
  await f.write({
    "prober/plugin.json": JSON.stringify({ name: "prober", version: "1", entry: "mod.js" }),
    "prober/mod.js": `const ops = ${ops};
export function register(ctx) {
  ctx.registerTool("probe", {
    description: "tries one operation",
    parameters: { type: "object", required: ["op"], properties: { op: { type: "string" }, arg: { type: "string" } } },
    handler: ({ op, arg }) => ops[op](arg),
  });
}
`,
  });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, () => new Response("served"));
  return {
    f,
    outside,
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await Deno.remove(outside, { recursive: true });
      await f[Symbol.asyncDispose]();
    },
  };
}
