import assert from "node:assert/strict";
import {
  HOST_RULE_PATTERN,
  isInternalAddress,
  matchHost,
  namesAddress,
  parseHostList,
  parseHostRule,
} from "./net_hosts.ts";

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

Deno.test("internal addresses: loopback, private, link-local, CGNAT, mapped forms; public ones are not", () => {
  for (
    const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
    ]
  ) assert.equal(isInternalAddress(address), true, address);
  for (const address of ["140.82.112.5", "172.32.0.1", "2606:4700::1111", "8.8.8.8"]) {
    assert.equal(isInternalAddress(address), false, address);
  }
  const [literal, name] = parseHostList(["127.0.0.1:80", "localhost:80"]);
  assert.equal(namesAddress(literal!, "127.0.0.1"), true);
  assert.equal(namesAddress(literal!, "::ffff:127.0.0.1"), true);
  assert.equal(namesAddress(name!, "127.0.0.1"), false);
});
