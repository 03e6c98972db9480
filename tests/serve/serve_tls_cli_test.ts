/**
 * `hermes serve --cert --key` serves HTTPS (a client trusting the certificate gets answers, plain HTTP to the
 * same port does not); one of the two flags alone, or a file that is not PEM, is exit 2 before listening.
 */
import assert from "node:assert/strict";
import { hermes, tempDir } from "../_testing/cli.ts";
import { startServe } from "../_testing/serve.ts";
import { selfSigned } from "../_testing/tls.ts";

Deno.test("serve: --cert and --key serve HTTPS", async () => {
  const home = await tempDir();
  const { cert, key, ca } = await selfSigned(home);
  await using server = await startServe(home, ["--cert", cert, "--key", key]);
  assert.match(server.url, /^https:\/\/127\.0\.0\.1:\d+$/);
  const client = Deno.createHttpClient({ caCerts: [await Deno.readTextFile(ca)] });
  try {
    const response = await fetch(`${server.url}/healthz`, { client });
    assert.equal(response.status, 200);
    assert.equal((await response.json()).status, "ok");
    await assert.rejects(
      fetch(`${server.url.replace("https:", "http:")}/healthz`, { client }).then((r) => r.text()),
      "plain HTTP is not answered",
    );
  } finally {
    client.close();
  }
  assert.equal(await server.stop(), 0);
  await Deno.remove(home, { recursive: true });
});

Deno.test("serve: --cert without --key, or a file that is not PEM, is exit 2 naming the flag", async () => {
  const home = await tempDir();
  const { cert } = await selfSigned(home);
  const alone = await hermes(["serve", "--listen", "127.0.0.1:0", "--cert", cert], { home });
  assert.equal(alone.code, 2);
  assert.match(alone.stderr, /--cert: HTTPS needs both --cert and --key/);
  await Deno.writeTextFile(`${home}/junk`, "not a key");
  const junk = await hermes(["serve", "--listen", "127.0.0.1:0", "--cert", cert, "--key", `${home}/junk`], {
    home,
  });
  assert.equal(junk.code, 2);
  assert.match(junk.stderr, /--key: ".*junk" is not a PEM file/);
  const listen = await hermes(["serve", "--listen", "8787"], { home });
  assert.equal(listen.code, 2);
  assert.match(listen.stderr, /--listen: cannot read "8787"/);
  await Deno.remove(home, { recursive: true });
});
