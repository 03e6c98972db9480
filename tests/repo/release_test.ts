/**
 * `deno task release`: dist/hermes.js with the commit embedded and its sha256 file; the bundle runs with an
 * empty DENO_DIR and prints the version and commit, and the checksum file checks it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ROOT, tempDir } from "../_testing/cli.ts";
import { VERSION } from "../../runtime/core/version.ts";

Deno.test("release: hermes.js and hermes.js.sha256; --version names the commit it was built from", async () => {
  const out = await tempDir("hermes-release-");
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["task", "release", "--out", out],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(built.code, 0, new TextDecoder().decode(built.stderr));
  const bytes = await Deno.readFile(`${out}/hermes.js`);
  const digest = createHash("sha256").update(bytes).digest("hex");
  assert.equal(await Deno.readTextFile(`${out}/hermes.js.sha256`), `${digest}  hermes.js\n`);
  assert.ok(!new TextDecoder().decode(bytes).includes("__HERMES_COMMIT__"), "the marker was replaced");
  const git = await new Deno.Command("git", {
    args: ["rev-parse", "--short=12", "HEAD"],
    cwd: ROOT,
    stderr: "null",
  })
    .output().catch(() => null);
  const head = git?.success ? new TextDecoder().decode(git.stdout).trim() : null;
  const version = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", `${out}/hermes.js`, "--version"],
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
