/**
 * The raw HTTP baseline of bench/turn_bench.ts: posts one request ROUNDS times to a chat completions URL,
 * serialising the body and parsing each reply as any client must, from a process of its own like `hermes run`.
 *
 *   deno run -A bench/_raw_client.ts URL BODY_FILE ROUNDS
 */
const [url, bodyFile, rounds] = Deno.args;
if (!url || !bodyFile || !rounds) throw new Error("usage: _raw_client.ts URL BODY_FILE ROUNDS");
const request: unknown = JSON.parse(await Deno.readTextFile(bodyFile));
for (let i = 0; i < Number(rounds); i++) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer bench" },
    body: JSON.stringify(request),
  });
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}: ${await response.text()}`);
  await response.json();
}
