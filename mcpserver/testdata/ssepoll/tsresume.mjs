// tsresume.mjs SDK URL TOOL: the official TypeScript SDK's client, at its
// default revision (2025-11-25), calls TOOL once over Streamable HTTP and
// prints one JSON line: the call's text and the Last-Event-ID of each GET
// it sent, so that the Go test sees the stream resumed.
const [sdk, url, tool] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const resumed = [];
const recording = async (u, init) => {
  const id = new Headers(init?.headers).get("last-event-id");
  if ((init?.method ?? "GET") === "GET" && id) resumed.push(id);
  return fetch(u, init);
};
const client = new Client({ name: "tsresume", version: "1" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: recording });
await client.connect(transport);
const res = await client.callTool({ name: tool, arguments: {} });
console.log(JSON.stringify({ revision: transport.protocolVersion, text: res.content.map((c) => c.text).join(""), resumed }));
await client.close();
