/**
 * The seccomp filters bubblewrap installs (`--seccomp FD`). In a sandbox without the host's network: no new
 * AF_UNIX socket, so no connection to a host socket file in a visible directory (a database, an agent, a
 * container runtime); `connect()` needs no write access, so a read-only mount does not stop it, and the
 * network namespace only separates abstract sockets. What must keep working keeps working: socketpair
 * (stream and seqpacket: how Deno, Node and shells wire their children), pipes, and every other syscall.
 *
 * Of the other address families, `socket()` creates only those a sandboxed command needs: AF_INET and
 * AF_INET6 (inside the sandbox's own network namespace, or the host's with `net: true`) and AF_NETLINK with
 * NETLINK_ROUTE (how getaddrinfo and getifaddrs list the namespace's interfaces; `ip addr` uses it too).
 * Every other family gets EAFNOSUPPORT, as on a kernel built without it, and other netlink protocols
 * EPROTONOSUPPORT: AF_VSOCK reaches the hypervisor's agents on a cloud VM and AF_PACKET, AF_BLUETOOTH,
 * AF_CAN, AF_XDP, … reach hardware or kernel code no network namespace separates (vsock is not per
 * namespace at all).
 *
 * Also refused, because each is another way to the same socket:
 * - socketpair(…, SOCK_DGRAM): a datagram socket may be re-`connect()`ed or `sendto()` any path;
 * - io_uring (IORING_OP_SOCKET creates sockets past the filter): ENOSYS, as on kernels without it, so
 *   libraries fall back to plain syscalls;
 * - a new user namespace (`unshare` or `clone` with CLONE_NEWUSER: EPERM; `clone3`, whose flags sit in memory
 *   a filter cannot read: ENOSYS, so libc falls back to `clone`). Its owner holds every capability inside it,
 *   which is how kernel attack surface meant for root (netfilter, mounts) is reached from an unprivileged
 *   sandbox; bwrap's `--disable-userns` says the same where it can be used, and a command with a network
 *   host list cannot use it (docs/sandbox.md);
 * - any other syscall ABI (i386 and x32 on x86_64, arm32 on aarch64): the process is killed, since
 *   `socketcall(2)` hides the domain in memory a filter cannot read.
 *
 * With the host's network (`net: true`, `hostNetworkFilter`) the family rule alone holds, with AF_UNIX added
 * (the host's own sockets are what `net: true` grants: nscd, systemd-resolved) and what would get past it:
 * io_uring (ENOSYS) and other syscall ABIs (killed). Socketpairs and new user namespaces are not refused
 * there: a user namespace inherits the filter, so it reaches no other family.
 *
 * Built here, as classic BPF over `struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; }`
 * (little-endian on both supported architectures), so nothing prebuilt has to ship with Hermes.
 */

/** Per architecture: the audit arch of native syscalls, and the syscall numbers the filter looks at. */
const ARCHES = {
  x86_64: { audit: 0xc000003e, socket: 41, socketpair: 53, clone: 56, unshare: 272, x32: true },
  aarch64: { audit: 0xc00000b7, socket: 198, socketpair: 199, clone: 220, unshare: 97, x32: false },
} as const;
const IO_URING = [425, 426, 427]; // io_uring_setup, io_uring_enter, io_uring_register (all arches)
const CLONE3 = 435; // all arches
const CLONE_NEWUSER = 0x10000000;

const AF_UNIX = 1;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const NETLINK_ROUTE = 0;
const SOCK_DGRAM = 2;
/** The socket type without SOCK_NONBLOCK / SOCK_CLOEXEC. */
const SOCK_TYPE_MASK = 0xf;
const X32_SYSCALL_BIT = 0x40000000;
const EPERM = 1;
const ENOSYS = 38;
const EPROTONOSUPPORT = 93;
const EAFNOSUPPORT = 97;

const RET_ALLOW = 0x7fff0000;
const RET_KILL_PROCESS = 0x80000000;
const retErrno = (errno: number) => 0x00050000 | errno;

// Classic BPF opcodes.
const LD_W_ABS = 0x20;
const ALU_AND_K = 0x54;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;

const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** Low 32 bits of args[n]: the kernel reads domain and type as int. */
const offsetArg = (n: number) => 16 + 8 * n;

/** One instruction; jumps name a label, resolved to the forward offset the kernel wants. */
type Instruction =
  | { op: "ld"; offset: number }
  | { op: "and"; k: number }
  | { op: "jeq" | "jge"; k: number; then: string; else?: string }
  | { op: "ret"; k: number }
  | { label: string };

export type SeccompArch = keyof typeof ARCHES;

/** The architecture Deno runs on, if the filter supports it. */
export function seccompArch(arch: string = Deno.build.arch): SeccompArch | null {
  return arch === "x86_64" || arch === "aarch64" ? arch : null;
}

/**
 * The filter of a sandbox with the host's network: `socket()` only for AF_UNIX, AF_INET, AF_INET6 and
 * NETLINK_ROUTE, nothing past it (io_uring, other ABIs).
 */
