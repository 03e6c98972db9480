/**
 * A small GitHub Actions runner for a composite action, enough to run `action.yml` for real in tests: each
 * `run:` step is a bash script (`bash --noprofile --norc -eo pipefail`, as the runner runs `shell: bash`),
 * with the step's `env:`, the `INPUT_*` variables, and fresh `GITHUB_OUTPUT` / `GITHUB_ENV` / `GITHUB_PATH`
 * files whose lines are applied as the runner applies them (outputs to `steps.ID.outputs`, env and path to
 * the later steps); `GITHUB_STEP_SUMMARY` is shared. `${{ inputs.x }}` and `${{ steps.ID.outputs.y }}` are
 * substituted; any other expression in a `run:` step fails the test, so the action cannot depend on one this
 * emulation does not know. `uses:` steps (actions/cache) are skipped. After a failed step the others are
 * skipped, as without `if: always()`.
 */
import { parse } from "yaml";

interface Step {
  name?: string;
  id?: string;
  shell?: string;
  run?: string;
  uses?: string;
  env?: Record<string, string>;
  "working-directory"?: string;
}

interface ActionFile {
  inputs: Record<string, { default?: string }>;
  outputs: Record<string, { value: string }>;
  runs: { using: string; steps: Step[] };
}

export interface ActionRun {
  /** The action's outputs (its `outputs:` map evaluated). */
  outputs: Record<string, string>;
  /** Every step's stderr, in order (annotations are workflow commands on stdout or stderr). */
  log: string;
  summary: string;
  /** The step that failed, with its exit code, or null. */
  failed: { step: string; code: number } | null;
  skipped: string[];
}

export interface RunActionOptions {
  /** The repository holding action.yml (GITHUB_ACTION_PATH). */
  actionPath: string;
  /** GITHUB_WORKSPACE, and the working directory steps resolve against. */
  workspace: string;
  with: Record<string, string>;
  /** The runner's environment (PATH, HOME, DENO_DIR …). */
  env: Record<string, string>;
}

export async function runAction(options: RunActionOptions): Promise<ActionRun> {
  const action = parse(await Deno.readTextFile(`${options.actionPath}/action.yml`)) as ActionFile;
  if (action.runs.using !== "composite") throw new Error(`not a composite action: ${action.runs.using}`);
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    inputs[name] = options.with[name] ?? spec.default ?? "";
  }
  for (const name of Object.keys(options.with)) {
    if (!(name in action.inputs)) throw new Error(`action.yml has no input "${name}"`);
  }
  const temp = await Deno.makeTempDir({ prefix: "hermes-runner-" });
  const summaryFile = `${temp}/summary.md`;
  await Deno.writeTextFile(summaryFile, "");
  const steps: Record<string, Record<string, string>> = {};
  const env: Record<string, string> = {
    ...options.env,
    CI: "true",
    GITHUB_ACTIONS: "true",
    GITHUB_ACTION_PATH: options.actionPath,
    GITHUB_WORKSPACE: options.workspace,
    GITHUB_STEP_SUMMARY: summaryFile,
    GITHUB_RUN_ID: "1",
    GITHUB_RUN_ATTEMPT: "1",
    RUNNER_TEMP: temp,
    RUNNER_OS: "Linux",
    ...Object.fromEntries(
      Object.entries(inputs).map((
        [name, value],
      ) => [`INPUT_${name.replaceAll(" ", "_").toUpperCase()}`, value]),
    ),
  };
  const expand = (text: string) =>
    text.replace(/\$\{\{\s*(.*?)\s*\}\}/g, (_all, expression: string) => {
      const input = /^inputs\.([\w-]+)$/.exec(expression);
      if (input) return inputs[input[1]!] ?? "";
      const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expression);
      if (output) return steps[output[1]!]?.[output[2]!] ?? "";
      throw new Error(`the runner emulation does not know the expression \${{ ${expression} }}`);
    });
  let log = "";
  let failed: ActionRun["failed"] = null;
  const skipped: string[] = [];
  for (const [index, step] of action.runs.steps.entries()) {
    const name = step.name ?? step.id ?? `step ${index + 1}`;
    if (step.uses !== undefined || failed) {
      skipped.push(name);
      continue;
    }
    if (step.shell !== "bash") throw new Error(`step "${name}": only shell: bash is emulated`);
    const files = {
      GITHUB_OUTPUT: `${temp}/output-${index}`,
      GITHUB_ENV: `${temp}/env-${index}`,
      GITHUB_PATH: `${temp}/path-${index}`,
    };
    for (const file of Object.values(files)) await Deno.writeTextFile(file, "");
    const script = `${temp}/step-${index}.sh`;
    await Deno.writeTextFile(script, expand(step.run ?? ""));
    const stepEnv = Object.fromEntries(
      Object.entries(step.env ?? {}).map(([k, v]) => [k, expand(String(v))]),
    );
    const cwd = `${options.workspace}/${expand(step["working-directory"] ?? ".")}`;
    const out = await new Deno.Command("bash", {
      args: ["--noprofile", "--norc", "-eo", "pipefail", script],
      cwd,
      clearEnv: true,
      env: { ...env, ...stepEnv, ...files },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    log += new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    if (step.id) steps[step.id] = parseOutputs(await Deno.readTextFile(files.GITHUB_OUTPUT));
    Object.assign(env, parseOutputs(await Deno.readTextFile(files.GITHUB_ENV)));
    const paths = (await Deno.readTextFile(files.GITHUB_PATH)).split("\n").filter(Boolean);
    if (paths.length) env.PATH = [...paths.reverse(), env.PATH].join(":");
    if (out.code !== 0) failed = { step: name, code: out.code };
  }
  const outputs = Object.fromEntries(
    Object.entries(action.outputs).map(([name, { value }]) => [name, expand(value)]),
  );
  return { outputs, log, summary: await Deno.readTextFile(summaryFile), failed, skipped };
}

/** GITHUB_OUTPUT / GITHUB_ENV: `name=value` lines and `name<<DELIMITER … DELIMITER` blocks. */
export function parseOutputs(text: string): Record<string, string> {
  const values: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([\w-]+)<<(\S+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      if (end === -1) throw new Error(`unterminated ${heredoc[1]}<<${heredoc[2]} in a runner file`);
      values[heredoc[1]!] = lines.slice(i + 1, end).join("\n");
      i = end;
    } else if (line.includes("=")) {
      values[line.slice(0, line.indexOf("="))] = line.slice(line.indexOf("=") + 1);
    }
  }
  return values;
}
