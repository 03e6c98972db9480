import assert from "node:assert/strict";
import { discoverSkills, parseSkillMd, skillTool } from "./skill.ts";
import { NO_SCOPE } from "./tool.ts";

Deno.test("parseSkillMd: name and description from the front matter, the body after it", async () => {
  assert.deepEqual(await parseSkillMd("---\nname: a\ndescription: does A\n---\nBody\n"), {
    name: "a",
    description: "does A",
    body: "Body\n",
  });
  assert.equal(await parseSkillMd("---\nname: a\n---\nBody"), null);
  assert.equal(await parseSkillMd("no front matter"), null);
  assert.equal(await parseSkillMd("---\n: [\n---\n"), null);
});

Deno.test("discoverSkills: the first skill of a name wins; the tool gives body and files, and names the others", async () => {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "hermes-skills-" }));
  try {
    for (const [root, body] of [["one", "FIRST"], ["two", "SECOND"]]) {
      await Deno.mkdir(`${dir}/${root}/deploy/scripts`, { recursive: true });
      await Deno.writeTextFile(
        `${dir}/${root}/deploy/SKILL.md`,
        `---\nname: deploy\ndescription: d\n---\n${body}`,
      );
      await Deno.writeTextFile(`${dir}/${root}/deploy/scripts/run.sh`, "true\n");
    }
    const skills = await discoverSkills([`${dir}/one`, `${dir}/two`, `${dir}/missing`]);
    assert.deepEqual(skills.map((s) => s.dir), [`${dir}/one/deploy`]);
    const tool = skillTool(skills);
    const context = {
      session_id: "s",
      job_dir: dir,
      env: {},
      host_env: {},
      signal: new AbortController().signal,
    };
    const found = await tool.run({ name: "deploy" }, context, NO_SCOPE);
    assert.equal(found.status, "ok");
    assert.match(found.content, /FIRST/);
    assert.doesNotMatch(found.content, /SECOND/);
    assert.match(found.content, /- scripts\/run\.sh/);
    const missing = await tool.run({ name: "nope" }, context, NO_SCOPE);
    assert.deepEqual([missing.status, missing.content], [
      "error",
      'No skill named "nope"; the skills are: deploy',
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
