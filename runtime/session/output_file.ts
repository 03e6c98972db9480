/**
 * `output.file` (after templating: `./out/{{ inputs.branch }}.md` with `--input branch=../../x`) may only
 * be written inside the job directory or a write root the job grants (`tools.write_file.paths`,
 * `tools.shell.sandbox.write`). Checked on the real path before any model call (exit 2), and written
 * through scoped_open, which follows no symlink: one planted by a tool during the run (`ln -s / out`)
 * cannot redirect the write, and a file with other hard links is refused.
 */
import { ValidationError } from "../core/errors.ts";
import type { ResolvedJob } from "../config/job.ts";
import { candidateInScope, type PathScope, pathScope } from "../tools/paths.ts";
import { resolve } from "../core/path.ts";

/** The scope `output.file` is written in (roots' real paths fixed now), or undefined without one. */
export function outputFileScope(job: ResolvedJob): PathScope | undefined {
  const file = job.spec.output?.file;
  if (file === undefined) return undefined;
  const shellSandbox = job.spec.tools?.shell?.sandbox;
  const roots = [
    ".",
    ...(job.spec.tools?.write_file?.paths ?? []),
    ...(shellSandbox && shellSandbox !== "off" ? shellSandbox.write ?? [] : []),
  ];
  const scope = pathScope("write_file", job.dir, roots);
  const found = inScope(scope, file);
  if (!found) {
    throw new ValidationError(
      `Cannot write output.file "${file}": it resolves outside the job directory ${scope.jobDir} and every ` +
        `write root (tools.write_file.paths, tools.shell.sandbox.write)`,
    );
  }
  return scope;
}

/** False when `file` resolves outside; true too when it cannot be resolved (the write then says why). */
function inScope(scope: PathScope, file: string): boolean {
  try {
    return candidateInScope(scope, resolve(scope.jobDir, file), file).ok;
  } catch {
    return true;
  }
}

/**
 * Writes (replaces) `output.file` inside `scope`; throws with the reason when it cannot. node:fs (Deno's
 * Node layer, ~10 ms to boot) loads only for jobs that write one.
 */
export async function writeOutputFile(scope: PathScope, file: string, text: string): Promise<void> {
  const [{ default: fs }, { openInScope }] = await Promise.all([
    import("node:fs"),
    import("../tools/scoped_open.ts"),
  ]);
  const opened = openInScope(scope, file, "write");
  if (!opened.ok) {
    throw new Error(opened.reason.replace("tools.write_file.paths", "the job directory and write roots"));
  }
  try {
    const bytes = new TextEncoder().encode(text);
    fs.ftruncateSync(opened.fd, 0);
    for (let written = 0; written < bytes.length;) {
      written += fs.writeSync(opened.fd, bytes, written, bytes.length - written);
    }
  } finally {
    fs.closeSync(opened.fd);
  }
}
