/**
 * The file tools against the path attacks, with a real racing process: a path component or the
 * file itself swapped for a symlink out of the root (renameat2 EXCHANGE in a loop) while the tool reads or
 * writes many times, FIFOs, sockets and devices, and hard links; each next to the case that must work.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { listDirTool, readFileTool, writeFileTool } from "./files.ts";
import { pathScope } from "./paths.ts";
import type { Tool, ToolContext } from "./tool.ts";
import { callTool } from "./_testing.ts";

const SWAP_LOOP = fileURLToPath(new URL("./testdata/swap_loop.ts", import.meta.url));
const CALLS = 300;
const linux = Deno.build.os === "linux";

async function fixture() {
  const base = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-race-" }));
  const root = `${base}/root`;
  const outside = `${base}/outside`;
  await Deno.mkdir(`${root}/d`, { recursive: true });
  await Deno.mkdir(outside);
  await Deno.writeTextFile(`${root}/d/f.txt`, "inside");
  await Deno.writeTextFile(`${root}/f.txt`, "inside");
  await Deno.writeTextFile(`${outside}/f.txt`, "SECRET");
  await Deno.writeTextFile(`${outside}/only-outside.txt`, "SECRET");
  const context: ToolContext = {
    session_id: "s",
    job_dir: root,
    env: {},
    host_env: {},
    signal: new AbortController().signal,
  };
  const run = (tool: Tool, args: Record<string, unknown>) => callTool(tool, args, context);
  return { base, root, outside, context, run, cleanup: () => Deno.remove(base, { recursive: true }) };
}

/** Runs the swapping process on `a` and `b` until the returned function stops it. */
async function swapping(a: string, b: string): Promise<() => Promise<void>> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-ffi", SWAP_LOOP, a, b],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.match(new TextDecoder().decode(first.value), /swapping/);
  return async () => {
    child.kill("SIGKILL");
    await child.status;
    await reader.cancel();
  };
}

/** Proves the race is real: a plain check-then-open of the same path escapes (bounded, stops at the first). */
async function naiveEscapes(path: string, root: string): Promise<boolean> {
  for (let i = 0; i < 200_000; i++) {
    try {
      if (!Deno.realPathSync(path).startsWith(`${root}/`)) continue;
      if (Deno.readTextFileSync(path) === "SECRET") return true;
    } catch {
      // mid-swap
    }
    if (i % 1000 === 0) await Promise.resolve();
  }
  return false;
}

Deno.test({
  name: "read_file: a path component swapped for a symlink in a loop never leads out of the root",
  ignore: !linux,
  async fn() {
    const { root, outside, run, cleanup } = await fixture();
    await Deno.symlink(outside, `${root}/x`);
    const read = readFileTool(pathScope("read_file", root, undefined), { maxBytes: 1024 });
    const stop = await swapping(`${root}/d`, `${root}/x`);
    let escapes = 0;
    const statuses = new Set<string>();
    try {
      assert.ok(await naiveEscapes(`${root}/d/f.txt`, root), "the racer should beat a check-then-open");
      for (let i = 0; i < CALLS; i++) {
        const outcome = await run(read, { path: "d/f.txt" });
        if (outcome.content.includes("SECRET")) escapes++;
        statuses.add(outcome.status);
      }
    } finally {
      await stop();
    }
    assert.equal(escapes, 0);
    const settled = (await Deno.lstat(`${root}/d`)).isDirectory ? "d/f.txt" : "x/f.txt";
    assert.deepEqual(await run(read, { path: settled }), { status: "ok", content: "inside" });
    await cleanup();
  },
});

Deno.test({
  name: "read_file and write_file: the file itself swapped for a symlink in a loop is never followed",
  ignore: !linux,
  async fn() {
    const { root, outside, run, cleanup } = await fixture();
    await Deno.symlink(`${outside}/f.txt`, `${root}/link.txt`);
    const read = readFileTool(pathScope("read_file", root, undefined), { maxBytes: 1024 });
    const write = writeFileTool(pathScope("write_file", root, undefined), { maxBytes: 1024 });
    const stop = await swapping(`${root}/f.txt`, `${root}/link.txt`);
    let escapes = 0;
    try {
      for (let i = 0; i < CALLS; i++) {
        if ((await run(read, { path: "f.txt" })).content.includes("SECRET")) escapes++;
        await run(write, { path: "f.txt", content: "inside" });
        if (Deno.readTextFileSync(`${outside}/f.txt`) !== "SECRET") escapes++;
      }
    } finally {
      await stop();
    }
    assert.equal(escapes, 0);
    assert.equal(await Deno.readTextFile(`${outside}/f.txt`), "SECRET");
    await cleanup();
  },
});

