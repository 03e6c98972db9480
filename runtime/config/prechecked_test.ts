import assert from "node:assert/strict";
import { parse } from "yaml";
import { staleFiles } from "../../scripts/config_validators.ts";
import { JobFile } from "./job_schema.ts";
import * as zodFiles from "./job_file.ts";
import { loadJob, loadUserConfig, precheckedJobFile } from "./prechecked.ts";
import * as jobLoad from "./job_load.ts";
import { ValidationError } from "../core/errors.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The spec of a loaded job, the part the loaders must agree on. */
const specOf = (loaded: unknown) => (loaded as { spec: unknown }).spec;

/**
 * What a load gave, for comparing the loaders: `value`, the JSON of what `pick` takes from the result, or the
 * ValidationError's message. Any other error fails the test.
 */
async function outcomeOf(
  load: () => unknown,
  pick: (loaded: unknown) => unknown = specOf,
): Promise<{ value?: string; error?: string }> {
  try {
    return { value: JSON.stringify(pick(await load())) };
  } catch (error) {
    assert.ok(error instanceof ValidationError, String(error));
    return { error: error.message };
  }
}

/** The outcome of this module's load, after checking that zod's gives the same. */
async function sameAsZod(
  fast: () => unknown,
  zod: () => unknown,
  what: string,
  pick: (loaded: unknown) => unknown = specOf,
): Promise<{ value?: string; error?: string }> {
  const outcome = await outcomeOf(fast, pick);
  assert.deepEqual(outcome, await outcomeOf(zod, pick), what);
  return outcome;
}

/** Runs `fn` in a new temporary directory, removed after. */
async function inTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "hermes-prechecked-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("the schemas compiled ahead of time are those of job_schema.ts and policy_schema.ts today", async () => {
  assert.deepEqual(await staleFiles(), [], "stale: run `deno task generate`");
});

/** Jobs the compiled check accepts: zod returns the same value, keys in the same order. */
const ACCEPTED = [
  "name: a\nprompt: hi\n",
  // Keys out of the schema's order, at every level; records keep the file's order (zod does too).
  "prompt: hi\nlimits: { timeout: 1m, max_turns: 3 }\nname: b\nenv: { Z: 1, A: two, M: true }\n" +
  "tools:\n  list_dir: { max_entries: 5, paths: [.] }\n  read_file: {}\n" +
  "model: { temperature: 0.5, name: m, base_url: 'http://127.0.0.1:8080/v1', provider: openai }\n",
  "name: c\ninputs:\n  who: { default: world, type: string }\n  n: { type: number, default: 2 }\nprompt: hi {{ inputs.who }}\n",
  "name: d\ntools:\n  shell:\n    allow: ['git *']\n    sandbox: { net: false, write: [./out], limits: { tmp: 64MiB, processes: 64 } }\n" +
  "    max_output: 1024\n",
  "name: e\ntools: { shell: { allow: ['ls'], sandbox: off } }\noutput: { schema: { type: object, required: [a] }, format: json }\n",
  "name: f\nschedule: { timezone: Europe/Paris, cron: '0 9 * * 1-5' }\nplugins: [{ path: ./p, permissions: { net: [a.example] } }]\n",
];

/** Jobs it leaves to zod: mistakes, and what only a zod refinement can judge. */
const LEFT_TO_ZOD = [
  "name: Bad Name\n",
  "name: a\nlimits: { max_turns: 0 }\n",
  "name: a\nunknown: 1\n",
  "name: a\nmodel: { base_url: ' http://x/' }\n", // zod would trim it: its value differs from the file's
  "name: a\nmodel: { base_url: 'not a url' }\n",
  "name: a\ntools: { shell: { sandbox: { net: ['http://a.example/'] } } }\n", // not host[:port]
  "name: a\nmcp_servers: { s: { command: x, url: 'http://x/' } }\n", // exactly one of them: a refinement
  "name: a\nmcp_servers: { s: { command: x } }\n", // valid, but the refinement is zod's to check
  "name: a\nlimits: { timeout: forever }\n",
  "name: a\nmodel: { temperature: .nan }\n",
];

Deno.test("a job the compiled check accepts is exactly what zod returns, in zod's key order", () => {
  for (const yaml of ACCEPTED) {
    const value = parse(yaml);
    const zod = JobFile.parse(value);
    const fast = precheckedJobFile(value);
    assert.ok(fast !== undefined, `the compiled check should accept:\n${yaml}`);
    assert.equal(JSON.stringify(fast), JSON.stringify(zod), yaml);
    assert.deepEqual(fast, zod);
  }
});

