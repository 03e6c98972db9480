import assert from "node:assert/strict";
import { jobSetEnvNames, steersPrograms } from "./steering_env.ts";

Deno.test("steersPrograms: loaders, shells, interpreters, git config and Hermes's own, in any case", () => {
  for (
    const name of [
      "PATH",
      "LD_PRELOAD",
      "ld_library_path",
      "BASH_ENV",
      "ENV",
      "BASH_FUNC_ls%%",
      "HERMES_DENO",
      "DENO_DIR",
      "NODE_OPTIONS",
      "npm_config_script_shell",
      "PYTHONPATH",
      "PERL5OPT",
      "GIT_CONFIG_COUNT",
      "GIT_CONFIG_KEY_0",
      "GIT_SSH_COMMAND",
    ]
  ) assert.equal(steersPrograms(name), true, name);
  for (
    const name of [
      "GIT_PAGER",
      "HOME",
      "PYTHONUNBUFFERED",
      "GH_TOKEN",
      "CI",
      "ENVIRONMENT",
      "MY_PATH",
      "LANG",
    ]
  ) {
    assert.equal(steersPrograms(name), false, name);
  }
});

Deno.test("jobSetEnvNames: env: keys and MCP env mappings, not pass-through lists", () => {
  assert.deepEqual(
    jobSetEnvNames({
      env: { A: "1" },
      mcp_servers: { x: { env: { B: "2" } }, y: { env: ["C"] }, z: {} },
    }),
    [{ path: ["env", "A"], name: "A" }, { path: ["mcp_servers", "x", "env", "B"], name: "B" }],
  );
});
