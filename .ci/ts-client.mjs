// A TypeScript-SDK MCP client (the SDK Claude Desktop's ecosystem uses) driving
// mailgate over stdio: list the tools, call search_email, print one JSON line.
// Usage: node .ci/ts-client.mjs /abs/path/to/mailgate /abs/home
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, home] = process.argv.slice(2);
const transport = new StdioClientTransport({
  command: bin,
  args: ["serve", "--sandbox"],
  stderr: "ignore",
  // Like Claude Desktop: a thin environment, everything else passed explicitly.
  env: { PATH: process.env.PATH ?? "", MAILGATE_HOME: home, MAILGATE_TOOLS: "email" },
});
const client = new Client({ name: "ts-sdk-client", version: "0.0.1" });
await client.connect(transport);
const { tools } = await client.listTools();
const search = await client.callTool({ name: "search_email", arguments: { query: "invoice", max_results: 3 } });
let badArgs;
try {
  badArgs = await client.callTool({ name: "search_email", arguments: { query: "x", max_results: 500 } });
} catch (e) {
  badArgs = { thrown: String(e) };
}
console.log(JSON.stringify({
  protocolVersion: client.getServerVersion() ? "ok" : "none",
  tools: tools.map((t) => ({ name: t.name, annotations: t.annotations })),
  search,
  badArgs,
}));
await client.close();
