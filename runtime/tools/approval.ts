/**
 * The job's approver (`approval: {command | url, timeout}`): asked about each tool call outside the job's
 * allow-lists, it answers allow or deny. The call goes to it as one JSON object — on the command's stdin, or
 * as the body of a POST to the url — and anything but a clear "allow" within the timeout is a deny: a
 * failing, silent or slow approver never lets a call through and never holds a run.
 *
 * The command runs on the host (it is the operator's program, like the job file itself), in the job's
 * directory, found and started with Hermes's own environment (runtime/core/host_env.ts: its PATH, HOME,
 * locale; never the job's `env:`, whose `BASH_ENV` or `PATH` would make the approver run the job's code),
 * stdout read up to 64 KiB. It runs in its own process group, and the whole group is killed when the ask
 * ends (at the timeout too). The JSON it gets carries `subject` (where the call leads as it will run, e.g. a
 * file's real path: an approval covers that alone) and `title` (one line for a person: control, escape and
 * bidi characters as escapes, head and tail of a long one); its text holds those characters only as `\u`
 * escapes.
 */
import { isAbsolute, resolve } from "../core/path.ts";
import type { ApprovalConfig } from "../config/job_schema.ts";
import { parseDuration } from "../core/duration.ts";
import type { ApprovalRequest, ToolAsker } from "./gate.ts";
import { type HostEnv, hostProgramEnv } from "../core/host_env.ts";
import { visibleJson, visibleLine } from "../core/visible.ts";

export const DEFAULT_APPROVAL_TIMEOUT = "30s";
const MAX_ANSWER_BYTES = 64 * 1024;

export interface ApproverOptions {
  job: string;
  job_dir: string;
  /** Hermes's own environment: the approver gets `hostProgramEnv` of it, never the job's `env:`. */
  host_env: HostEnv;
  fetch?: typeof fetch;
}

/** The asker of a job's `approval:` entry. */
export function jobApprover(config: ApprovalConfig, options: ApproverOptions): ToolAsker {
  const timeoutMs = parseDuration(config.timeout ?? DEFAULT_APPROVAL_TIMEOUT);
  const ask = config.command ? commandAnswer(config.command, options) : urlAnswer(config.url!, options);
  return async (request) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = AbortSignal.any([request.signal, timeout]);
    // Text a person may be shown as it is: escapes for every control, escape and bidi character.
    const body = visibleJson(payload(request, options.job));
    // The answer is raced against the signal: a program whose children keep its stdout open, or a server
    // that trickles its body, is a deny at the timeout all the same.
    const stopped = new Promise<never>((_, reject) => {
      if (signal.aborted) reject(signal.reason);
      signal.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
    try {
      return isAllow(await Promise.race([ask(body, signal), stopped]));
    } catch {
      return false;
    }
  };
}

/** Longest `title`; a longer one keeps its head and tail (visibleLine). */
const TITLE_MAX = 240;

function payload(request: ApprovalRequest, job: string) {
  const { signal: _signal, ...call } = request;
  const main = call.args.command ?? call.args.path ?? call.args.url;
  const detail = typeof main === "string" ? main : JSON.stringify(call.args);
  const leads = call.subject !== undefined && call.subject !== main ? ` → ${call.subject}` : "";
  return { job, ...call, title: visibleLine(`${call.tool}: ${detail}${leads}`, TITLE_MAX) };
}

/** "allow" (any case, surrounding space) or `{"decision": "allow"}`. */
export function isAllow(answer: string): boolean {
  const text = answer.trim();
  if (text.toLowerCase() === "allow") return true;
  try {
    const parsed = JSON.parse(text) as { decision?: unknown } | null;
    return typeof parsed === "object" && parsed !== null && parsed.decision === "allow";
  } catch {
    return false;
  }
}

function commandAnswer(
  command: readonly string[],
  options: ApproverOptions,
): (body: string, signal: AbortSignal) => Promise<string> {
  const [program, ...args] = command as [string, ...string[]];
  const path = program.includes("/") && !isAbsolute(program) ? resolve(options.job_dir, program) : program;
  // Deno looks a bare program name up in the PATH of the environment given to the child: this one.
  const env = hostProgramEnv(options.host_env);
  return async (body, signal) => {
    // Its own process group, killed whole when the ask ends (answered, timed out or cancelled): nothing
    // the approver started outlives it. (A child that leaves the group with setsid is not reached.)
    const child = new Deno.Command(path, {
      args,
      cwd: options.job_dir,
      env,
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
      detached: true,
    }).spawn();
    const killGroup = () => {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is gone already
      }
    };
    signal.addEventListener("abort", killGroup, { once: true });
    try {
      const writer = child.stdin.getWriter();
      // A program that does not read its stdin (or exits first) must not fail the ask: its answer counts.
      await writer.write(new TextEncoder().encode(body)).catch(() => {});
      await writer.close().catch(() => {});
      const [status, answer] = await Promise.all([child.status, readAll(child.stdout)]);
      if (!status.success) return "deny";
      return answer;
    } finally {
      signal.removeEventListener("abort", killGroup);
      killGroup();
      // Reaped, so no zombie and no open handle stays behind after a timeout.
      await child.status.catch(() => {});
    }
  };
}

function urlAnswer(
  url: string,
  options: ApproverOptions,
): (body: string, signal: AbortSignal) => Promise<string> {
  const fetchUrl = options.fetch ?? globalThis.fetch;
  return async (body, signal) => {
    const response = await fetchUrl(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      signal,
      redirect: "error",
    });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      return "deny";
    }
    return await readAll(response.body);
  };
}

/** The text of `stream`, the first MAX_ANSWER_BYTES of it kept (the rest is drained, so a program can exit). */
async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    if (text.length < MAX_ANSWER_BYTES) text += decoder.decode(chunk, { stream: true });
  }
  return text;
}
