import assert from "node:assert/strict";
import { gitEnvironment, SAFE_GIT_SETTINGS } from "./git_env.ts";

const files = new Set(["/home/me/.gitconfig", "/work/out/home/.gitconfig"]);
const realPath = (path: string) => files.has(path) || path.startsWith("/work") ? path : null;

Deno.test("gitEnvironment: the host's global config, no system config, no prompts, safe settings last", () => {
  const env = gitEnvironment({ HOME: "/home/me", PATH: "/bin" }, { writeRoots: ["/work/out"], realPath });
  assert.equal(env.GIT_CONFIG_GLOBAL, "/home/me/.gitconfig");
  assert.equal(env.GIT_CONFIG_NOSYSTEM, "1");
  assert.equal(env.GIT_TERMINAL_PROMPT, "0");
  assert.equal(env.GIT_CONFIG_COUNT, String(SAFE_GIT_SETTINGS.length));
  assert.equal(env.GIT_CONFIG_KEY_0, "core.fsmonitor");
  assert.equal(env.GIT_CONFIG_VALUE_0, "false");
  assert.equal(env.PATH, "/bin");
});

Deno.test("gitEnvironment: a global config inside a write root, or none, is /dev/null; a job's own settings stay first", () => {
  const planted = gitEnvironment({ HOME: "/work/out/home" }, { writeRoots: ["/work/out"], realPath });
  assert.equal(planted.GIT_CONFIG_GLOBAL, "/dev/null");
  assert.equal(
    gitEnvironment({ HOME: "/nowhere" }, { writeRoots: [], realPath }).GIT_CONFIG_GLOBAL,
    "/dev/null",
  );
  const own = gitEnvironment(
    { GIT_CONFIG_COUNT: "1", GIT_CONFIG_KEY_0: "user.name", GIT_CONFIG_VALUE_0: "bot" },
    { writeRoots: [], realPath },
  );
  assert.equal(own.GIT_CONFIG_KEY_0, "user.name");
  assert.equal(own.GIT_CONFIG_KEY_1, "core.fsmonitor");
  assert.equal(own.GIT_CONFIG_COUNT, String(SAFE_GIT_SETTINGS.length + 1));
});