Deno.test("every example job file passes the compiled check and loads as through zod", async () => {
  let seen = 0;
  for (const entry of Deno.readDirSync(`${ROOT}examples`)) {
    if (!entry.name.endsWith(".yaml") || entry.name.includes(".replies.")) continue;
    const path = `${ROOT}examples/${entry.name}`;
    assert.ok(precheckedJobFile(parse(await Deno.readTextFile(path))) !== undefined, entry.name);
    const options = { validateOnly: true };
    const fast = await loadJob(path, options);
    const zod = zodFiles.loadJob(path, options);
    assert.equal(JSON.stringify(fast.spec), JSON.stringify(zod.spec), entry.name);
    seen++;
  }
  assert.ok(seen >= 3, `examples/ should hold job files, found ${seen}`);
});

Deno.test("what the compiled check does not accept, zod judges: the same value or the same message", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/job.yaml`;
    for (const yaml of LEFT_TO_ZOD) {
      assert.equal(precheckedJobFile(parse(yaml)), undefined, `left to zod:\n${yaml}`);
      await Deno.writeTextFile(path, yaml);
      await sameAsZod(
        () => loadJob(path, { validateOnly: true }),
        () => zodFiles.loadJob(path, { validateOnly: true }),
        yaml,
      );
    }
  });
});

Deno.test("hermes run loads neither zod nor ajv before its first model request: no static import reaches them", async () => {
  const { stdout, success } = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", `${ROOT}main.ts`],
    cwd: ROOT,
    stdout: "piped",
    stderr: "null",
  }).output();
  assert.ok(success);
  const graph = JSON.parse(new TextDecoder().decode(stdout)) as {
    modules: { specifier: string; dependencies?: { code?: { specifier?: string }; isDynamic?: boolean }[] }[];
  };
  const modules = new Map(graph.modules.map((m) => [m.specifier, m]));
  // What `hermes run JOB.yaml` imports: commands/run.ts and the job loader it imports on use.
  const roots = ["commands/run.ts", "runtime/config/prechecked.ts"].map((path) =>
    new URL(path, `file://${ROOT}`).href
  );
  const reached = new Set<string>();
  const packages = new Map<string, string>();
  const walk = (specifier: string) => {
    if (reached.has(specifier)) return;
    reached.add(specifier);
    for (const dep of modules.get(specifier)?.dependencies ?? []) {
      const target = dep.code?.specifier;
      if (!target || dep.isDynamic) continue;
      if (target.startsWith("npm:")) {
        packages.set(target.replace(/^npm:\/?(@?[^@/]+(\/[^@/]+)?).*$/, "$1"), specifier);
      } else walk(target);
    }
  };
  roots.forEach(walk);
  // yaml too: its npm entry is the CommonJS build; the program imports the ES module one (runtime/core/yaml.ts).
  // croner too: the first npm package a process loads sets up Deno's npm layer; cron.ts loads it for a
  // job with a schedule only.
  for (const heavy of ["zod", "ajv", "ajv-formats", "yaml", "croner"]) {
    assert.ok(!packages.has(heavy), `${packages.get(heavy)} imports ${heavy} statically`);
  }
  assert.ok(
    reached.has(new URL("runtime/core/_generated/yaml.js", `file://${ROOT}`).href),
    "the walk reaches the job loader's YAML parser",
  );
});

Deno.test("a job with a schedule is checked with croner, loaded for it: the same verdict as through zod", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/job.yaml`;
    for (const cron of ['"0 9 * * 1-5"', '"61 * * * *"', "nonsense"]) {
      await Deno.writeTextFile(path, `name: a\nprompt: hi\nschedule:\n  cron: ${cron}\n`);
      const fast = await sameAsZod(() => loadJob(path, {}), () => zodFiles.loadJob(path, {}), cron);
      if (cron !== '"0 9 * * 1-5"') {
        assert.match(fast.error ?? "", /job\.yaml:4:9: schedule\.cron: invalid cron/);
      } else assert.ok(fast.value?.includes("0 9 * * 1-5"));
    }
  });
});

Deno.test("a job under a trust policy is held to it as through zod: refused, bounded or protected alike", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/job.yaml`;
    await Deno.writeTextFile(
      `${dir}/policy.yaml`,
      "models: { base_urls: [] }\nsandbox_limits: { max_session_output: 1MiB }\n",
    );
    const policyConfig = await loadUserConfig(`${dir}/config.yaml`, { policy: `${dir}/policy.yaml` });
    assert.ok(policyConfig?.policies?.length === 1);
    const jobs = [
      // The allowed neighbour of each refusal below: the default model, output in the job directory.
      "name: a\nprompt: hi\noutput: { file: out.txt }\n",
      "name: a\nprompt: hi\nmodel: { base_url: 'http://127.0.0.1:9/v1' }\n",
      "name: a\nprompt: hi\noutput: { file: job.yaml }\n",
    ];
    const held = (loaded: unknown) => {
      const job = loaded as { spec: unknown; protect?: unknown; maxSessionOutput?: number };
      return [job.spec, job.protect, job.maxSessionOutput];
    };
    const outcome = (options: { untrusted: true } | { config: NonNullable<typeof policyConfig> }) =>
      sameAsZod(() => loadJob(path, options), () => zodFiles.loadJob(path, options), path, held);
    const untrusted = { untrusted: true } as const;
    const policy = { config: policyConfig! };
    for (const text of jobs) {
      await Deno.writeTextFile(path, text);
      await outcome(untrusted);
      await outcome(policy);
    }
    await Deno.writeTextFile(path, jobs[0]!);
    assert.match((await outcome(untrusted)).value ?? "", /job\.yaml/);
    assert.match((await outcome(policy)).value ?? "", /1048576/);
    await Deno.writeTextFile(path, jobs[1]!);
    assert.match(
      (await outcome(untrusted)).error ?? "",
      /job\.yaml:3:20: model\.base_url: refused by --untrusted/,
    );
    assert.match((await outcome(policy)).error ?? "", /job\.yaml:3:20: model\.base_url: refused by policy/);
    await Deno.writeTextFile(path, jobs[2]!);
    assert.match((await outcome(untrusted)).error ?? "", /protected files/);
  });
});

