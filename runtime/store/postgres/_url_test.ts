import assert from "node:assert/strict";
import { ValidationError } from "../../core/errors.ts";
import { clientOptions, isPostgresUrl, parsePostgresUrl, redactUrl } from "./_url.ts";

Deno.test("postgres url: libpq's URI forms become client options", () => {
  assert.deepEqual(parsePostgresUrl("postgres://postgres@/postgres?host=/tmp/pg&port=5433"), {
    user: "postgres",
    database: "postgres",
    host: "/tmp/pg",
    port: 5433,
  });
  assert.deepEqual(parsePostgresUrl("postgresql://hermes:p%40ss@db.example:6543/state?sslmode=require"), {
    user: "hermes",
    password: "p@ss",
    host: "db.example",
    port: 6543,
    database: "state",
    ssl: "require",
  });
  assert.deepEqual(parsePostgresUrl("postgres://%2Frun%2Fpostgresql/hermes"), {
    host: "/run/postgresql",
    database: "hermes",
  });
  assert.deepEqual(parsePostgresUrl("postgres://[::1]:5432/h?application_name=ci&connect_timeout=3"), {
    host: "::1",
    port: 5432,
    database: "h",
    application_name: "ci",
    connect_timeout: 3,
  });
  assert.deepEqual(parsePostgresUrl("postgres://"), {}, "everything defaults");
  assert.deepEqual(parsePostgresUrl("postgres://h/d?sslmode=disable"), {
    host: "h",
    database: "d",
    ssl: false,
  });
});

Deno.test("postgres url: what cannot be used is refused with the reason, password redacted", () => {
  const refused = (url: string, why: RegExp) =>
    assert.throws(() => parsePostgresUrl(url), (e: Error) => {
      assert.ok(e instanceof ValidationError);
      assert.match(e.message, why);
      assert.doesNotMatch(e.message, /s3cret/);
      return true;
    });
  refused("mysql://h/d", /expected postgres:\/\//);
  refused(
    "postgres://u:s3cret@h/d?schema=x",
    /^Cannot use the store URL postgres:\/\/u:\*\*\*@h\/d\?schema=x: unknown parameter "schema"/,
  );
  refused("postgres://h:99999/d", /port "99999" is not a port number/);
  refused("postgres://h/d?port=abc&password=s3cret", /port "abc"/);
  refused("postgres://a,b/d", /several hosts/);
  refused("postgres://h/d?sslmode=maybe", /sslmode "maybe"/);
});

Deno.test("postgres url: redaction covers both places a password can be", () => {
  assert.equal(redactUrl("postgres://u:s3cret@h:1/d"), "postgres://u:***@h:1/d");
  assert.equal(
    redactUrl("postgres://u@/d?host=/x&password=s3cret&port=2"),
    "postgres://u@/d?host=/x&password=***&port=2",
  );
  assert.equal(redactUrl("postgres://u@h/d"), "postgres://u@h/d");
  assert.ok(
    isPostgresUrl("postgresql://x") && isPostgresUrl("postgres://") && !isPostgresUrl("/tmp/state.db"),
  );
});

Deno.test("postgres url: a socket directory becomes the socket's path; an IPv6 host stays whole", () => {
  assert.deepEqual(clientOptions(parsePostgresUrl("postgres://u@/d?host=/tmp/pg&port=5433")), {
    user: "u",
    database: "d",
    host: "/tmp/pg",
    path: "/tmp/pg/.s.PGSQL.5433",
  });
  assert.deepEqual(clientOptions(parsePostgresUrl("postgres://[::1]/d?application_name=x")), {
    database: "d",
    host: ["::1"],
    port: [5432],
  });
  assert.deepEqual(clientOptions(parsePostgresUrl("postgres:///d")), { database: "d" });
});
