/**
 * `hermes submit JOB.yaml`: validates the job exactly as `run` does and queues it for a worker
 * (`hermes daemon`); prints the run id (`--output json`: `{run_id, status, deduplicated}`) and returns.
 */
import { type Cli, parseCommandArgs } from "./_cli.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { parseDuration } from "../runtime/core/duration.ts";
import { parseInputFlags } from "../runtime/config/job.ts";
import { parseLabelFlags } from "../runtime/config/labels.ts";
import { cliApp } from "./_app.ts";

export async function main(cli: Cli): Promise<number> {
  const { values, positionals } = parseCommandArgs("submit", cli.args);
  if (positionals.length !== 1) {
    throw new ValidationError(
      `hermes submit: expected one job file, got ${positionals.length}${
        positionals.length ? `: ${positionals.join(" ")}` : ""
      }`,
    );
  }
  const output = values.output ?? "text";
  if (output !== "text" && output !== "json") {
    throw new ValidationError(`hermes submit: invalid --output "${output}": expected text or json`);
  }
  const priority = values.priority === undefined ? undefined : integerFlag("--priority", values.priority);
  const notBefore = values["not-before"] === undefined
    ? undefined
    : notBeforeFlag(values["not-before"], cli.clock.now());
  if (values.key !== undefined && values.key.trim() === "") {
    throw new ValidationError("hermes submit: --key is empty");
  }
  const inputs = parseInputFlags(values.input ?? []);
  const files = await import("../runtime/config/prechecked.ts");
  const config = await files.loadUserConfig(`${cli.home}/config.yaml`, { policy: cli.policyFile });
  // The same loading and checks as `hermes run`: a bad job or input is one located line, exit 2.
  const job = await files.loadJob(positionals[0]!, { inputs, env: cli.env, ...(config ? { config } : {}) });
  const store = await cli.openStore();
  try {
    const app = cliApp(cli, store, { config, source: "job" });
    const { run, deduplicated } = await app.submit({
      job,
      ...(values.label?.length ? { labels: parseLabelFlags(values.label, "hermes submit") } : {}),
      ...(values.key !== undefined ? { key: values.key } : {}),
      ...(priority !== undefined ? { priority } : {}),
      ...(notBefore !== undefined ? { not_before: notBefore } : {}),
    });
    if (output === "json") {
      await cli.out(JSON.stringify({ run_id: run.id, status: run.status, deduplicated }) + "\n");
    } else {
      await cli.out(run.id + "\n");
      if (deduplicated) {
        cli.log.info(`run ${run.id} was submitted before with key "${run.key}" (${run.status})`);
      }
    }
    return 0;
  } finally {
    await store.close();
  }
}

function integerFlag(flag: string, text: string): number {
  if (!/^-?\d+$/.test(text.trim())) {
    throw new ValidationError(`hermes submit: invalid ${flag} "${text}": expected an integer`);
  }
  return Number(text);
}

/** An ISO time, or a delay from now (`10m`). */
export function notBeforeFlag(text: string, now: number): number {
  if (/^\d+(\.\d+)?\s*[a-z]/i.test(text.trim()) && !/^\d{4}-/.test(text.trim())) {
    try {
      return now + parseDuration(text.trim());
    } catch { /* not a duration: judged as a time below */ }
  }
  const at = /^\d{4}-\d{2}-\d{2}/.test(text.trim()) ? Date.parse(text.trim()) : NaN;
  if (Number.isNaN(at)) {
    throw new ValidationError(
      `hermes submit: invalid --not-before "${text}": expected an ISO time like 2026-01-31T09:00:00Z or a ` +
        "delay like 10m",
    );
  }
  return at;
}
