import assert from "node:assert/strict";
import { type HostFacts, readHostFacts, sandboxBlocker } from "./blockers.ts";

const OPEN: HostFacts & { bwrap: string } = {
  uid: 1000,
  max_user_namespaces: 15000,
  unprivileged_userns_clone: null,
  apparmor_restrict_unprivileged_userns: null,
  seccomp_mode: 0,
  container: null,
  cap_sys_admin: false,
  bwrap: "/nonexistent/bwrap",
};
// bwrap 0.8's own words for each case.
const NO_USERNS =
  "bwrap: No permissions to creating new namespace, likely because the kernel does not allow " +
  "non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.";
const UID_MAP = "bwrap: setting up uid map: Permission denied";

Deno.test("sandboxBlocker: each known blocker is named with its fix", () => {
  const cases: [Partial<HostFacts>, string, RegExp, RegExp][] = [
    [
      { max_user_namespaces: 0 },
      NO_USERNS,
      /user\.max_user_namespaces = 0/,
      /sysctl -w user\.max_user_namespaces=/,
    ],
    [
      { unprivileged_userns_clone: 0 },
      NO_USERNS,
      /unprivileged_userns_clone = 0/,
      /unprivileged_userns_clone=1/,
    ],
    [
      { apparmor_restrict_unprivileged_userns: 1 },
      UID_MAP,
      /AppArmor restricts unprivileged user namespaces/,
      /AppArmor profile with `userns,`.*apparmor_restrict_unprivileged_userns=0/,
    ],
    [
      { container: "Docker", seccomp_mode: 2, uid: 0 },
      NO_USERNS,
      /Docker container runs under a seccomp profile/,
      /--security-opt seccomp=unconfined/,
    ],
    [
      { container: "Docker", seccomp_mode: 0, uid: 0 },
      "bwrap: Creating new namespace failed: Operation not permitted",
      /dropped the capabilities/,
      /--cap-add SYS_ADMIN/,
    ],
    [{}, UID_MAP, /does not let bwrap create user namespaces/, /chmod u\+s \/nonexistent\/bwrap/],
  ];
  for (const [facts, error, cause, fix] of cases) {
    const blocker = sandboxBlocker(error, { ...OPEN, ...facts });
    assert.ok(blocker, `${JSON.stringify(facts)}: a blocker`);
    assert.match(blocker.cause, cause);
    assert.match(blocker.fix, fix);
  }
  // Root is not bound by the unprivileged knobs: they are not blamed for it.
  assert.doesNotMatch(
    sandboxBlocker(UID_MAP, { ...OPEN, uid: 0, apparmor_restrict_unprivileged_userns: 1 })?.cause ?? "",
    /AppArmor/,
  );
  assert.equal(sandboxBlocker("bwrap: something else", OPEN), null);
});

Deno.test("readHostFacts: this host's knobs, read from /proc", () => {
  const facts = readHostFacts();
  assert.equal(facts.uid, Deno.uid());
  const text = Deno.readTextFileSync("/proc/sys/user/max_user_namespaces").trim();
  assert.equal(facts.max_user_namespaces, Number(text));
  assert.equal(typeof facts.cap_sys_admin, "boolean");
});
