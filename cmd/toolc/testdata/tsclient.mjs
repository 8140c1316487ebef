// tsclient.mjs drives the official TypeScript MCP SDK client against toolc,
// for cmd/toolc's real-client tests: it connects (Streamable HTTP to the URL
// in argv[2], or stdio to the command in argv[2..]), lists the tools, calls
// svc_echo, then waits for notifications/tools/list_changed, lists again,
// and calls svc_ask, answering its elicitation (the name Ada).
// It reports each step as one JSON line on stdout; the Go test reads them.
// TOOLC_TS_SDK is the directory of the @modelcontextprotocol/sdk package.
const sdk = process.env.TOOLC_TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);
const { ToolListChangedNotificationSchema, ElicitRequestSchema } = await import(`${sdk}/dist/esm/types.js`);

const say = (event, data) => console.log(JSON.stringify({ event, ...data }));
const [target, ...rest] = process.argv.slice(2);
const transport = target.startsWith("http")
	? new StreamableHTTPClientTransport(new URL(target))
	: new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });

const client = new Client({ name: "toolc-ts-test", version: "1" }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { name: "Ada" } }));
let changed;
const listChanged = new Promise((resolve) => (changed = resolve));
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

try {
	await client.connect(transport);
	const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
	say("listed", { protocol: transport.protocolVersion ?? "", tools: await names() });
	const res = await client.callTool({ name: "svc_echo", arguments: { message: "hi" } });
	say("called", { text: res.content.map((c) => c.text ?? "").join(""), isError: !!res.isError });
	await listChanged;
	say("changed", { tools: await names() });
	const asked = await client.callTool({ name: "svc_ask", arguments: {} });
	say("asked", { text: asked.content.map((c) => c.text ?? "").join(""), isError: !!asked.isError });
	await client.close();
} catch (err) {
	say("error", { message: String(err?.stack ?? err) });
	process.exitCode = 1;
}
