import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createRedactor } from "./redact.ts";

const SECRET = 'pa"ss\\wo\trd/é +&=99';
const redact = createRedactor({ DB_PASSWORD: SECRET });

function assertRedacted(form: string, label: string): void {
  const out = redact(`before ${form} after`);
  assert.ok(!out.includes(form), `${label}: ${out}`);
  assert.match(out, /\[REDACTED:DB_PASSWORD\]/, label);
}

const base64 = (text: string) => Buffer.from(text, "utf8").toString("base64");
const base64url = (text: string) => Buffer.from(text, "utf8").toString("base64url");

Deno.test("secret forms: raw, JSON-escaped (once, twice, \\u escapes) and percent-encoded", () => {
  const json = JSON.stringify(SECRET).slice(1, -1);
  const forms: [string, string][] = [
    [SECRET, "raw"],
    [json, "JSON"],
    [JSON.stringify(JSON.stringify(SECRET)).slice(1, -1), "JSON in JSON"],
    [json.replaceAll("/", "\\/"), "JSON with \\/"],
    [[...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`).join(""), "\\u lower"],
    [
      [...SECRET].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0").toUpperCase()}`).join(""),
      "\\u upper",
    ],
    [encodeURIComponent(SECRET), "encodeURIComponent"],
    [encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), "lower-case hex"],
    [new URLSearchParams({ p: SECRET }).toString().slice(2), "form encoding (+ for space)"],
    [encodeURI(SECRET), "encodeURI"],
    [
      [...new TextEncoder().encode(SECRET)].map((b) => `%${b.toString(16).padStart(2, "0")}`).join(""),
      "every byte encoded",
    ],
  ];
  for (const [form, label] of forms) assertRedacted(form, label);
});

Deno.test("secret forms: base64 alone, url-safe, unpadded, and inside a longer stream at every alignment", () => {
  const forms: [string, string][] = [
    [base64(SECRET), "standard"],
    [base64(SECRET).replace(/=+$/, ""), "unpadded"],
    [base64url(SECRET), "url-safe"],
    [base64(`user:${SECRET}`), "basic auth user:secret"],
  ];
  for (const prefix of ["", "a", "ab", "abc"]) {
    for (const suffix of ["", "x", "xy"]) {
      forms.push([base64(`${prefix}${SECRET}${suffix}`), `stream "${prefix}…${suffix}"`]);
      forms.push([base64url(`${prefix}${SECRET}${suffix}`), `url-safe stream "${prefix}…${suffix}"`]);
    }
  }
  for (const [form, label] of forms) {
    const out = redact(`Authorization: Basic ${form}`);
    assert.match(out, /\[REDACTED:DB_PASSWORD\]/, label);
    // What is left of the encoding cannot be decoded back to the secret.
    const left = out.replace("Authorization: Basic ", "").replace(/\[REDACTED:DB_PASSWORD\]/, "");
    assert.ok(!Buffer.from(left, "base64").toString("utf8").includes(SECRET), label);
  }
});

Deno.test("secret forms: hex bytes, \\x escapes and HTML character references", () => {
  const bytes = [...new TextEncoder().encode(SECRET)];
  const hex = bytes.map((b) => b.toString(16).padStart(2, "0")).join("");
  const forms: [string, string][] = [
    [hex, "hex (xxd -p)"],
    [hex.toUpperCase(), "upper-case hex"],
    [bytes.map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join(""), "\\x byte escapes"],
    [
      JSON.stringify(bytes.map((b) => `\\x${b.toString(16).padStart(2, "0")}`).join("")).slice(1, -1),
      "in JSON",
    ],
    [[...SECRET].map((c) => `&#${c.codePointAt(0)};`).join(""), "decimal references"],
    [
      [...SECRET].map((c) => `&#x${c.codePointAt(0)!.toString(16).toUpperCase()};`).join(""),
      "hex references",
    ],
    [SECRET.replaceAll("&", "&amp;").replaceAll('"', "&quot;"), "named references (an HTML escaper)"],
  ];
  for (const [form, label] of forms) assertRedacted(form, label);
  // A secret written into an HTML page by a real escaper: the three-digit hex reference of U+0100 too.
  const other = createRedactor({ API_KEY: "k<ey>Āz1" });
  assert.equal(other("v=&#x6b;&lt;ey&gt;&#x100;z1."), "v=[REDACTED:API_KEY].");
});

Deno.test("secret forms: text without the secret is unchanged, and similar values are kept", () => {
  const text = `pa"ss wo rd, ${base64('pa"ss\\wo')}, %70%61, 7061227373 &#112;&#97; and a long base64 ${
    base64("x".repeat(64))
  }`;
  assert.equal(redact(text), text);
  const other = createRedactor({ A_TOKEN: "tok-123456", B_TOKEN: "tok-123456-longer" });
  assert.equal(other("tok-123456-longer tok-123456"), "[REDACTED:B_TOKEN] [REDACTED:A_TOKEN]");
});
