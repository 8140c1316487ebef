// tsdeferred.mjs drives the official TypeScript MCP SDK client against a
// toolc server whose catalog defers most of its tools, for mcpserver's
// TestDeferredCorpus: it lists the tools, calls toolc_search_tools with a
// query, then calls a deferred tool, which tools/list did not show, by its
// MCP name. It prints one JSON object on stdout.
//
//	node tsdeferred.mjs SDK URL QUERY TOOL ARGUMENTS
//
// SDK is the directory of the @modelcontextprotocol/sdk package; ARGUMENTS
// is the deferred tool's arguments as a JSON object.
const [sdk, url, query, tool, args] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);

const client = new Client({ name: "toolc-ts-deferred", version: "1" });
try {
	await client.connect(new StreamableHTTPClientTransport(new URL(url)));
	const listed = (await client.listTools()).tools.map((t) => t.name);
	const search = await client.callTool({ name: "toolc_search_tools", arguments: { query } });
	const found = (search.structuredContent?.tools ?? []).map((t) => ({
		mcpName: t.mcpName,
		meta: t._meta ?? {},
		inputSchemaType: t.inputSchema?.type ?? "",
	}));
	const called = await client.callTool({ name: tool, arguments: JSON.parse(args) });
	console.log(JSON.stringify({
		protocol: client.transport?.protocolVersion ?? "",
		listed,
		searchError: !!search.isError,
		found,
		text: called.content.map((c) => c.text ?? "").join(""),
		isError: !!called.isError,
	}));
	await client.close();
} catch (err) {
	// The open transport would keep node running: exit, with the error.
	// (Writes to a pipe are synchronous, so the line is out.)
	console.log(JSON.stringify({ error: String(err?.stack ?? err) }));
	process.exit(1);
}
