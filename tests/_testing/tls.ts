/** A throwaway certificate authority and a server certificate it signed, for HTTPS and WSS tests (openssl). */
import assert from "node:assert/strict";

async function openssl(args: string[]): Promise<void> {
  const made = await new Deno.Command("openssl", { args, stdout: "null", stderr: "piped" }).output();
  assert.equal(made.code, 0, new TextDecoder().decode(made.stderr));
}

/** A throwaway CA (`ca.pem`) and a server certificate for 127.0.0.1 signed by it. */
export async function selfSigned(dir: string): Promise<{ cert: string; key: string; ca: string }> {
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
