/**
 * The `hermes run` flags peers' users expect (`claude -p`, `codex exec`): `--max-turns`, `--timeout`,
 * `--max-budget-usd`, `--label`, and
 * for a one-shot `-p` run `--tools` and `--allow`. They override the job's values (CLI > job > config.yaml).
 */
import { parseDuration } from "../runtime/core/duration.ts";
import { ValidationError } from "../runtime/core/errors.ts";
import { didYouMean } from "../runtime/core/suggest.ts";
import type { ResolvedJob } from "../runtime/config/job.ts";
import { parseLabelFlags } from "../runtime/config/labels.ts";
import type { JobFile } from "../runtime/config/job_schema.ts";

export interface RunFlags {
  "max-turns"?: string;
  "max-budget-usd"?: string;
  timeout?: string;
  tools?: string;
  allow?: string[];
  label?: string[];
  worktree?: boolean;
}

type Tools = NonNullable<JobFile["tools"]>;
// The tools a flag can offer without further settings; paths are relative to the job directory, which for
// a one-shot run is the current directory.
const OFFERABLE: Record<string, (tools: Tools) => void> = {
  read_file: (tools) => tools.read_file = { paths: ["."] },
  list_dir: (tools) => tools.list_dir = { paths: ["."] },
  write_file: (tools) => tools.write_file = { paths: ["."] },
  shell: () => {},
};

/** The job with the flags applied; `oneShot` is a `-p` run without a job file or a resumed session. */
export function applyRunFlags(job: ResolvedJob, flags: RunFlags, options: { oneShot: boolean }): ResolvedJob {
  const spec: JobFile = { ...job.spec };
  if (flags.worktree) spec.workspace = { ...spec.workspace, isolation: "worktree" };
  if (
    flags["max-turns"] !== undefined || flags.timeout !== undefined || flags["max-budget-usd"] !== undefined
  ) {
    spec.limits = { ...spec.limits };
    if (flags["max-budget-usd"] !== undefined) spec.limits.max_cost_usd = usd(flags["max-budget-usd"]);
    if (flags["max-turns"] !== undefined) spec.limits.max_turns = maxTurns(flags["max-turns"]);
    if (flags.timeout !== undefined) spec.limits.timeout = timeout(flags.timeout);
  }
  if (flags.tools !== undefined || flags.allow !== undefined) {
    if (!options.oneShot) {
      throw new ValidationError(
        "hermes run: --tools and --allow go with a one-shot -p run; a job file lists its tools under tools:",
      );
    }
    spec.tools = cliTools(flags.tools, flags.allow ?? []);
  }
  const labels = flags.label?.length ? { ...job.labels, ...parseLabelFlags(flags.label) } : job.labels;
  return { ...job, spec, ...(labels ? { labels } : {}) };
}

function usd(text: string): number {
  const n = Number(text.trim());
  if (!/^\s*\d*\.?\d+\s*$/.test(text) || !Number.isFinite(n) || n <= 0) {
    throw new ValidationError(
      `hermes run: invalid --max-budget-usd "${text}": expected a positive amount of dollars like 0.50`,
    );
  }
  return n;
}

function maxTurns(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new ValidationError(`hermes run: invalid --max-turns "${text}": expected a positive whole number`);
  }
  return n;
}

function timeout(text: string): string {
  // A bare number would silently mean seconds; a unit makes the intent visible (as in job files).
  let ms = Number.NaN;
  try {
    if (!/^\s*\d+(\.\d+)?\s*$/.test(text)) ms = parseDuration(text);
  } catch { /* reported below */ }
  if (!(ms > 0)) {
    throw new ValidationError(
      `hermes run: invalid --timeout "${text}": expected a duration like 90s, 5m or 1h30m`,
    );
  }
  return text.trim();
}

function cliTools(list: string | undefined, allow: string[]): Tools {
  const names = (list ?? "").split(",").map((name) => name.trim()).filter((name) => name !== "");
  const tools: Tools = {};
  for (const name of names) {
    const offer = OFFERABLE[name];
    if (!offer) {
      const hint = name === "http_fetch"
        ? " (it needs a hosts list: use a job file)"
        : didYouMean(name, Object.keys(OFFERABLE));
      throw new ValidationError(
        `hermes run: unknown tool "${name}" in --tools${hint}: expected ${Object.keys(OFFERABLE).join(", ")}`,
      );
    }
    offer(tools);
  }
  if (names.includes("shell") && allow.length === 0) {
    throw new ValidationError("hermes run: --tools shell needs --allow PATTERN (e.g. --allow 'git *')");
  }
  if (allow.length > 0) tools.shell = { allow: allow.map((pattern) => pattern.trim()) };
  if (tools.shell?.allow?.some((pattern) => pattern === "")) {
    throw new ValidationError("hermes run: --allow needs a command pattern, e.g. --allow 'git *'");
  }
  return tools;
}
