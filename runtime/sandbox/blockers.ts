/**
 * Why bubblewrap cannot start here, and the fix: read from the kernel's knobs (/proc/sys), this process's
 * seccomp mode and capabilities (/proc/self/status), container markers, and bwrap's own error line.
 * The probe and `hermes doctor` print the result, so the operator sees the blocker, not only "failed".
 */

import { readTextOrNull } from "../core/fs.ts";

/** What the host allows, as far as user namespaces and bwrap go. Null: the knob does not exist here. */
export interface HostFacts {
  uid: number;
  /** user.max_user_namespaces: 0 disables user namespaces for everyone. */
  max_user_namespaces: number | null;
  /** kernel.unprivileged_userns_clone (Debian, older Ubuntu): 0 disables them for non-root users. */
  unprivileged_userns_clone: number | null;
  /** kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+): 1 = no capabilities inside them. */
  apparmor_restrict_unprivileged_userns: number | null;
  /** 2 when this process already runs under a seccomp filter (Docker's default profile, systemd, …). */
  seccomp_mode: number | null;
  /** Inside a container (Docker's /.dockerenv, podman's /run/.containerenv, `container=` of PID 1). */
  container: string | null;
  /** CAP_SYS_ADMIN in the effective set (what setuid-less bwrap in a container without userns lacks). */
  cap_sys_admin: boolean;
}

export interface Blocker {
  cause: string;
  fix: string;
}

export function readHostFacts(): HostFacts {
  const number = (path: string) => {
    const text = readTextOrNull(path);
    const value = text === null ? NaN : Number(text.trim());
    return Number.isFinite(value) ? value : null;
  };
  const status = readTextOrNull("/proc/self/status") ?? "";
  const field = (name: string) => new RegExp(`^${name}:\\s*(\\S+)`, "m").exec(status)?.[1];
  const capEff = BigInt(`0x${field("CapEff") ?? "0"}`);
  const seccomp = field("Seccomp");
  return {
    uid: Deno.uid() ?? -1,
    max_user_namespaces: number("/proc/sys/user/max_user_namespaces"),
    unprivileged_userns_clone: number("/proc/sys/kernel/unprivileged_userns_clone"),
    apparmor_restrict_unprivileged_userns: number("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"),
    seccomp_mode: seccomp === undefined ? null : Number(seccomp),
    container: containerKind(),
    cap_sys_admin: (capEff & (1n << 21n)) !== 0n,
  };
}

/** The most likely blocker for bwrap's `error` on a host with `facts`; null when nothing explains it. */
export function sandboxBlocker(error: string, facts: HostFacts & { bwrap: string }): Blocker | null {
  const setuid = isSetuid(facts.bwrap);
  const orSetuid = setuid ? "" : `, or make bwrap setuid root (\`chmod u+s ${facts.bwrap}\`)`;
  if (facts.max_user_namespaces === 0) {
    return {
      cause: "user namespaces are disabled (user.max_user_namespaces = 0)",
      fix: "allow them: `sysctl -w user.max_user_namespaces=15000` (persist it in /etc/sysctl.d/)",
    };
  }
  if (facts.uid !== 0 && facts.unprivileged_userns_clone === 0) {
    return {
      cause: "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)",
      fix: `allow them: \`sysctl -w kernel.unprivileged_userns_clone=1\`${orSetuid}`,
    };
  }
  if (facts.uid !== 0 && facts.apparmor_restrict_unprivileged_userns === 1) {
    return {
      cause:
        "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1, " +
        "Ubuntu 23.10+)",
      fix: `give ${facts.bwrap} an AppArmor profile with \`userns,\` (/etc/apparmor.d/bwrap, see README ` +
        '"Sandbox"), or `sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`',
    };
  }
  if (facts.container !== null && facts.seccomp_mode === 2) {
    return {
      cause: `this ${facts.container} container runs under a seccomp profile (Docker's default refuses the ` +
        "namespace and mount calls bwrap makes)",
      fix:
        "start the container with `--security-opt seccomp=unconfined --security-opt apparmor=unconfined` " +
        "(or a profile that allows unshare, clone with namespace flags, mount and pivot_root)",
    };
  }
  if (facts.container !== null && !facts.cap_sys_admin && /Operation not permitted/i.test(error)) {
    return {
      cause: `this ${facts.container} container dropped the capabilities bwrap needs without user namespaces`,
      fix: "allow user namespaces in the container (`--security-opt seccomp=unconfined`), or add " +
        "`--cap-add SYS_ADMIN`",
    };
  }
  if (/namespace|uid map|setgroups/i.test(error)) {
    return {
      cause: "this host does not let bwrap create user namespaces",
      fix: "allow unprivileged user namespaces (`sysctl -w kernel.unprivileged_userns_clone=1`; Ubuntu: " +
        "`sysctl -w kernel.apparmor_restrict_unprivileged_userns=0`; in a container: " +
        `\`--security-opt seccomp=unconfined --security-opt apparmor=unconfined\`)${orSetuid}`,
    };
  }
  if (/seccomp/i.test(error)) {
    return {
      cause: "the kernel refused the sandbox's seccomp filter",
      fix: "use a kernel with CONFIG_SECCOMP_FILTER (every mainstream distribution kernel has it)",
    };
  }
  return null;
}

function containerKind(): string | null {
  if (exists("/.dockerenv")) return "Docker";
  if (exists("/run/.containerenv")) return "Podman";
  const environ = readTextOrNull("/proc/1/environ");
  const kind = environ?.split("\0").find((entry) => entry.startsWith("container="))?.slice(10);
  return kind ? kind : null;
}

function isSetuid(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.uid === 0 && ((info.mode ?? 0) & 0o4000) !== 0;
  } catch {
    return false;
  }
}

function exists(path: string): boolean {
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
