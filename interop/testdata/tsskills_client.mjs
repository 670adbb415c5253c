// The TypeScript SDK v2's skills client (@modelcontextprotocol/client,
// ext/skills SkillsClient) against an MCP endpoint: lists the skills,
// gets the one named by its SKILL.md URI, reads its SKILL.md and every
// listed file (each verified by the SDK against the entry's size, digest
// and frontmatter), and prints one JSON line: the negotiated revision,
// whether the server declared the extension, the listed URIs, the entry
// got, and each file read with its verification flag.
//
// node tsskills_client.mjs <peers dir> <url> <legacy|2026-07-28> <skill URI>
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [peers, url, mode, skillURI] = process.argv.slice(2);
const load = (sub) => import(pathToFileURL(join(peers, 'node_modules/@modelcontextprotocol/client/dist', sub)).href);
const { Client, StreamableHTTPClientTransport } = await load('index.mjs');
const { SkillsClient } = await load('ext/skills/index.mjs');

const options = {};
if (mode !== 'legacy') {
  options.versionNegotiation = { mode: { pin: mode } };
}
const client = new Client({ name: 'mcpkit-interop-ts-skills', version: '1.0.0' }, options);
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const skills = new SkillsClient(client);
  const listing = await skills.list();
  const { skill } = await skills.get(skillURI);
  const files = [];
  const md = await skills.read(skill);
  files.push({ uri: md.uri, verified: md.verified, text: md.text, frontmatter: md.frontmatter });
  for (const r of skill.resources) {
    if (r.uri === skill.uri) continue;
    const f = await skills.read(skill, r.uri);
    files.push({ uri: f.uri, verified: f.verified, text: f.text ?? new TextDecoder().decode(f.bytes) });
  }
  console.log(JSON.stringify({
    protocolVersion: client.getNegotiatedProtocolVersion(),
    supported: skills.supported,
    directoryRead: skills.directoryRead,
    listed: listing.skills.map((s) => s.uri),
    skill,
    files,
  }));
  await client.close();
} catch (err) {
  console.error(err && err.stack ? err.stack : String(err));
  process.exit(1);
}
