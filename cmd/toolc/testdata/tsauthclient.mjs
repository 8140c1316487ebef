// tsauthclient.mjs drives the official TypeScript MCP SDK client, with its
// OAuth client credentials provider, against toolc serve --auth-issuer, for
// cmd/toolc's TestAuthServer: argv is the MCP URL, the client ID, its
// secret, the expected issuer and the scopes to ask for (the provider asks
// for those it was configured with, not the challenge's). The client starts without a token and
// finds the authorization server through the 401's resource_metadata. It
// lists the tools, calls write_note and read_note (which its scopes do not
// allow), and prints one JSON line with what it saw.
// TOOLC_TS_SDK is the directory of the @modelcontextprotocol/sdk package.
const sdk = process.env.TOOLC_TS_SDK;
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const { ClientCredentialsProvider } = await import(`${sdk}/dist/esm/client/auth-extensions.js`);

const [url, clientId, clientSecret, expectedIssuer, scope] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer, scope });
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider });
const client = new Client({ name: "toolc-ts-oauth-test", version: "1" });
const text = (res) => res.content.map((c) => c.text ?? "").join("");

const log = (m) => process.stderr.write(m + "\n");
const origFetch = globalThis.fetch;
// TOOLC_TS_DEBUG logs every HTTP exchange on stderr.
if (process.env.TOOLC_TS_DEBUG) globalThis.fetch = async (u, init) => { const r = await origFetch(u, init); log(`${init?.method ?? "GET"} ${u} ${init?.body ?? ""} -> ${r.status} ${r.headers.get("www-authenticate") ?? ""}`); return r; };
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const wrote = text(await client.callTool({ name: "notes_write_note", arguments: { id: "ts1" } }));
let readError = "";
try {
	const res = await client.callTool({ name: "notes_read_note", arguments: { id: "ts1" } });
	readError = res.isError ? "isError: " + text(res) : "";
} catch (err) {
	readError = String(err?.message ?? err);
}
console.log(JSON.stringify({ tools, wrote, readError }));
await client.close();
