// tsclient.mjs drives the official TypeScript MCP SDK client against toolc,
// for cmd/toolc's real-client tests: it connects (Streamable HTTP to the URL
// in argv[2], or stdio to the command in argv[2..]), lists the tools, calls
// svc_echo, then lists again on each notifications/tools/list_changed until
// the list is not the first one, and calls svc_ask, answering its
// elicitation (the name Ada). A stdio client connects while toolc dev's
// first load runs, so the first list_changed it hears may be that load's.
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
let changes = 0;
let changed = () => {};
client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
	changes++;
	changed();
});
// nextChange resolves at the first list_changed after the seen-th.
const nextChange = (seen) => new Promise((resolve) => {
	changed = () => changes > seen && resolve();
	changed();
});

try {
	await client.connect(transport);
	const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
	const first = await names();
	say("listed", { protocol: transport.protocolVersion ?? "", tools: first });
	const res = await client.callTool({ name: "svc_echo", arguments: { message: "hi" } });
	say("called", { text: res.content.map((c) => c.text ?? "").join(""), isError: !!res.isError });
	let now = first;
	for (let seen = 0; now.join() === first.join(); ) {
		await nextChange(seen);
		seen = changes;
		now = await names();
	}
	say("changed", { tools: now });
	const asked = await client.callTool({ name: "svc_ask", arguments: {} });
	say("asked", { text: asked.content.map((c) => c.text ?? "").join(""), isError: !!asked.isError });
	await client.close();
} catch (err) {
	say("error", { message: String(err?.stack ?? err) });
	process.exitCode = 1;
}