Deno.test("the job loader refuses to load a job under a policy without the policy's checks", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/job.yaml`;
    await Deno.writeTextFile(path, "name: a\nprompt: hi\n");
    const validators = zodFiles.zodValidators();
    assert.throws(
      () => jobLoad.loadJob(path, { untrusted: true }, validators),
      /job_policy\.ts\) are not loaded/,
    );
    assert.throws(
      () => jobLoad.jobFromObject({ name: "a", prompt: "hi" }, dir, { untrusted: true }, validators),
      /are not loaded/,
    );
    // With none in force it needs none: the same job as with them.
    const plain = jobLoad.loadJob(path, {}, validators);
    assert.deepEqual(plain.spec, zodFiles.loadJob(path, {}).spec);
    assert.equal(plain.protect, undefined);
  });
});

Deno.test("config.yaml loads as through zod: none, a policy file alone, a directory, plugins anchored at home", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/config.yaml`;
    await Deno.writeTextFile(`${dir}/policy.yaml`, "models: { base_urls: [] }\n");
    const same = (options: { policy?: string }, what: string) =>
      sameAsZod(
        () => loadUserConfig(path, options),
        () => zodFiles.loadUserConfig(path, options),
        what,
        (config) => config,
      );
    assert.deepEqual(await same({}, "no config.yaml"), { value: undefined });
    assert.match(
      (await same({ policy: `${dir}/policy.yaml` }, "a policy file alone")).value ?? "",
      /base_urls/,
    );
    assert.match(
      (await same({ policy: `${dir}/nope.yaml` }, "a missing policy file")).error ?? "",
      /nope\.yaml/,
    );
    await Deno.mkdir(path);
    assert.match((await same({}, "a directory")).error ?? "", /Cannot read config/);
    await Deno.remove(path);
    await Deno.writeTextFile(path, "plugins:\n  - path: ./p.ts\n    permissions: { read: [data] }\n");
    assert.match((await same({}, "plugins")).value ?? "", new RegExp(`"${dir}/data"`));
  });
});

Deno.test("a job with webhook trigger inputs is checked with their template check, loaded for it: as through zod", async () => {
  await inTempDir(async (dir) => {
    const path = `${dir}/job.yaml`;
    const job = (inputs: string) =>
      "name: a\nprompt: hi {{ inputs.n }}\ninputs: { n: { type: string, default: x } }\n" +
      `triggers:\n  webhook:\n    secret_env: HOOK_SECRET\n    inputs: { ${inputs} }\n`;
    for (
      const inputs of [
        'n: "{{ trigger.body.issue.number }}"',
        'n: "{{ trigger.nope }}"',
        'm: "{{ trigger.event }}"',
      ]
    ) {
      await Deno.writeTextFile(path, job(inputs));
      const fast = await sameAsZod(() => loadJob(path, {}), () => zodFiles.loadJob(path, {}), inputs);
      if (inputs.includes("nope")) {
        assert.match(
          fast.error ?? "",
          /job\.yaml:7:18: triggers\.webhook\.inputs\.n: unknown template reference/,
        );
      } else if (inputs.startsWith("m")) assert.match(fast.error ?? "", /"m" is not one of the job's inputs/);
      else assert.ok(fast.value?.includes("trigger.body.issue.number"));
    }
  });
});
