import assert from "node:assert/strict";
import { expandAll, sandboxPolicy, serverEnv } from "./launch.ts";

const HOST = { PATH: "/usr/bin:/bin", HOME: "/home/u", USER: "u", SECRET_TOKEN: "s", LISTED: "yes" };

Deno.test("mcp launch: the server's env is the base plus what the entry lists, nothing else", () => {
  assert.deepEqual(serverEnv({ command: "x", env: ["LISTED", "MISSING"] }, HOST), {
    PATH: "/usr/bin:/bin",
    HOME: "/home/u",
    USER: "u",
    TERM: "dumb",
    LOGNAME: "",
    SHELL: "",
    LISTED: "yes",
  });
  const valued = serverEnv({ command: "x", env: { API: "k-{{ env.LISTED }}" } }, HOST);
  assert.equal(valued.API, "k-yes");
  assert.equal(valued.SECRET_TOKEN, undefined);
});

Deno.test("mcp launch: {{ env.X }} is substituted at start; an unset one is an error naming it", () => {
  assert.deepEqual(expandAll({ Authorization: "Bearer {{ env.LISTED }}" }, HOST), {
    Authorization: "Bearer yes",
  });
  assert.throws(
    () => expandAll({ Authorization: "{{ env.NOPE }}" }, HOST),
    /\{\{ env\.NOPE \}\} in Authorization/,
  );
});

Deno.test("mcp launch: the sandbox shows the command's install prefix, cwd and named paths; npx may write ~/.npm", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/pkg/node_modules/.bin`, { recursive: true });
  await Deno.writeTextFile(`${dir}/pkg/node_modules/.bin/server`, "");
  await Deno.mkdir(`${dir}/docs`);
  await Deno.mkdir(`${dir}/home`);
  const at = { cwd: dir, env: { PATH: "/usr/bin", HOME: `${dir}/home` }, job_dir: dir };
  const local = sandboxPolicy({
    command: `${dir}/pkg/node_modules/.bin/server`,
    args: ["./docs", "--flag", "absent"],
  }, at);
  assert.deepEqual(local.read.sort(), [`${dir}`, `${dir}/docs`, `${dir}/pkg/node_modules`].sort());
  assert.deepEqual([local.write, local.net, local.visible], [[], false, "only_granted"]);
  const npx = sandboxPolicy({
    command: "npx",
    args: ["-y", "pkg@1"],
    sandbox: { net: true, write: ["./docs"] },
  }, at);
  assert.deepEqual(npx.write, [`${dir}/docs`, `${dir}/home/.npm`]);
  assert.equal(npx.net, true);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("mcp launch: a script command's interpreter outside the system directories is shown too", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/node/bin`, { recursive: true });
  await Deno.writeTextFile(`${dir}/node/bin/node`, "");
  await Deno.mkdir(`${dir}/srv/.bin`, { recursive: true });
  await Deno.writeTextFile(`${dir}/srv/.bin/by-env`, "#!/usr/bin/env node\nconsole.log(1)\n");
  await Deno.writeTextFile(`${dir}/srv/.bin/by-path`, `#!${dir}/node/bin/node --flag\n`);
  await Deno.writeTextFile(`${dir}/srv/.bin/plain`, "\x7fELF binary\n");
  const at = { cwd: dir, env: { PATH: `${dir}/node/bin:/usr/bin` }, job_dir: dir };
  const read = (command: string) => sandboxPolicy({ command }, at).read;
  assert.ok(read(`${dir}/srv/.bin/by-env`).includes(`${dir}/node`), "env NAME is looked up on PATH");
  assert.ok(read(`${dir}/srv/.bin/by-path`).includes(`${dir}/node`), "an absolute interpreter");
  assert.ok(!read(`${dir}/srv/.bin/plain`).includes(`${dir}/node`), "no shebang, nothing more");
  // A system interpreter adds nothing (the system directories are always shown).
  await Deno.writeTextFile(`${dir}/srv/.bin/sh`, "#!/bin/sh\n");
  assert.deepEqual(read(`${dir}/srv/.bin/sh`).sort(), [dir, `${dir}/srv`].sort());
  await Deno.remove(dir, { recursive: true });
});
