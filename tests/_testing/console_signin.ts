/**
 * Signs in to a running `hermes serve` console through its form, as a browser does: the form's nonce cookie
 * and CSRF token, then the token posted. For the CLI tests and the console benches.
 */
export interface ConsoleSession {
  /** The sign-in's HTTP status (303 when it took). */
  status: number;
  /** The session cookie's name and value. */
  name: string;
  value: string;
  /** `name=value`, for a `cookie` header. */
  cookie: string;
}

export async function signIn(serverUrl: string, token: string): Promise<ConsoleSession> {
  const form = await fetch(`${serverUrl}/signin`);
  const nonce = /hermes_console_signin=([0-9a-f]+)/.exec(form.headers.get("set-cookie") ?? "")![1]!;
  const csrf = /name="_csrf" value="([0-9a-f]+)"/.exec(await form.text())![1]!;
  const signed = await fetch(`${serverUrl}/signin`, {
    method: "POST",
    redirect: "manual",
    headers: {
      cookie: `hermes_console_signin=${nonce}`,
      "content-type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ _csrf: csrf, token, next: "/runs" }),
  });
  await signed.body?.cancel();
  const [name = "", value = ""] =
    /^(hermes_console)=([^;]+)/.exec(signed.headers.get("set-cookie") ?? "")?.slice(1) ?? [];
  return { status: signed.status, name, value, cookie: `${name}=${value}` };
}
