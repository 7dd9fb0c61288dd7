/**
 * The floor: the least any Bun HTTP service can do per request, answering every method and
 * path with a small JSON body. It runs as its own process so it never shares an event loop
 * with the harness, just as docverify does not. It announces its address in the same shape
 * as docverify's startup log line.
 */
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  development: false,
  fetch: () => Response.json({ status: "ok" }),
});
process.stdout.write(JSON.stringify({ msg: "floor started", url: `http://127.0.0.1:${server.port}` }) + "\n");
