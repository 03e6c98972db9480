/**
 * GitHub Actions plumbing for `hermes run` (docs/github-actions.md): step outputs (`GITHUB_OUTPUT`), the job summary
 * (`GITHUB_STEP_SUMMARY`) and, with `GITHUB_ACTIONS=true`, `::error::` annotations when the run did not
 * succeed — on every exit path, a job-file error (exit 2) included: each `file:line:col: message` problem
 * becomes an annotation on that line of the file, so the pull request marks it.
 *
 * An output file that cannot be written fails the run (exit 1), before anything is printed: later steps read
 * these outputs, and a step that exits 0 with outputs missing lets a pipeline go on with empty values — what
 * `core.setOutput` in GitHub's own toolkit does too (it throws). The summary is only for people: a summary
 * that cannot be written is a warning and the run keeps its ending.
 */
import { errorMessage } from "../runtime/core/errors.ts";
import { escapeData, escapeProperty } from "../runtime/core/workflow_commands.ts";
import { failedDelivery, type RunResult } from "../runtime/session/outcome.ts";

export interface GitHubTarget {
  env: Record<string, string>;
  /** Writes one line to stderr (under GITHUB_ACTIONS, made inert: never a workflow command). */
  err: (line: string) => void;
  /** Writes a workflow command to stderr as it is (`::error …::`); `err` where there is none. */
  workflowCommand?: (line: string) => void;
}

export interface Published {
  /** The absolute path `output.file` was written to, when it was. */
  output_file?: string | undefined;
}

/** Writes the result for the runner and returns it, failed if the step outputs could not be written. */
export function publishToGitHub(
  target: GitHubTarget,
  result: RunResult,
  published: Published = {},
): RunResult {
  const { env } = target;
  if (env.GITHUB_OUTPUT) {
    try {
      Deno.writeTextFileSync(env.GITHUB_OUTPUT, outputLines(result, published), { append: true });
    } catch (error) {
      result = failedDelivery(result, {
        terminal_reason: "ci_output_error",
        error: `Cannot write the step outputs to GITHUB_OUTPUT (${env.GITHUB_OUTPUT}): ${
          errorMessage(error)
        }`,
      });
    }
  }
  if (env.GITHUB_STEP_SUMMARY) {
    try {
      Deno.writeTextFileSync(env.GITHUB_STEP_SUMMARY, summary(result), { append: true });
    } catch (error) {
      target.err(
        `hermes: warning: cannot write GITHUB_STEP_SUMMARY (${env.GITHUB_STEP_SUMMARY}): ${
          errorMessage(error)
        }`,
      );
    }
  }
  if (env.GITHUB_ACTIONS === "true" && result.status !== "success") {
    const command = target.workflowCommand ?? target.err;
    for (const line of annotations(result, env.GITHUB_WORKSPACE)) command(line);
  }
  return result;
}

/** A problem line of a job file (the form every job-file error and `hermes validate` print). */
const LOCATED = /^(.+?):(\d+):(\d+): (.+)$/;

/**
 * `::error::` workflow commands: one per located problem of invalid input (`file=,line=,col=`, the path
 * relative to the workspace when it lies inside), else one for the whole ending. Only a job-file error is read
 * for locations: another ending's error can quote a server or the model, whose text must not place an
 * annotation on a file of its choosing.
 */
export function annotations(result: RunResult, workspace?: string): string[] {
  const title = `title=Hermes ${escapeProperty(result.job)}`;
  const lines = (result.error ?? "").split("\n").filter((line) => line.trim() !== "");
  if (result.terminal_reason !== "invalid_input" || !lines.some((line) => LOCATED.test(line))) {
    const message = `${result.status} (${result.terminal_reason}): ${result.error ?? ""}`;
    return [`::error ${title}::${escapeData(message)}`];
  }
  return lines.map((line) => {
    const at = LOCATED.exec(line);
    if (!at) return `::error ${title}::${escapeData(line)}`;
    const [, file, row, col, message] = at;
    const shown = workspace && file!.startsWith(`${workspace.replace(/\/$/, "")}/`)
      ? file!.slice(workspace.replace(/\/$/, "").length + 1)
      : file!;
    return `::error file=${escapeProperty(shown)},line=${row},col=${col},${title}::${escapeData(message!)}`;
  });
}

/** `name=value` lines; a value that may hold a newline uses the `name<<DELIMITER` heredoc form. */
function outputLines(result: RunResult, published: Published): string {
  const delimiter = `HERMES_${crypto.randomUUID().replaceAll("-", "")}`;
  const values: [string, string][] = [
    ["session_id", result.session_id],
    ["status", result.status],
    ["exit_code", String(result.exit_code)],
    ["terminal_reason", result.terminal_reason],
    ["error", result.error ?? ""],
    ["output", JSON.stringify(result.output)],
    ["final", result.final],
    ["output_file", published.output_file ?? ""],
  ];
  const lines = values.flatMap(([name, value]) =>
    /[\r\n]/.test(value) || name === "final"
      ? [`${name}<<${delimiter}`, value, delimiter]
      : [`${name}=${value}`]
  );
  return lines.join("\n") + "\n";
}

function summary(result: RunResult): string {
  const head = `### Hermes: ${result.job} — ${result.status}\n\n` +
    (result.session_id === ""
      ? `No session was started (${result.duration_ms} ms).\n\n`
      : `Session \`${result.session_id}\`, ${plural(result.turns, "turn")}, ${result.duration_ms} ms.\n\n`);
  const error = result.error ?? "";
  const why = result.status === "success"
    ? ""
    : `**Status:** ${result.status} · **Terminal reason:** \`${result.terminal_reason}\` · **Exit code:** ${result.exit_code}\n\n` +
      // One problem per line (a job file may have several): a Markdown line break keeps them apart.
      `**Error:** ${error.replaceAll("\n", "  \n")}\n\n`;
  const final = result.final;
  return head + why + (final.trim() === "" ? "" : `${final}\n\n`);
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
