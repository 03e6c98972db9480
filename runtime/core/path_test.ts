import assert from "node:assert/strict";
import * as node from "node:path";
import * as path from "./path.ts";

/** Every path of up to four segments drawn from the awkward ones, relative and absolute, with and without a trailing slash. */
function corpus(): string[] {
  const parts = ["a", "bc", ".", "..", "...", ".d", "e.", ""];
  const paths = new Set<string>(["", "/", "//", "///", ".", "..", "./", "../"]);
  const grow = (prefix: string[], depth: number) => {
    if (depth === 0) return;
    for (const part of parts) {
      const next = [...prefix, part];
      const body = next.join("/");
      for (const form of [body, `/${body}`, `${body}/`, `/${body}/`, `//${body}`]) paths.add(form);
      grow(next, depth - 1);
    }
  };
  grow([], 4);
  return [...paths];
}

const PATHS = corpus();
// A smaller set for the two-argument functions, whose pairs grow as the square.
const PAIRS = PATHS.filter((_, i) => i % 97 === 0);

Deno.test("path: normalize, dirname, basename and isAbsolute agree with node:path on every path of the corpus", () => {
  for (const p of PATHS) {
    assert.equal(path.normalize(p), node.normalize(p), `normalize(${JSON.stringify(p)})`);
    assert.equal(path.dirname(p), node.dirname(p), `dirname(${JSON.stringify(p)})`);
    assert.equal(path.basename(p), node.basename(p), `basename(${JSON.stringify(p)})`);
    assert.equal(path.isAbsolute(p), node.isAbsolute(p), `isAbsolute(${JSON.stringify(p)})`);
  }
});

Deno.test("path: resolve, join and relative agree with node:path, from the current directory too", () => {
  for (const a of PATHS) {
    assert.equal(path.resolve(a), node.resolve(a), `resolve(${JSON.stringify(a)})`);
  }
  for (const a of PAIRS) {
    for (const b of PAIRS) {
      const args = JSON.stringify([a, b]);
      assert.equal(path.resolve(a, b), node.resolve(a, b), `resolve(${args})`);
      assert.equal(path.join(a, b), node.join(a, b), `join(${args})`);
      assert.equal(path.relative(a, b), node.relative(a, b), `relative(${args})`);
    }
  }
  assert.equal(path.join(), node.join());
  assert.equal(path.resolve(), node.resolve());
  assert.equal(path.join("a", "", "b"), node.join("a", "", "b"));
  assert.equal(path.resolve("/x", "", "y"), node.resolve("/x", "", "y"));
});

Deno.test("path: relative between siblings, ancestors and the root", () => {
  const cases: [string, string][] = [
    ["/a/b/c", "/a/b/c/d"],
    ["/a/b/c/d", "/a/b/c"],
    ["/a/bc", "/a/b"],
    ["/a/b", "/a/bc"],
    ["/", "/a"],
    ["/a", "/"],
    ["/a/b", "/x/y"],
    ["/home/user/.hermes", "/home/user/.hermes/state.db"],
  ];
  for (const [from, to] of cases) {
    assert.equal(path.relative(from, to), node.relative(from, to), `${from} → ${to}`);
  }
  assert.equal(path.sep, node.sep);
  assert.equal(path.delimiter, node.delimiter);
});
