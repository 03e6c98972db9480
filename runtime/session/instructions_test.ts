import assert from "node:assert/strict";
import { agentsMdSection, readAgentsMd, skillDirs } from "./instructions.ts";

async function repo(): Promise<string> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-instructions-" }));
  await Deno.mkdir(`${dir}/.git`);
  await Deno.mkdir(`${dir}/a/b`, { recursive: true });
  return dir;
}

Deno.test("readAgentsMd: root first, then each folder down to the directory; folders beside it are not read", async () => {
  const dir = await repo();
  try {
    await Deno.writeTextFile(`${dir}/AGENTS.md`, "root");
    await Deno.writeTextFile(`${dir}/a/b/AGENTS.md`, "deep");
    await Deno.mkdir(`${dir}/other`);
    await Deno.writeTextFile(`${dir}/other/AGENTS.md`, "beside");
    const files = await readAgentsMd(`${dir}/a/b`, { maxBytes: 1000 });
    assert.deepEqual(files.map((f) => [f.name, f.text]), [["AGENTS.md", "root"], ["a/b/AGENTS.md", "deep"]]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readAgentsMd: a link leading out of the repository is skipped, one inside it is read", async () => {
  const dir = await repo();
  const outside = await Deno.makeTempDir({ prefix: "hermes-outside-" });
  try {
    await Deno.writeTextFile(`${outside}/secret.txt`, "SECRET");
    await Deno.symlink(`${outside}/secret.txt`, `${dir}/AGENTS.md`);
    await Deno.writeTextFile(`${dir}/a/rules.md`, "inside");
    await Deno.symlink(`${dir}/a/rules.md`, `${dir}/a/AGENTS.md`);
    const files = await readAgentsMd(`${dir}/a`, { maxBytes: 1000 });
    assert.deepEqual(files.map((f) => f.text), ["inside"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("readAgentsMd: outside a repository only the directory's own file; the cap cuts across files", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-instructions-" }));
  try {
    await Deno.writeTextFile(`${dir}/AGENTS.md`, "0123456789");
    const [file] = await readAgentsMd(dir, { maxBytes: 4 });
    assert.deepEqual([file!.text, file!.truncated], ["0123", true]);
    assert.match(agentsMdSection([file!], { untrusted: false })!, /size cap/);
    assert.equal(agentsMdSection([], { untrusted: false }), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("skillDirs: the job's own first, then the repository's and the user's unless conventions are off", async () => {
  const dir = await repo();
  try {
    assert.deepEqual(skillDirs({ jobDir: `${dir}/a`, skills: ["s"], conventions: true, home: "/home/u" }), [
      `${dir}/a/s`,
      `${dir}/.agents/skills`,
      "/home/u/.config/hermes/skills",
    ]);
    assert.deepEqual(skillDirs({ jobDir: `${dir}/a`, skills: ["s"], conventions: false, home: "/home/u" }), [
      `${dir}/a/s`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
