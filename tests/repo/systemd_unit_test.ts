/**
 * examples/systemd/hermes-daemon.service: `systemd-analyze verify` where it is installed (any warning, such
 * as an unknown key, fails the test), and everywhere a structural check of the keys the README relies on.
 */
import assert from "node:assert/strict";
import { ROOT } from "../_testing/cli.ts";

const UNIT = `${ROOT}/examples/systemd/hermes-daemon.service`;

/** `[Section]` → key → values (a key may repeat); comments and blank lines dropped. */
function parseUnit(text: string): Record<string, Record<string, string[]>> {
  const sections: Record<string, Record<string, string[]>> = {};
  let current: Record<string, string[]> | undefined;
  for (const [i, raw] of text.split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[(\w+)\]$/.exec(line);
    if (section) {
      current = sections[section[1]!] = {};
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    assert.ok(pair && current, `line ${i + 1} is neither a section nor Key=value: ${raw}`);
    (current[pair[1]!] ??= []).push(pair[2]!);
  }
  return sections;
}

Deno.test("systemd unit: the daemon runs the release bundle, restarts on failure, stops on SIGTERM", async () => {
  const unit = parseUnit(await Deno.readTextFile(UNIT));
  assert.deepEqual(Object.keys(unit), ["Unit", "Service", "Install"]);
  assert.match(unit.Unit!.After![0]!, /network-online\.target/);
  const service = unit.Service!;
  assert.match(service.ExecStart![0]!, /^\/usr\/bin\/env deno run -A \/opt\/hermes\/hermes\.js daemon \S+$/);
  assert.deepEqual(service.Restart, ["on-failure"]);
  assert.deepEqual(service.KillSignal, ["SIGTERM"]);
  assert.ok(service.Environment!.some((value) => value.startsWith("HERMES_HOME=")));
  assert.equal(service.User?.[0], "hermes", "not root");
  // bubblewrap needs user namespaces: these would break the sandbox of every tool, plugin and MCP server.
  for (const key of ["RestrictNamespaces", "PrivateUsers"]) assert.equal(service[key], undefined, key);
  assert.deepEqual(unit.Install!.WantedBy, ["multi-user.target"]);
});

const analyze = await Deno.stat("/usr/bin/systemd-analyze").then(() => true, () => false);
if (!analyze) {
  console.warn("systemd unit lint skipped: systemd-analyze is not installed (apt-get install systemd)");
}

Deno.test({
  name: "systemd unit: systemd-analyze verify accepts it without a warning",
  ignore: !analyze,
  fn: async () => {
    const out = await new Deno.Command("/usr/bin/systemd-analyze", {
      args: ["verify", UNIT],
      env: { SYSTEMD_LOG_LEVEL: "warning" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.equal(stderr.trim(), "", "any warning (an unknown key, a missing binary) is a defect");
  },
});
