// tscontent.mjs drives the official TypeScript MCP SDK client against toolc,
// for cmd/toolc's TestRealClientsContent: it connects (Streamable HTTP to the
// URL in argv[2], or stdio to the command in argv[2..], which gets this
// process's environment and directory), then reads requests from stdin, one
// JSON line each, {"method": ..., "params": ...}, and sends each with the
// SDK's own call for it: listPrompts, getPrompt, listResources,
// listResourceTemplates, readResource, complete, callTool; the Skills extension's
// methods (skills/list, skills/get, resources/directory/read), which the SDK
// has no call of its own for, go through its generic request with the
// loose result schema. Its elicitation handler accepts with
// {"context": $TOOLC_ELICITED_CONTEXT}. It reports each step as one JSON line on stdout:
// {"event": "connected", "protocol"}, then {"event": "result", "result"} or
// {"event": "error", "code", "message", "data"} per request, in order.
// TOOLC_TS_SDK is the directory of the @modelcontextprotocol/sdk package.
import { createInterface } from "node:readline";

const sdk = process.env.TOOLC_TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);
const { ResultSchema, ElicitRequestSchema } = await import(`${sdk}/dist/esm/types.js`);

const say = (event, data) => console.log(JSON.stringify({ event, ...data }));
const [target, ...rest] = process.argv.slice(2);
const transport = target.startsWith("http")
	? new StreamableHTTPClientTransport(new URL(target))
	: new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
const client = new Client({ name: "toolc-ts-content", version: "1" }, { capabilities: { elicitation: {} } });
// A prompt's handler may ask the user; the answer is TOOLC_ELICITED_CONTEXT.
client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { context: process.env.TOOLC_ELICITED_CONTEXT } }));

const calls = {
	"prompts/list": (p) => client.listPrompts(p),
	"prompts/get": (p) => client.getPrompt(p),
	"resources/list": (p) => client.listResources(p),
	"resources/templates/list": (p) => client.listResourceTemplates(p),
	"resources/read": (p) => client.readResource(p),
	"completion/complete": (p) => client.complete(p),
	"tools/call": (p) => client.callTool(p),
};

try {
	await client.connect(transport);
} catch (err) {
	say("error", { message: String(err?.stack ?? err) });
	process.exit(1);
}
say("connected", { protocol: transport.protocolVersion ?? "" });
for await (const line of createInterface({ input: process.stdin })) {
	const { method, params } = JSON.parse(line);
	try {
		const call = calls[method] ?? ((p) => client.request({ method, params: p }, ResultSchema));
		say("result", { result: await call(params) });
	} catch (err) {
		// An McpError carries the JSON-RPC error's code and data.
		say("error", { code: err?.code ?? 0, message: String(err?.message ?? err), data: err?.data ?? null });
	}
}
await client.close();
