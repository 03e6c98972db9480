import assert from "node:assert/strict";
import { listDirTool, readFileTool, writeFileTool } from "./files.ts";
import { pathScope } from "./paths.ts";
import type { ToolContext } from "./tool.ts";
import { exists } from "../core/fs.ts";
import { callTool } from "./_testing.ts";

async function fixture() {
  const jobDir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-files-job-" }));
  const outside = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-files-outside-" }));
  await Deno.writeTextFile(`${outside}/secret.txt`, "secret");
  await Deno.writeTextFile(`${jobDir}/a.txt`, "alpha\n");
  await Deno.mkdir(`${jobDir}/sub`);
  await Deno.writeTextFile(`${jobDir}/sub/b.txt`, "beta");
  await Deno.symlink(outside, `${jobDir}/escape`);
  await Deno.symlink(`${jobDir}/sub`, `${jobDir}/inside`);
  const context: ToolContext = {
    session_id: "s",
    job_dir: jobDir,
    env: {},
    host_env: {},
    signal: new AbortController().signal,
  };
  return { jobDir, outside, context };
}

Deno.test("read_file: reads inside the root, refuses escapes, caps size", async () => {
  const { jobDir, outside, context } = await fixture();
  const read = readFileTool(pathScope("read_file", jobDir, undefined), { maxBytes: 1024 });
  assert.equal(read.spec.name, "read_file");
  assert.deepEqual(await callTool(read, { path: "a.txt" }, context), { status: "ok", content: "alpha\n" });
  assert.deepEqual(await callTool(read, { path: `${jobDir}/sub/b.txt` }, context), {
    status: "ok",
    content: "beta",
  });
  assert.deepEqual(await callTool(read, { path: "inside/b.txt" }, context), {
    status: "ok",
    content: "beta",
  });
  assert.deepEqual(await callTool(read, { path: "../secret" }, context), {
    status: "denied",
    content: `denied: "../secret" is outside tools.read_file.paths`,
  });
  assert.equal((await callTool(read, { path: "escape/secret.txt" }, context)).status, "denied");
  assert.equal((await callTool(read, { path: `${outside}/secret.txt` }, context)).status, "denied");

  await Deno.writeTextFile(`${jobDir}/big.txt`, "x".repeat(3000));
  const big = await callTool(read, { path: "big.txt" }, context);
  assert.deepEqual(big, {
    status: "ok",
    content: `${"x".repeat(1024)}\n[file truncated at 1024 bytes of 3000]`,
  });
});

Deno.test("read_file: missing files, directories and binary files get clear results", async () => {
  const { jobDir, context } = await fixture();
  const read = readFileTool(pathScope("read_file", jobDir, undefined), { maxBytes: 1024 });
  assert.deepEqual(await callTool(read, { path: "nope.txt" }, context), {
    status: "error",
    content: `error: "nope.txt" does not exist`,
  });
  const dir = await callTool(read, { path: "sub" }, context);
  assert.equal(dir.status, "error");
  assert.match(dir.content, /is a directory; use list_dir/);
  await Deno.writeFile(`${jobDir}/bin.dat`, new Uint8Array([1, 0, 2, 3]));
  assert.deepEqual(await callTool(read, { path: "bin.dat" }, context), {
    status: "ok",
    content: `"bin.dat" is a binary file (4 bytes); not shown`,
  });
  const invalid = await callTool(read, { path: 7 }, context);
  assert.equal(invalid.status, "error");
  assert.match(invalid.content, /"path" must be a non-empty string/);
});

Deno.test("write_file: writes inside its roots, creating directories", async () => {
  const { jobDir, context } = await fixture();
  const write = writeFileTool(pathScope("write_file", jobDir, ["./out"]), { maxBytes: 100 });
  assert.deepEqual(write.spec.parameters.required, ["path", "content"]);
  assert.deepEqual(await callTool(write, { path: "out/deep/r.md", content: "héllo" }, context), {
    status: "ok",
    content: "wrote 6 bytes to out/deep/r.md",
  });
  assert.equal(await Deno.readTextFile(`${jobDir}/out/deep/r.md`), "héllo");
  assert.deepEqual(await callTool(write, { path: `${jobDir}/out/empty.txt`, content: "" }, context), {
    status: "ok",
    content: `wrote 0 bytes to ${jobDir}/out/empty.txt`,
  });
  const tooBig = await callTool(write, { path: "out/big.txt", content: "x".repeat(101) }, context);
  assert.equal(tooBig.status, "error");
  assert.match(tooBig.content, /tools\.write_file\.max_bytes is 100/);
  assert.equal(await exists(`${jobDir}/out/big.txt`), false);
  const noContent = await callTool(write, { path: "out/x.txt" }, context);
  assert.equal(noContent.status, "error");
});

