/** The CLI edge: --version, --help, unknown commands and flags. */
import assert from "node:assert/strict";
import { VERSION } from "../runtime/core/version.ts";
import { hermes } from "./_cli.ts";

Deno.test("--version prints the version and exits 0", async () => {
  const { code, stdout } = await hermes(["--version"]);
  assert.equal(code, 0);
  assert.equal(stdout, `hermes ${VERSION}\n`);
});

Deno.test("--help lists every command on stdout; no command at all is exit 2 on stderr", async () => {
  const help = await hermes(["--help"]);
  assert.equal(help.code, 0);
  for (const command of ["run", "validate", "schema", "sessions", "daemon", "plugins", "rpc", "acp"]) {
    assert.match(help.stdout, new RegExp(`hermes ${command}`));
  }
  const none = await hermes([]);
  assert.equal(none.code, 2);
  assert.equal(none.stdout, "");
  assert.match(none.stderr, /Usage:/);
});

Deno.test("COMMAND --help prints that command's usage and exits 0", async () => {
  const { code, stdout } = await hermes(["run", "--help"]);
  assert.equal(code, 0);
  assert.match(stdout, /hermes run JOB\.yaml/);
  assert.doesNotMatch(stdout, /hermes daemon/);
});

Deno.test("an unknown command or --log-level is exit 2 with one line", async () => {
  const unknown = await hermes(["frobnicate"]);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /^hermes: Unknown command "frobnicate": expected one of run, /);
  assert.equal(unknown.stderr.trim().split("\n").length, 1);
  const level = await hermes(["--log-level", "loud", "schema"]);
  assert.equal(level.code, 2);
  assert.match(level.stderr, /Invalid --log-level "loud"/);
});
