// The TypeScript SDK's client (@modelcontextprotocol/client, v2) against
// an MCP endpoint: lists the tools, calls one with arguments, and calls
// one more whose server asks for input, answering its elicitation/create
// with {name: "Ada"}. Prints one JSON line: the negotiated revision, the
// tool names, the texts of both calls and the messages it was asked.
//
// node tsclient.mjs <peers dir> <url> <legacy|2026-07-28> <tool> <args JSON> <eliciting tool>
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [peers, url, mode, tool, args, elicitTool] = process.argv.slice(2);
const sdk = await import(pathToFileURL(join(peers, 'node_modules/@modelcontextprotocol/client/dist/index.mjs')).href);
const { Client, StreamableHTTPClientTransport } = sdk;

const options = { capabilities: { elicitation: { form: {} } } };
if (mode !== 'legacy') {
  options.versionNegotiation = { mode: { pin: mode } };
}
const client = new Client({ name: 'mcpkit-interop-ts', version: '1.0.0' }, options);
const asked = [];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(request.params.message);
  return { action: 'accept', content: { name: 'Ada' } };
});
const text = (res) => res.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const tools = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    tools.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  const called = await client.callTool({ name: tool, arguments: JSON.parse(args) });
  const elicited = await client.callTool({ name: elicitTool, arguments: {} });
  console.log(JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion(),
    tools,
    text: text(called),
    isError: called.isError === true,
    elicited: text(elicited),
    asked,
  }));
  await client.close();
} catch (err) {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
}
