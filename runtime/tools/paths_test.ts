import assert from "node:assert/strict";
import { isInside, pathScope, resolveInScope } from "./paths.ts";

async function fixture() {
  const jobDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-paths-job-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-paths-outside-" }));
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret");
  await Deno.mkdir(`${jobDir}/sub`);
  await Deno.writeTextFile(`${jobDir}/sub/b.txt`, "b");
  await Deno.symlink(outside, `${jobDir}/escape`);
  await Deno.symlink(`${jobDir}/sub`, `${jobDir}/inside`);
  await Deno.symlink(`${outside}/missing.txt`, `${jobDir}/dangling`);
  return { jobDir, outside };
}

Deno.test("paths: relative and absolute paths inside the root resolve to real paths", async () => {
  const { jobDir } = await fixture();
  const scope = pathScope("read_file", jobDir, undefined);
  assert.deepEqual(await resolveInScope(scope, "sub/b.txt"), { ok: true, path: `${jobDir}/sub/b.txt` });
  assert.deepEqual(await resolveInScope(scope, `${jobDir}/sub/b.txt`), {
    ok: true,
    path: `${jobDir}/sub/b.txt`,
  });
  assert.deepEqual(await resolveInScope(scope, "sub/../sub/b.txt"), {
    ok: true,
    path: `${jobDir}/sub/b.txt`,
  });
  assert.deepEqual(await resolveInScope(scope, "."), { ok: true, path: jobDir });
  assert.deepEqual(await resolveInScope(scope, "new/dir/file.txt"), {
    ok: true,
    path: `${jobDir}/new/dir/file.txt`,
  });
});

Deno.test("paths: `..` and absolute escapes are refused", async () => {
  const { jobDir, outside } = await fixture();
  const scope = pathScope("read_file", jobDir, ["./sub"]);
  const refusal = (p: string) => ({ ok: false, reason: `"${p}" is outside tools.read_file.paths` });
  assert.deepEqual(await resolveInScope(scope, "../secret"), refusal("../secret"));
  assert.deepEqual(await resolveInScope(scope, `${outside}/secret.txt`), refusal(`${outside}/secret.txt`));
  assert.deepEqual(
    await resolveInScope(scope, "sub/../escape/secret.txt"),
    refusal("sub/../escape/secret.txt"),
  );
  assert.deepEqual(await resolveInScope(scope, "/etc/passwd"), refusal("/etc/passwd"));
  assert.deepEqual(await resolveInScope(scope, "sub/b.txt"), { ok: true, path: `${jobDir}/sub/b.txt` });
});

Deno.test("paths: symlinks leading out of the root are refused; symlinks within it are followed", async () => {
  const { jobDir } = await fixture();
  const scope = pathScope("write_file", jobDir, undefined);
  assert.deepEqual(await resolveInScope(scope, "escape/secret.txt"), {
    ok: false,
    reason: `"escape/secret.txt" is outside tools.write_file.paths`,
  });
  assert.equal((await resolveInScope(scope, "escape/new/file.txt")).ok, false);
  assert.equal((await resolveInScope(scope, "escape")).ok, false);
  assert.deepEqual(await resolveInScope(scope, "inside/b.txt"), { ok: true, path: `${jobDir}/sub/b.txt` });
  assert.deepEqual(await resolveInScope(scope, "dangling"), {
    ok: false,
    reason: `"dangling" is a symlink to a missing target`,
  });
});

Deno.test("paths: a root that does not exist yet still confines paths", async () => {
  const { jobDir } = await fixture();
  const scope = pathScope("write_file", jobDir, ["./out"]);
  assert.deepEqual(await resolveInScope(scope, "out/report.md"), {
    ok: true,
    path: `${jobDir}/out/report.md`,
  });
  assert.equal((await resolveInScope(scope, "report.md")).ok, false);
  assert.equal((await resolveInScope(scope, "outside.md")).ok, false);
});

Deno.test("paths: isInside compares whole path segments", () => {
  assert.ok(isInside("/a/b", "/a"));
  assert.ok(isInside("/a", "/a"));
  assert.ok(isInside("/a/..b", "/a"));
  assert.ok(!isInside("/ab", "/a"));
  assert.ok(!isInside("/", "/a"));
});