Deno.test("write_file: escapes through .., absolute paths and symlinks are denied and write nothing", async () => {
  const { jobDir, outside, context } = await fixture();
  const write = writeFileTool(pathScope("write_file", jobDir, undefined), { maxBytes: 1024 });
  for (const path of ["../evil.txt", `${outside}/evil.txt`, "escape/evil.txt", "escape/new/evil.txt"]) {
    const outcome = await callTool(write, { path, content: "evil" }, context);
    assert.deepEqual(outcome, {
      status: "denied",
      content: `denied: "${path}" is outside tools.write_file.paths`,
    });
  }
  await Deno.symlink(`${outside}/planted.txt`, `${jobDir}/dangling`);
  assert.equal((await callTool(write, { path: "dangling", content: "evil" }, context)).status, "denied");
  assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name), ["secret.txt"]);
  assert.equal(await exists(`${jobDir}/../evil.txt`), false);
  assert.deepEqual(await callTool(write, { path: "inside/c.txt", content: "c" }, context), {
    status: "ok",
    content: "wrote 1 bytes to inside/c.txt",
  });
  assert.equal(await Deno.readTextFile(`${jobDir}/sub/c.txt`), "c");
});

Deno.test("list_dir: sorted entries, directories marked, capped, confined", async () => {
  const { jobDir, context } = await fixture();
  const list = listDirTool(pathScope("list_dir", jobDir, undefined), { maxEntries: 3 });
  assert.deepEqual(await callTool(list, { path: "." }, context), {
    status: "ok",
    content: "a.txt\nescape/\ninside/\n[1 more entries not shown]",
  });
  const all = listDirTool(pathScope("list_dir", jobDir, undefined), { maxEntries: 1000 });
  assert.deepEqual(await callTool(all, { path: "." }, context), {
    status: "ok",
    content: "a.txt\nescape/\ninside/\nsub/",
  });
  assert.deepEqual(await callTool(all, { path: "inside" }, context), { status: "ok", content: "b.txt" });
  assert.equal((await callTool(all, { path: "escape" }, context)).status, "denied");
  assert.equal((await callTool(all, { path: ".." }, context)).status, "denied");
  await Deno.mkdir(`${jobDir}/empty`);
  assert.deepEqual(await callTool(all, { path: "empty" }, context), {
    status: "ok",
    content: "(empty is empty)",
  });
});

Deno.test("write_file: nothing is written inside a .git directory, also through a symlink", async () => {
  const { jobDir, context } = await fixture();
  await Deno.mkdir(`${jobDir}/out/repo/.git`, { recursive: true });
  await Deno.writeTextFile(`${jobDir}/out/repo/.git/config`, "[core]\n");
  await Deno.symlink(`${jobDir}/out/repo/.git`, `${jobDir}/out/gitdir`);
  const write = writeFileTool(pathScope("write_file", jobDir, ["./out"]), { maxBytes: 1000 });
  for (const path of ["out/repo/.git/config", "out/repo/.GIT/hooks/pre-commit", "out/gitdir/config"]) {
    const outcome = await callTool(write, { path, content: "[core]\n\tfsmonitor = evil\n" }, context);
    assert.equal(outcome.status, "denied", path);
    assert.match(outcome.content, /does not write inside a \.git directory/);
  }
  assert.equal(
    await Deno.readTextFile(`${jobDir}/out/repo/.git/config`),
    "[core]\n",
    "the config is untouched",
  );
  assert.equal(
    (await callTool(write, { path: "out/repo/.gitignore", content: "x\n" }, context)).status,
    "ok",
  );
  assert.equal(
    (await callTool(write, { path: "out/repo/src/.github/x.yml", content: "x\n" }, context)).status,
    "ok",
  );
});
