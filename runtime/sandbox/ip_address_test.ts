import assert from "node:assert/strict";
import { canonicalAddress, isInternalAddress, isIP, ownAddresses, sameAddress } from "./ip_address.ts";

Deno.test("ip addresses: every spelling of an address parses to the same bytes; non-addresses do not parse", () => {
  for (
    const [text, canonical] of [
      ["0:0:0:0:0:0:0:1", "0:0:0:0:0:0:0:1"],
      ["::1", "0:0:0:0:0:0:0:1"],
      ["::ffff:127.0.0.1", "127.0.0.1"],
      ["::FFFF:7f00:1", "127.0.0.1"],
      ["0:0:0:0:0:ffff:7f00:0001", "127.0.0.1"],
      ["[2606:4700::1111]", "2606:4700:0:0:0:0:0:1111"],
      ["fe80::1%eth0", "fe80:0:0:0:0:0:0:1"],
      ["10.0.0.1", "10.0.0.1"],
    ] as const
  ) assert.equal(canonicalAddress(text), canonical, text);
  for (
    const text of [
      "1::2::3",
      "1:2:3:4:5:6:7:8:9",
      "::1.2.3",
      "01.2.3.4",
      "256.1.1.1",
      "1.2.3.4::",
      "x.io",
      ":1",
    ]
  ) {
    assert.equal(isIP(text), 0, text);
  }
  assert.equal(isIP("1:2:3:4:5:6:1.2.3.4"), 6);
  assert.equal(sameAddress("::1", "0:0:0:0:0:0:0:1"), true);
  assert.equal(sameAddress("127.0.0.1", "127.0.0.2"), false);
});

Deno.test("ip addresses: loopback, private, special-purpose and IPv4-carrying forms of them are internal", () => {
  for (
    const address of [
      "127.0.0.1",
      "10.1.2.3",
      "172.16.0.1",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "100.127.255.254",
      "0.0.0.0",
      "0.1.2.3",
      "192.0.0.170",
      "198.18.0.1",
      "198.19.255.255",
      "224.0.0.1",
      "255.255.255.255",
      "::1",
      "::",
      "0:0:0:0:0:0:0:1",
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:0:a00:1",
      "::127.0.0.1",
      "64:ff9b::7f00:1",
      "64:ff9b::8.8.8.8",
      "64:ff9b:1::1",
      "2002:7f00:1::",
      "2002:a9fe:a9fe::1",
      "fe80::1",
      "fe80::1%eth0",
      "fec0::1",
      "feff::1",
      "fd00::1",
      "fc00::1",
      "ff02::1",
      "not an address",
    ]
  ) assert.equal(isInternalAddress(address), true, address);
  for (
    const address of [
      "140.82.112.5",
      "172.32.0.1",
      "100.128.0.1",
      "198.20.0.1",
      "192.0.1.1",
      "8.8.8.8",
      "2606:4700::1111",
      "2002:808:808::1",
      "::ffff:8.8.8.8",
      "64:ff9c::1",
    ]
  ) assert.equal(isInternalAddress(address), false, address);
});

Deno.test("ip addresses: this host's own addresses are internal, whatever range they are in", () => {
  const own = ownAddresses();
  assert.ok(own.has("127.0.0.1"), [...own].join(", "));
  // A public-range address of this host (as a cloud VM has) counts once it is among the host's own.
  assert.equal(isInternalAddress("203.0.113.9"), false);
  assert.equal(isInternalAddress("203.0.113.9", { own: new Set(["203.0.113.9"]) }), true);
  assert.equal(isInternalAddress("::ffff:203.0.113.9", { own: new Set(["203.0.113.9"]) }), true);
  for (const address of own) assert.equal(isInternalAddress(address, { own }), true, address);
});
