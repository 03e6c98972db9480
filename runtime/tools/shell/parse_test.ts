import assert from "node:assert/strict";
import { parseShell, type SimpleCommand, staticValue } from "./parse.ts";

/** Each simple command as its words, dynamic parts shown as `<…>`. */
function commands(source: string): string[][] {
  const parsed = parseShell(source);
  assert.ok(parsed.ok, `expected ${JSON.stringify(source)} to parse: ${!parsed.ok && parsed.reason}`);
  return parsed.commands.map(wordsOf);
}

function wordsOf(command: SimpleCommand): string[] {
  return command.words.map((w) =>
    w.parts.map((p) => ("literal" in p ? p.literal : `<${p.dynamic}>`)).join("")
  );
}

function reason(source: string): string {
  const parsed = parseShell(source);
  assert.ok(!parsed.ok, `expected ${JSON.stringify(source)} to be refused`);
  return parsed.reason;
}

Deno.test("quotes and escapes keep separators inside one word", () => {
  assert.deepEqual(commands(`git log 'a;b' "c&&d" e\\|f`), [["git", "log", "a;b", "c&&d", "e|f"]]);
  assert.deepEqual(commands(`echo "it's" 'say "hi"' a\\ b`), [["echo", "it's", 'say "hi"', "a b"]]);
  assert.deepEqual(commands(`echo "a\\"b" "\\$x" "\\n"`), [["echo", 'a"b', "$x", "\\n"]]);
  assert.deepEqual(commands(`git 'pu'sh`), [["git", "push"]]);
  assert.deepEqual(commands("echo a\\\nb"), [["echo", "ab"]]);
});

Deno.test("every operator splits simple commands", () => {
  const expected = [["a", "1"], ["b", "2"]];
  for (const op of [";", "&&", "||", "|", "|&", "&", "\n", " ; ", ";\n\n"]) {
    assert.deepEqual(commands(`a 1${op}b 2`), expected, `operator ${JSON.stringify(op)}`);
  }
  assert.deepEqual(commands("a & b & c"), [["a"], ["b"], ["c"]]);
});

Deno.test("commands inside subshells, groups and substitutions are all found", () => {
  assert.deepEqual(commands("(a; b) && { c; }"), [["a"], ["b"], ["c"]]);
  assert.deepEqual(commands("echo $(a $(b))"), [["b"], ["a", "<$(b)>"], ["echo", "<$(a $(b))>"]]);
  assert.deepEqual(commands("echo `a`"), [["a"], ["echo", "<`a`>"]]);
  assert.deepEqual(commands('echo "x $(a) y"'), [["a"], ["echo", "x <$(a)> y"]]);
  assert.deepEqual(commands("diff <(a) >(b)"), [["a"], ["b"], ["diff", "<<(a)>", "<>(b)>"]]);
  assert.deepEqual(commands("echo `a \\`b\\``"), [["b"], ["a", "<`b`>"], ["echo", "<`a \\`b\\``>"]]);
});

Deno.test("reserved words around compound commands are not commands", () => {
  assert.deepEqual(commands("if a; then b; elif c; then d; else e; fi"), [["a"], ["b"], ["c"], ["d"], ["e"]]);
  assert.deepEqual(commands("while a; do b; done"), [["a"], ["b"]]);
  assert.deepEqual(commands("for f in x $(a); do b $f; done"), [["a"], ["b", "<$f>"]]);
  assert.deepEqual(commands("! a | time b"), [["a"], ["b"]]);
});

Deno.test("assignments are separated from the command", () => {
  const parsed = parseShell("FOO=1 BAR+=x rm y; BAZ=2");
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.commands.map((c) => [c.assignments, wordsOf(c), c.text]), [
    [["FOO", "BAR"], ["rm", "y"], "rm y"],
    [["BAZ"], [], "BAZ=2"],
  ]);
  assert.deepEqual(commands("'FOO=1' x"), [["FOO=1", "x"]]);
});

Deno.test("redirections are collected with their targets", () => {
  const parsed = parseShell("a >out 2>&1 <in >>log &>all 3<&- >|f <<<'s' <>rw; (b) > sub");
  assert.ok(parsed.ok);
  const [a, b, sub] = parsed.commands;
  assert.deepEqual(a!.redirects.map((r) => [r.op, staticValue(r.target)]), [
    [">", "out"],
    [">&", "1"],
    ["<", "in"],
    [">>", "log"],
    ["&>", "all"],
    ["<&", "-"],
    [">|", "f"],
    ["<<<", "s"],
    ["<>", "rw"],
  ]);
  assert.deepEqual(wordsOf(a!), ["a"]);
  assert.deepEqual(wordsOf(b!), ["b"]);
  assert.deepEqual(sub!.words, []);
  assert.deepEqual(sub!.redirects.map((r) => r.text.trim()), ["> sub"]);
  assert.equal(sub!.text, "(b) > sub");
});

Deno.test("values known only at run time are dynamic parts", () => {
  assert.deepEqual(commands("echo $x ${y} ${z:-d} $1 $@ * a?b [ab] ~/x {a,b} $'q' {} [ ]"), [[
    "echo",
    "<$x>",
    "<${y}>",
    "<${z:-d}>",
    "<$1>",
    "<$@>",
    "<*>",
    "a<?>b",
    "<[>ab]",
    "<~>/x",
    "<{a,b}>",
    "<$'q'>",
    "{}",
    "[",
    "]",
  ]]);
  assert.deepEqual(commands("echo '*' \"$\" a$"), [["echo", "*", "$", "a$"]]);
});

Deno.test("comments end at the line", () => {
  assert.deepEqual(commands("a # b; c\nd"), [["a"], ["d"]]);
  assert.deepEqual(commands("a#b"), [["a#b"]]);
});

Deno.test("what cannot be followed with confidence is refused with a reason", () => {
  assert.equal(reason("echo 'a"), "unterminated single quote");
  assert.equal(reason('echo "a'), "unterminated double quote");
  assert.equal(reason("echo `a"), "unterminated backquote");
  assert.equal(reason("echo $(a"), 'unterminated "("');
  assert.equal(reason("echo a)"), 'unexpected ")"');
  assert.equal(reason("cat <<EOF\nx\nEOF"), "heredocs (<<) are not supported");
  assert.match(reason("echo $((1+2))"), /arithmetic/);
  assert.match(reason("((x++))"), /arithmetic/);
  assert.match(reason("echo $[1]"), /arithmetic/);
  assert.match(reason("echo ${x:-$(rm y)}"), /too complex/);
  assert.match(reason("echo ${!x}"), /too complex/);
  assert.match(reason("f() { rm y; }"), /function definitions/);
  assert.match(reason("case x in a) rm y;; esac"), /"case" is not supported/);
  assert.match(reason("[[ -f x ]]"), /"\[\[" is not supported/);
  assert.match(reason("a[0]=1 x"), /array/);
  assert.match(reason("echo >"), /has no target/);
  assert.match(reason("echo a\\"), /backslash/);
  assert.match(reason("$(".repeat(100)), /nested too deeply/);
});
