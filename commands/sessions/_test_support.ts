/** Test helper: runs the real CLI (`deno run -A main.ts …`) from the repo root as a subprocess. */
import { type CliResult, ROOT as REPO_ROOT } from "../../tests/_cli.ts";

export { type CliResult, hermes } from "../../tests/_cli.ts";

/** True when util-linux `script` (which gives a child a pseudo-terminal) is installed. */
export function canFakeTerminal(): boolean {
  try {
    return new Deno.Command("script", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false;
  }
}

/** Runs the CLI with a pseudo-terminal as stdin and stdout (stderr is merged into stdout by the terminal). */
export async function hermesOnTerminal(args: string[], input = ""): Promise<CliResult> {
  const command = [Deno.execPath(), "run", "-A", "main.ts", ...args].map(shellQuote).join(" ");
  const child = new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    cwd: REPO_ROOT,
    env: { NO_COLOR: "1" },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const { code, stdout, stderr } = await child.output();
  const decoder = new TextDecoder();
  return { code, stdout: decoder.decode(stdout).replaceAll("\r\n", "\n"), stderr: decoder.decode(stderr) };
}

function shellQuote(arg: string): string {
  return /^[\w./=:-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}

/** A user error: exit 2 and one `hermes: …` line on stderr, no stack trace. */
export function isUserError(result: CliResult): boolean {
  const lines = result.stderr.trimEnd().split("\n");
  return result.code === 2 && lines.length === 1 && /^hermes( [a-z]+)*: /.test(lines[0]!) &&
    !/\bat \S+:\d+/.test(
      result.stderr,
    );
}
