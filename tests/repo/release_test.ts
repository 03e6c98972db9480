/**
 * `deno task release`: the folder hermes/ of ES modules with the commit embedded and SHA256SUMS listing each
 * of them; it runs with an empty DENO_DIR and prints the version and commit, and the sums check it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ROOT, tempDir } from "../_testing/cli.ts";
import { VERSION } from "../../runtime/core/version.ts";

Deno.test("release: hermes/ with SHA256SUMS; --version names the commit it was built from", async () => {
  const out = await tempDir("hermes-release-");
  const release = async () => {
    const built = await new Deno.Command(Deno.execPath(), {
      args: ["task", "release", "--out", out],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
  };
  await release();
  const folder = `${out}/hermes`;
  // A file of an earlier build does not survive the next one.
  await Deno.writeTextFile(`${folder}/chunk-STALE.js`, "");
  await release();
  const files = [...Deno.readDirSync(folder)].map((e) => e.name).filter((n) => n !== "SHA256SUMS").sort();
  assert.ok(files.includes("hermes.js") && files.length > 1, files.join(" "));
  assert.ok(!files.includes("chunk-STALE.js"));
  let sums = "";
  for (const name of files) {
    const bytes = await Deno.readFile(`${folder}/${name}`);
    sums += `${createHash("sha256").update(bytes).digest("hex")}  ${name}\n`;
    assert.ok(
      !new TextDecoder().decode(bytes).includes("__HERMES_COMMIT__"),
      `the marker was replaced in ${name}`,
    );
  }
  assert.equal(await Deno.readTextFile(`${folder}/SHA256SUMS`), sums);
  const git = await new Deno.Command("git", {
    args: ["rev-parse", "--short=12", "HEAD"],
    cwd: ROOT,
    stderr: "null",
  })
    .output().catch(() => null);
  const head = git?.success ? new TextDecoder().decode(git.stdout).trim() : null;
  const version = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${folder}/hermes.js`, "--version"],
    cwd: out,
    env: { DENO_DIR: await tempDir("hermes-empty-deno-dir-") },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(version.code, 0, new TextDecoder().decode(version.stderr));
  const line = new TextDecoder().decode(version.stdout);
  if (head) {
    assert.match(line, new RegExp(`^hermes ${VERSION.replaceAll(".", "\\.")} \\(${head}(-dirty)?\\)\\n$`));
  } else assert.equal(line, `hermes ${VERSION}\n`, "outside a git checkout no commit is claimed");
  await Deno.remove(out, { recursive: true });
});
