/**
 * The attacker of scoped_open_test.ts: exchanges two paths atomically (renameat2 RENAME_EXCHANGE) in a tight loop
 * until killed, so that each name is in turn a real directory or file and a
 * symlink leading out of the root. Prints "swapping" once it runs.
 * Usage: deno run --allow-ffi swap_loop.ts PATH_A PATH_B
 */
const libc = Deno.dlopen("libc.so.6", {
  renameat2: { parameters: ["i32", "buffer", "i32", "buffer", "u32"], result: "i32" },
});
const AT_FDCWD = -100;
const RENAME_EXCHANGE = 2;
const [a, b] = Deno.args.map((path) => new TextEncoder().encode(`${path}\0`));
if (!a || !b) throw new Error("usage: swap_loop.ts PATH_A PATH_B");
for (let n = 0;; n++) {
  if (libc.symbols.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) !== 0) {
    console.error("renameat2 failed");
    Deno.exit(1);
  }
  if (n === 1) console.log("swapping");
}
