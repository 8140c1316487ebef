// tsupstream.mjs drives the official TypeScript MCP SDK client against an
// upstream server's tools, for cmd/toolc's upstream tests: it connects
// (Streamable HTTP to the URL in argv[2], or stdio to the command in
// argv[2..]), makes each call of $TOOLC_TS_CALLS (a JSON list of
// [tool, arguments]) once, answering a sampling request with "sampled by
// the TypeScript client" and declining an elicitation, and then times
// $TOOLC_TS_TIMED calls of the first, one after another. It reports each
// step as one JSON line on stdout; the Go test reads them.
// TOOLC_TS_SDK is the directory of the @modelcontextprotocol/sdk package.
const sdk = process.env.TOOLC_TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { StdioClientTransport } = await import(`${sdk}/dist/esm/client/stdio.js`);
const { CreateMessageRequestSchema, ElicitRequestSchema } = await import(`${sdk}/dist/esm/types.js`);

const say = (event, data) => console.log(JSON.stringify({ event, ...data }));
const [target, ...rest] = process.argv.slice(2);
const transport = target.startsWith("http")
	? new StreamableHTTPClientTransport(new URL(target))
	: new StdioClientTransport({ command: target, args: rest, stderr: "ignore" });
const calls = JSON.parse(process.env.TOOLC_TS_CALLS);
const timed = Number(process.env.TOOLC_TS_TIMED ?? "0");

const client = new Client({ name: "toolc-ts-upstream", version: "1" }, { capabilities: { sampling: {}, elicitation: {} } });
client.setRequestHandler(CreateMessageRequestSchema, () => ({
	role: "assistant", model: "ts-model", content: { type: "text", text: "sampled by the TypeScript client" },
}));
client.setRequestHandler(ElicitRequestSchema, () => ({ action: "decline" }));
const text = (res) => res.content.map((c) => c.text ?? "").join("");

try {
	await client.connect(transport);
	for (const [name, args] of calls) {
		const res = await client.callTool({ name, arguments: args });
		say("called", { name, text: text(res), isError: !!res.isError });
	}
	const took = [];
	for (let i = 0; i < timed; i++) {
		const start = process.hrtime.bigint();
		const res = await client.callTool({ name: calls[0][0], arguments: calls[0][1] });
		took.push(Number(process.hrtime.bigint() - start) / 1000);
		if (res.isError) throw new Error(`timed call ${i}: ${text(res)}`);
	}
	took.sort((a, b) => a - b);
	say("timed", { n: timed, p50: took[Math.floor(timed / 2)] ?? 0, p90: took[Math.floor(timed * 0.9)] ?? 0 });
	await client.close();
} catch (err) {
	say("error", { message: String(err?.stack ?? err) });
	process.exitCode = 1;
}
