/**
 * A run's labels (docs/cost.md): the CI's own (GitHub Actions, GitLab CI), read from the process environment
 * snapshot here in config loading and nowhere else, then the job's `labels:` (templates rendered), then
 * `--label K=V` flags, each overriding the one before. Stored with the session and copied onto its model
 * calls, so spend can be grouped by repository, workflow, run or pull request (`hermes cost --by label:KEY`).
 */
import { ValidationError } from "../core/errors.ts";
import { LABEL_KEY, type Labels } from "../core/labels.ts";

/** Longest label value kept: a label names something, it does not carry text. */
export const MAX_LABEL_VALUE = 256;

/** The labels a CI run carries: `ci.provider`, `ci.repository`, `ci.run_id`, … (none outside CI). */
export function ciLabels(env: Readonly<Record<string, string | undefined>>): Labels {
  if (env.GITHUB_ACTIONS === "true") return compact(githubLabels(env));
  if (env.GITLAB_CI === "true") return compact(gitlabLabels(env));
  return {};
}

function githubLabels(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  return {
    "ci.provider": "github",
    "ci.repository": env.GITHUB_REPOSITORY,
    "ci.workflow": env.GITHUB_WORKFLOW,
    "ci.run_id": env.GITHUB_RUN_ID,
    "ci.run_attempt": env.GITHUB_RUN_ATTEMPT,
    // A pull request's ref is refs/pull/N/merge: the branch is GITHUB_HEAD_REF there.
    "ci.ref": env.GITHUB_HEAD_REF || env.GITHUB_REF_NAME || env.GITHUB_REF,
    "ci.sha": env.GITHUB_SHA,
    "ci.pull_request": pullRequestOf(env),
  };
}

/** The pull request number: from `refs/pull/N/merge` (or `/head`), else from the event payload. */
function pullRequestOf(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const fromRef = /^refs\/pull\/(\d+)\/(merge|head)$/.exec(env.GITHUB_REF ?? "")?.[1];
  if (fromRef) return fromRef;
  if (!env.GITHUB_EVENT_PATH || !/^pull_request/.test(env.GITHUB_EVENT_NAME ?? "")) return undefined;
  try {
    const event = JSON.parse(Deno.readTextFileSync(env.GITHUB_EVENT_PATH));
    const number = event?.pull_request?.number ?? event?.number;
    return Number.isInteger(number) ? String(number) : undefined;
  } catch {
    return undefined;
  }
}

function gitlabLabels(env: Readonly<Record<string, string | undefined>>): Record<string, string | undefined> {
  return {
    "ci.provider": "gitlab",
    "ci.repository": env.CI_PROJECT_PATH,
    "ci.workflow": env.CI_PIPELINE_NAME || env.CI_JOB_NAME,
    "ci.run_id": env.CI_PIPELINE_ID,
    "ci.job_id": env.CI_JOB_ID,
    "ci.ref": env.CI_COMMIT_REF_NAME,
    "ci.sha": env.CI_COMMIT_SHA,
    "ci.pull_request": env.CI_MERGE_REQUEST_IID,
  };
}

function compact(labels: Record<string, string | undefined>): Labels {
  return Object.fromEntries(
    Object.entries(labels).filter((entry): entry is [string, string] => !!entry[1])
      .map(([key, value]) => [key, value.slice(0, MAX_LABEL_VALUE)]),
  );
}

/** `--label K=V` flags of `command` (the last of a key wins); a bad one is a ValidationError naming it. */
export function parseLabelFlags(flags: readonly string[], command = "hermes run"): Labels {
  const labels: Labels = {};
  for (const flag of flags) {
    const eq = flag.indexOf("=");
    const key = flag.slice(0, Math.max(eq, 0));
    if (eq <= 0 || !LABEL_KEY.test(key)) {
      throw new ValidationError(
        `${command}: invalid --label "${flag}": expected KEY=VALUE, KEY of letters, digits, "_", "." and "-"`,
      );
    }
    labels[key] = checkedValue(flag.slice(eq + 1), `--label ${key}`);
  }
  return labels;
}

/** A label value as stored; one too long is refused (naming `where`) rather than cut without a word. */
export function checkedValue(value: string, where: string): string {
  if (value.length > MAX_LABEL_VALUE) {
    throw new ValidationError(
      `${where}: a label value is at most ${MAX_LABEL_VALUE} characters, got ${value.length}`,
    );
  }
  return value;
}

/**
 * A run's labels: the CI's (from `env`), then `job` (the job's rendered `labels:`), then `flags`. What a
 * queued run stores and what a session is created with.
 */
export function runLabels(
  parts: { env: Readonly<Record<string, string | undefined>>; job?: Labels; flags?: Labels },
): Labels {
  return { ...ciLabels(parts.env), ...parts.job, ...parts.flags };
}
