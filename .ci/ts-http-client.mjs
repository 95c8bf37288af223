// A TypeScript-SDK MCP client driving `mailgate serve --http` over Streamable
// HTTP with the bearer token, as agent-mail's HTTP clients do: list the tools,
// call one, print one JSON line on stdout.
// Usage: node .ci/ts-http-client.mjs http://127.0.0.1:PORT/mcp/ TOKEN TOOL [ARGS_JSON]
// An empty TOKEN sends no Authorization header (a server started with
// AGENT_MAIL_HTTP_AUTH=none).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, tool, argsJSON] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
});
const client = new Client({ name: "ts-http-client", version: "0.0.1" });
await client.connect(transport);

let tools;
try {
  tools = (await client.listTools()).tools.map((t) => t.name);
} catch (e) {
  tools = { thrown: String(e) };
}
const result = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON ?? "{}") });
console.log(JSON.stringify({ sessionId: transport.sessionId ?? null, tools, result }));
// Ends the session with DELETE, so the server frees it at once.
await transport.terminateSession();
await client.close();