export function hostNetworkFilter(arch: SeccompArch): Uint8Array {
  const a = ARCHES[arch];
  return assemble([
    { op: "ld", offset: OFFSET_ARCH },
    { op: "jeq", k: a.audit, then: "native", else: "kill" },
    { label: "native" },
    { op: "ld", offset: OFFSET_NR },
    ...(a.x32 ? [{ op: "jge" as const, k: X32_SYSCALL_BIT, then: "kill" }] : []),
    { op: "jeq", k: a.socket, then: "socket" },
    ...IO_URING.map((nr) => ({ op: "jeq" as const, k: nr, then: "enosys" })),
    { op: "ret", k: RET_ALLOW },
    { label: "socket" },
    { op: "ld", offset: offsetArg(0) },
    { op: "jeq", k: AF_UNIX, then: "allow" },
    ...familyRule(),
    { label: "enosys" },
    { op: "ret", k: retErrno(ENOSYS) },
    { label: "kill" },
    { op: "ret", k: RET_KILL_PROCESS },
  ]);
}

/**
 * With the domain loaded (AF_UNIX judged before): AF_INET, AF_INET6 and NETLINK_ROUTE allowed, other netlink
 * protocols EPROTONOSUPPORT, every other family EAFNOSUPPORT. Defines the label `allow`.
 */
function familyRule(): Instruction[] {
  return [
    { op: "jeq", k: AF_INET, then: "allow" },
    { op: "jeq", k: AF_INET6, then: "allow" },
    { op: "jeq", k: AF_NETLINK, then: "netlink", else: "eafnosupport" },
    { label: "netlink" },
    { op: "ld", offset: offsetArg(2) },
    { op: "jeq", k: NETLINK_ROUTE, then: "allow" },
    { op: "ret", k: retErrno(EPROTONOSUPPORT) },
    { label: "allow" },
    { op: "ret", k: RET_ALLOW },
    { label: "eafnosupport" },
    { op: "ret", k: retErrno(EAFNOSUPPORT) },
  ];
}

/** The filter as the bytes bubblewrap reads from its `--seccomp` fd (`struct sock_filter[]`). */
export function unixSocketFilter(arch: SeccompArch): Uint8Array {
  const a = ARCHES[arch];
  const program: Instruction[] = [
    { op: "ld", offset: OFFSET_ARCH },
    { op: "jeq", k: a.audit, then: "native", else: "kill" },
    { label: "native" },
    { op: "ld", offset: OFFSET_NR },
    ...(a.x32 ? [{ op: "jge" as const, k: X32_SYSCALL_BIT, then: "kill" }] : []),
    { op: "jeq", k: a.socket, then: "socket" },
    { op: "jeq", k: a.socketpair, then: "socketpair" },
    ...IO_URING.map((nr) => ({ op: "jeq" as const, k: nr, then: "enosys" })),
    { op: "jeq", k: CLONE3, then: "enosys" },
    // clone's and unshare's flags are both their first argument.
    { op: "jeq", k: a.clone, then: "flags" },
    { op: "jeq", k: a.unshare, then: "flags" },
    { op: "ret", k: RET_ALLOW },
    { label: "flags" },
    { op: "ld", offset: offsetArg(0) },
    { op: "and", k: CLONE_NEWUSER },
    { op: "jeq", k: CLONE_NEWUSER, then: "eperm" },
    { op: "ret", k: RET_ALLOW },
    { label: "socket" },
    { op: "ld", offset: offsetArg(0) },
    { op: "jeq", k: AF_UNIX, then: "eperm" },
    ...familyRule(),
    { label: "socketpair" },
    { op: "ld", offset: offsetArg(1) },
    { op: "and", k: SOCK_TYPE_MASK },
    { op: "jeq", k: SOCK_DGRAM, then: "eperm" },
    { op: "ret", k: RET_ALLOW },
    { label: "eperm" },
    { op: "ret", k: retErrno(EPERM) },
    { label: "enosys" },
    { op: "ret", k: retErrno(ENOSYS) },
    { label: "kill" },
    { op: "ret", k: RET_KILL_PROCESS },
  ];
  return assemble(program);
}

function assemble(program: readonly Instruction[]): Uint8Array {
  const labels = new Map<string, number>();
  let index = 0;
  for (const instruction of program) {
    if ("label" in instruction) labels.set(instruction.label, index);
    else index++;
  }
  const bytes = new Uint8Array(index * 8);
  const view = new DataView(bytes.buffer);
  index = 0;
  const offsetTo = (label: string | undefined): number => {
    if (label === undefined) return 0;
    const target = labels.get(label);
    if (target === undefined) throw new Error(`Cannot assemble the seccomp filter: no label ${label}`);
    const offset = target - index - 1;
    if (offset < 0 || offset > 255) {
      throw new Error(`Cannot assemble the seccomp filter: ${label} out of reach`);
    }
    return offset;
  };
  for (const instruction of program) {
    if ("label" in instruction) continue;
    let code: number, jt = 0, jf = 0, k: number;
    switch (instruction.op) {
      case "ld":
        [code, k] = [LD_W_ABS, instruction.offset];
        break;
      case "and":
        [code, k] = [ALU_AND_K, instruction.k];
        break;
      case "jeq":
      case "jge":
        code = instruction.op === "jeq" ? JEQ_K : JGE_K;
        [jt, jf, k] = [offsetTo(instruction.then), offsetTo(instruction.else), instruction.k];
        break;
      case "ret":
        [code, k] = [RET_K, instruction.k];
        break;
    }
    view.setUint16(index * 8, code, true);
    view.setUint8(index * 8 + 2, jt);
    view.setUint8(index * 8 + 3, jf);
    view.setUint32(index * 8 + 4, k >>> 0, true);
    index++;
  }
  return bytes;
}
