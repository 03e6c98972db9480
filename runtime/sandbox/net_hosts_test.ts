import assert from "node:assert/strict";
import { HOST_RULE_PATTERN, matchHost, namesAddress, parseHostList, parseHostRule } from "./net_hosts.ts";

Deno.test("host rules: a host covers every port, host:port one, *.name the names below it", () => {
  const rules = parseHostList(["api.github.com", "*.example.com:443", "[::1]:8080", "10.0.0.5:5432"]);
  assert.equal(matchHost(rules, "API.GitHub.com", 22)?.text, "api.github.com");
  assert.equal(matchHost(rules, "a.example.com", 443)?.text, "*.example.com:443");
  assert.equal(matchHost(rules, "a.b.example.com", 443)?.text, "*.example.com:443");
  assert.equal(matchHost(rules, "example.com", 443), null, "the wildcard does not cover the name itself");
  assert.equal(matchHost(rules, "a.example.com", 80), null);
  assert.equal(matchHost(rules, "evilexample.com", 443), null);
  assert.equal(matchHost(rules, "api.github.com.evil.io", 443), null);
  assert.equal(matchHost(rules, "[::1]", 8080)?.text, "[::1]:8080");
  assert.equal(matchHost(rules, "10.0.0.5", 5432)?.text, "10.0.0.5:5432");
  assert.equal(matchHost(rules, "10.0.0.5", 5433), null);
});

Deno.test("host rules: malformed entries are refused with the reason", () => {
  for (
    const [text, why] of [
      ["http://x.io/", /port/],
      ["a*.io", /only a leading \*\. is a wildcard/],
      ["*.10.0.0.1", /a wildcard covers names/],
      ["x.io:70000", /outside 1–65535/],
      ["", /empty/],
    ] as const
  ) {
    assert.throws(() => parseHostRule(text), why, text);
    if (text !== "*.10.0.0.1" && text !== "x.io:70000") {
      assert.equal(HOST_RULE_PATTERN.test(text), false, text);
    }
  }
});

Deno.test("host rules: a rule names an address in any of its spellings, a name never does", () => {
  const [literal, name, v6] = parseHostList(["127.0.0.1:80", "localhost:80", "[::1]"]);
  assert.equal(namesAddress(literal!, "127.0.0.1"), true);
  assert.equal(namesAddress(literal!, "::ffff:127.0.0.1"), true);
  assert.equal(namesAddress(literal!, "127.0.0.2"), false);
  assert.equal(namesAddress(name!, "127.0.0.1"), false);
  assert.equal(namesAddress(v6!, "0:0:0:0:0:0:0:1"), true);
});