Deno.test({
  name: "write_file: a parent swapped for a symlink in a loop never creates a file outside the root",
  ignore: !linux,
  async fn() {
    const { root, outside, run, cleanup } = await fixture();
    await Deno.symlink(outside, `${root}/x`);
    const write = writeFileTool(pathScope("write_file", root, undefined), { maxBytes: 1024 });
    const list = listDirTool(pathScope("list_dir", root, undefined), { maxEntries: 100 });
    const stop = await swapping(`${root}/d`, `${root}/x`);
    let escapes = 0;
    try {
      for (let i = 0; i < CALLS; i++) {
        await run(write, { path: `d/new-${i}.txt`, content: "x" });
        await run(write, { path: `d/deeper-${i}/n.txt`, content: "x" });
        if ((await run(list, { path: "d" })).content.includes("only-outside.txt")) escapes++;
      }
    } finally {
      await stop();
    }
    for (const entry of Deno.readDirSync(outside)) {
      if (!entry.name.startsWith("only-") && entry.name !== "f.txt") escapes++;
    }
    assert.equal(escapes, 0, [...Deno.readDirSync(outside)].map((e) => e.name).join(" "));
    const settled = (await Deno.lstat(`${root}/d`)).isDirectory ? "d" : "x";
    assert.deepEqual(await run(write, { path: `${settled}/after.txt`, content: "ok" }), {
      status: "ok",
      content: `wrote 2 bytes to ${settled}/after.txt`,
    });
    assert.equal(await Deno.readTextFile(`${root}/${settled}/after.txt`), "ok");
    await cleanup();
  },
});

/** Fails the test instead of hanging it when the tool blocks. */
async function promptly<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} blocked`)), 20_000);
  });
  try {
    return await Promise.race([promise, stuck]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test({
  name: "read_file and write_file: a FIFO, a socket and a device are refused without being opened",
  ignore: !linux,
  async fn() {
    const { root, run, cleanup } = await fixture();
    const made = await new Deno.Command("mkfifo", { args: [`${root}/pipe`] }).output();
    assert.equal(made.code, 0);
    const listener = Deno.listen({ transport: "unix", path: `${root}/sock` });
    const read = readFileTool(pathScope("read_file", root, undefined), { maxBytes: 1024 });
    const write = writeFileTool(pathScope("write_file", root, undefined), { maxBytes: 1024 });
    try {
      assert.deepEqual(await promptly(run(read, { path: "pipe" }), "reading a FIFO"), {
        status: "error",
        content: `error: Cannot read "pipe": it is a FIFO (named pipe), and only regular files are read`,
      });
      assert.deepEqual(await promptly(run(write, { path: "pipe", content: "x" }), "writing a FIFO"), {
        status: "error",
        content: `error: Cannot write "pipe": it is a FIFO (named pipe), and only regular files are written`,
      });
      assert.match((await run(read, { path: "sock" })).content, /it is a socket, and only regular files/);
      const devices = readFileTool(pathScope("read_file", root, ["/dev"]), { maxBytes: 1024 });
      assert.match(
        (await promptly(run(devices, { path: "/dev/zero" }), "reading /dev/zero")).content,
        /^error: Cannot read "\/dev\/zero": it is a character device/,
      );
      assert.deepEqual(await run(read, { path: "f.txt" }), { status: "ok", content: "inside" });
    } finally {
      listener.close();
      await cleanup();
    }
  },
});

Deno.test({
  name: "write_file: a file with another hard link is refused; reading it and writing a single link work",
  ignore: !linux,
  async fn() {
    const { root, outside, run, cleanup } = await fixture();
    await Deno.link(`${outside}/f.txt`, `${root}/linked.txt`);
    const write = writeFileTool(pathScope("write_file", root, undefined), { maxBytes: 1024 });
    const read = readFileTool(pathScope("read_file", root, undefined), { maxBytes: 1024 });
    assert.deepEqual(await run(write, { path: "linked.txt", content: "evil" }), {
      status: "error",
      content: `error: Cannot write "linked.txt": it has 2 hard links, and another name of it may lie ` +
        "outside every root (remove the other links, or write a new file)",
    });
    assert.equal(await Deno.readTextFile(`${outside}/f.txt`), "SECRET");
    // Reading a hard link reads what it holds (documented): the sandbox keeps commands from making one.
    assert.deepEqual(await run(read, { path: "linked.txt" }), { status: "ok", content: "SECRET" });
    assert.deepEqual(await run(write, { path: "f.txt", content: "replaced" }), {
      status: "ok",
      content: "wrote 8 bytes to f.txt",
    });
    assert.equal(await Deno.readTextFile(`${root}/f.txt`), "replaced");
    await cleanup();
  },
});

Deno.test("file tools: a cancelled call does nothing; a root replaced by a symlink is refused", async () => {
  const { root, outside, context, cleanup } = await fixture();
  const controller = new AbortController();
  controller.abort();
  const write = writeFileTool(pathScope("write_file", root, ["./out"]), { maxBytes: 1024 });
  const cancelled = await callTool(write, { path: "out/a.txt", content: "x" }, {
    ...context,
    signal: controller.signal,
  });
  assert.deepEqual(cancelled, { status: "error", content: "error: cancelled" });
  assert.equal((await callTool(write, { path: "out/a.txt", content: "x" }, context)).status, "ok");
  // The scope fixed ./out's real path at start; a symlink put in its place later does not move the root.
  await Deno.remove(`${root}/out`, { recursive: true });
  await Deno.symlink(outside, `${root}/out`);
  const moved = await callTool(write, { path: "out/b.txt", content: "x" }, context);
  assert.notEqual(moved.status, "ok");
  assert.deepEqual([...Deno.readDirSync(outside)].map((e) => e.name).sort(), ["f.txt", "only-outside.txt"]);
  await cleanup();
});
