// Package skills implements the Skills extension,
// io.modelcontextprotocol/skills (SEP-2640): servers publish Agent
// Skills — directories of files with a SKILL.md at the root — as
// skill:// resources, enumerate them with skills/list, answer skills/get
// for one skill and list a skill's directories with
// resources/directory/read; hosts list skills, fetch a skill's files
// only when needed, and verify each against the entry's digest, size
// and frontmatter.
//
// The wire (wire.go): the extension id, the method names, the entry
// (Skill: uri, frontmatter, resources — a manifest of files with their
// sha256 digest and size, or "dynamic"), the request and result types.
// The rules (uri.go, frontmatter.go, rules.go): the URI shape
// <scheme>://<skill-path>/SKILL.md, the clean relative paths that keep a
// file inside its skill, the Agent Skills naming rules, the SKILL.md
// frontmatter parser (YAML, through go.yaml.in/yaml/v3, to a JSON
// object; anchors, aliases and custom tags refused) and Diff, the
// field-by-field comparison a host runs before it loads a skill. A
// broken rule is a *RuleError naming the skill, the file and the Rule.
//
// The server (server.go, serve.go): NewServer declares the extension
// on a server.Server and answers its methods; AddFS and AddSkill
// register skills from an fs.FS, read, checked against the rules and
// the limits of Options, and digested once; Remove unregisters them.
//
// Package skills imports server, client, mcp and jsonrpc (its Error):
// the public API; and the YAML parser. See docs/design/skills.md.
package skills
