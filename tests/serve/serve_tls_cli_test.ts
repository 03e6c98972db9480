/**
 * `hermes serve --cert --key` serves HTTPS (a client trusting the certificate gets answers, plain HTTP to the
 * same port does not); one of the two flags alone, or a file that is not PEM, is exit 2 before listening.
 */
import assert from "node:assert/strict";
import { hermes, tempDir } from "../_testing/cli.ts";
import { startServe } from "../_testing/serve.ts";

async function openssl(args: string[]): Promise<void> {
  const made = await new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).output();
  assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

/** A throwaway CA (`ca.pem`) and a server certificate for 127.0.0.1 signed by it. */
async function selfSigned(dir: string): Promise<{ cert: string; key: string; ca: string }> {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await openssl([
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-subj",
    "/CN=test CA",
    "-keyout",
    `${dir}/ca.key`,
    "-out",
    `${dir}/ca.pem`,
  ]);
  await openssl([
    "req",
    ...ec,
    "-subj",
    "/CN=localhost",
    "-keyout",
    `${dir}/key.pem`,
    "-out",
    `${dir}/req.csr`,
  ]);
  await Deno.writeTextFile(
    `${dir}/ext.cnf`,
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n",
  );
  await openssl([
    "x509",
    "-req",
    "-in",
    `${dir}/req.csr`,
    "-CA",
    `${dir}/ca.pem`,
    "-CAkey",
    `${dir}/ca.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${dir}/ext.cnf`,
    "-out",
    `${dir}/cert.pem`,
  ]);
  return { cert: `${dir}/cert.pem`, key: `${dir}/key.pem`, ca: `${dir}/ca.pem` };
}

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
