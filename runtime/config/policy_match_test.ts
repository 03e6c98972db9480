import assert from "node:assert/strict";
import {
  HOST_PATTERN,
  hostCoveredByAny,
  nameMatchesAny,
  URL_PATTERN,
  urlMatchesAny,
} from "./policy_match.ts";

Deno.test("policy_match: URL patterns compare scheme, host labels, port and path apart", () => {
  const azure = ["https://*.openai.azure.com/*"];
  assert.ok(urlMatchesAny("https://res.openai.azure.com/openai/v1", azure));
  for (
    const url of [
      "https://ATTACKER/.openai.azure.com/",
      "https://x.openai.azure.com@evil.test/",
      "https://a.b.openai.azure.com/",
      "https://openai.azure.com/",
      "https://res.openai.azure.com:444/",
      "http://res.openai.azure.com/",
      "not a url",
    ]
  ) assert.ok(!urlMatchesAny(url, azure), url);
  assert.ok(urlMatchesAny("https://api.openai.com/v1", ["https://api.openai.com/*"]));
  assert.ok(!urlMatchesAny("https://api.openai.com.evil.test/v1", ["https://api.openai.com/*"]));
  assert.ok(urlMatchesAny("http://127.0.0.1:8080/v1", ["http://127.0.0.1:*/v1"]));
  assert.ok(!urlMatchesAny("http://127.0.0.1:8080/v2", ["http://127.0.0.1:*/v1"]));
  // URL parsing normalises what the client would reach: dot segments, IPv4 forms.
  assert.ok(!urlMatchesAny("https://api.openai.com/v1/../../admin", ["https://api.openai.com/v1/*"]));
  assert.ok(urlMatchesAny("http://0x7f.1/x", ["http://127.0.0.1/*"]));
  assert.ok(urlMatchesAny("https://anything.test/", ["*"]));
});

Deno.test("policy_match: host patterns cover host rules whole", () => {
  const below = ["*.example.com"];
  assert.ok(hostCoveredByAny("api.example.com", below));
  assert.ok(hostCoveredByAny("a.b.example.com:443", below));
  assert.ok(hostCoveredByAny("*.example.com", below));
  assert.ok(hostCoveredByAny("*.api.example.com:8443", below));
  for (
    const host of ["127.0.0.1#.example.com", "example.com", "*", "evilexample.com", "evil.test/.example.com"]
  ) {
    assert.ok(!hostCoveredByAny(host, below), host);
  }
  assert.ok(hostCoveredByAny("api.github.com:443", ["api.github.com"]));
  assert.ok(!hostCoveredByAny("api.github.com", ["api.github.com:443"]), "every port is more than one");
  assert.ok(hostCoveredByAny("[::1]:8080", ["[::1]"]));
  assert.ok(hostCoveredByAny("*", ["*"]));
});

Deno.test("policy_match: names take * for any run; the grammars refuse what does not parse", () => {
  assert.ok(nameMatchesAny("CI_TOKEN", ["CI_*"]));
  assert.ok(!nameMatchesAny("XCI_TOKEN", ["CI_*"]));
  assert.ok(URL_PATTERN.test("https://*.example.com/*"));
  assert.ok(!URL_PATTERN.test("api.openai.com*"));
  assert.ok(HOST_PATTERN.test("*.example.com:443"));
  assert.ok(HOST_PATTERN.test("*"));
  assert.ok(!HOST_PATTERN.test("127.0.0.1#.example.com"));
});
