/**
 * `output.file` (after templating: `./out/{{ inputs.branch }}.md` with `--input branch=../../x`) may only
 * be written inside the job directory or a write root the job grants (`tools.write_file.paths`,
 * `tools.shell.sandbox.write`). Checked on the real path before any model call (exit 2), and written
 * through scoped_open, which follows no symlink: one planted by a tool during the run (`ln -s / out`)
 * cannot redirect the write, and a file with other hard links is refused. Never inside a `.git` directory
 * (its config and hooks run programs), nor, for a protected job, on its own files (core/protected_paths.ts):
 * both checked on the path before any model call and on the file actually opened before it is written.
 */
import { ValidationError } from "../core/errors.ts";
import type { ResolvedJob } from "../config/job.ts";
import { candidateInScope, type PathScope, pathScope } from "../tools/paths.ts";
import { resolve } from "../core/path.ts";
import { insideGit, type ProtectedPaths, protectsTarget } from "../core/protected_paths.ts";

/** The scope `output.file` is written in (roots' real paths fixed now), or undefined without one. */
export function outputFileScope(job: ResolvedJob): PathScope | undefined {
  const refused = job.spec.output?.file === undefined ? null : refusal(job.spec.output.file, job);
  if (refused !== null) {
    throw new ValidationError(`Cannot write output.file "${job.spec.output!.file}": ${refused}`);
  }
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
export async function writeOutputFile(
  scope: PathScope,
  file: string,
  text: string,
  protect?: ProtectedPaths,
): Promise<void> {
  const [{ default: fs }, { openInScope }] = await Promise.all([
    import("node:fs"),
    import("../tools/scoped_open.ts"),
  ]);
  const opened = openInScope(scope, file, "write");
  if (!opened.ok) {
    throw new Error(opened.reason.replace("tools.write_file.paths", "the job directory and write roots"));
  }
  try {
    // The file actually opened: a symlink inside a root may have led it into .git or onto a protected file.
    const why = refusal(openedPath(opened.fd) ?? file, {
      dir: scope.jobDir,
      ...(protect ? { protect } : {}),
    });
    if (why !== null) throw new Error(why);
    const bytes = new TextEncoder().encode(text);
    fs.ftruncateSync(opened.fd, 0);
    for (let written = 0; written < bytes.length;) {
      written += fs.writeSync(opened.fd, bytes, written, bytes.length - written);
    }
  } finally {
    fs.closeSync(opened.fd);
  }
}

/** Why `file` may not be written (inside .git, or a protected job's own file), or null. */
function refusal(file: string, job: { dir: string; protect?: ProtectedPaths }): string | null {
  const absolute = resolve(job.dir, file);
  if (insideGit(file) || insideGit(absolute)) {
    return "it is inside a .git directory, whose config and hooks run programs";
  }
  if (job.protect && protectsTarget(absolute, job.protect)) {
    return "it is one of the job's protected files (its .git, job files and the files it loads or runs)";
  }
  return null;
}

function openedPath(fd: number): string | null {
  try {
    return Deno.readLinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}
