// A TypeScript SDK v2 (@modelcontextprotocol/server) skills server over
// stdio, both eras (serveStdio picks the era from the opening exchange):
// one skill, git-flow, with SKILL.md and references/commits.md, from an
// in-memory catalog (SkillsExtension, ext/skills). The texts are those
// tsskills.go's tests expect.
//
// node tsskills_server.mjs <peers dir>
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [peers] = process.argv.slice(2);
const load = (sub) => import(pathToFileURL(join(peers, 'node_modules/@modelcontextprotocol/server/dist', sub)).href);
const { McpServer } = await load('index.mjs');
const { serveStdio } = await load('stdio.mjs');
const { SkillsExtension, memorySkillFiles } = await load('ext/skills/index.mjs');

const catalog = await SkillsExtension.load(memorySkillFiles({
  'git-flow/SKILL.md': '---\nname: git-flow\ndescription: Branch and commit the team\'s way\n---\n\n# Git flow\n\nSee references/commits.md.\n',
  'git-flow/references/commits.md': '# Commits\n\nImperative mood, 72 characters.\n',
}), { strict: true, onWarning: (w) => console.error(`warning: ${w.path}: ${w.message}`) });

serveStdio(() => {
  const server = new McpServer({ name: 'ts-skills', version: '1.0.0' }, { capabilities: { resources: {} } });
  catalog.attach(server);
  return server;
});
