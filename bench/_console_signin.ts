/** Signs a console benchmark in through the form, as a browser does: the session cookie's name and value. */
export async function signIn(serverUrl: string, token: string): Promise<{ name: string; value: string }> {
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
    body: new URLSearchParams({ _csrf: csrf, token }),
  });
  await signed.body?.cancel();
  const [name, value] = /^(hermes_console)=([^;]+)/.exec(signed.headers.get("set-cookie") ?? "")!.slice(1);
  return { name: name!, value: value! };
}
