// The MCP TypeScript SDK v2 client (`@modelcontextprotocol/client`, version
// negotiation `auto`) against `skarn serve`: lists tools, runs `execute`,
// calls a passthrough tool, reads a resource, hears a list change through
// `subscriptions/listen` and answers elicitation rounds (a tool's, a read's). Run by
// tests/python/test_ts_client.py; prints one JSON line of what it saw.
//
// usage: node client.mjs stdio SKARN CONFIG
//        node client.mjs http URL TOKEN
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const [mode, a, b] = process.argv.slice(2);
const transport =
  mode === 'stdio'
    ? new StdioClientTransport({ command: a, args: ['serve', '--config', b], stderr: 'ignore' })
    : new StreamableHTTPClientTransport(new URL(a), {
        requestInit: { headers: { Authorization: `Bearer ${b}` } },
      });

const client = new Client(
  { name: 'skarn-ts-test', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } },
);
const asked = [];
client.setRequestHandler('elicitation/create', async (request) => {
  asked.push(request.params.message);
  if (request.params.message.endsWith('Please provide context')) {
    return { action: 'accept', content: { context: 'the ts client' } };
  }
  return { action: 'accept', content: { username: 'ada', email: 'ada@example.org' } };
});
let listChanged = 0;
client.setNotificationHandler('notifications/tools/list_changed', async () => {
  listChanged += 1;
});

const text = (r) => (r.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const out = {};
await client.connect(transport);
out.version = client.getNegotiatedProtocolVersion();
out.tools = (await client.listTools()).tools.map((t) => t.name);
const ex = await client.callTool({ name: 'execute', arguments: { code: 'return await skarn.callTool("example", "add", {a: 2, b: 3})' } });
out.execute = ex.structuredContent?.value;
const echo = await client.callTool({ name: 'example__echo', arguments: { text: 'hi' } });
out.echo = text(echo);
const res = await client.readResource({ uri: 'example://readme' });
out.resource = res.contents[0].text.slice(0, 40);
const sub = await client.listen({ toolsListChanged: true });
await client.callTool({ name: 'example__add_tool', arguments: { name: 'from_ts' } });
for (let i = 0; i < 300 && listChanged === 0; i++) await new Promise((r) => setTimeout(r, 100));
out.listChanged = listChanged;
await sub.close();
out.toolsAfter = (await client.listTools({}, { cacheMode: 'refresh' })).tools.some((t) => t.name === 'example__from_ts');
const el = await client.callTool({ name: 'conformance__test_elicitation', arguments: { message: 'who are you?' } });
out.elicitation = text(el);
out.asked = asked.slice();
// A read whose server asks first: an input_required round too.
const round = await client.readResource({ uri: 'test://input-required-resource' });
out.resourceRound = round.contents[0].text;
await client.close();
console.log(JSON.stringify(out));
