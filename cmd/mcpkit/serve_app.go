package main

import (
	"context"
	"math/rand/v2"

	"github.com/mcpkit/mcpkit/ext/apps"
	"github.com/mcpkit/mcpkit/mcp"
	"github.com/mcpkit/mcpkit/server"
)

// The demo's MCP App (io.modelcontextprotocol/ui): the roll tool rolls
// dice, and hosts that render views show its result in the dice view.

const diceViewURI = "ui://mcpkit-demo/dice"

// diceView shows the latest roll. It needs no network (no CSP domains):
// the host hands it the tool result (ui/notifications/tool-result), and
// its button rolls again through the host (tools/call over the bridge).
// It speaks the MCP Apps postMessage protocol by hand, without the SDK:
// ui/initialize, then ui/notifications/initialized.
const diceView = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Dice</title>
<style>body{font:16px system-ui;margin:1em}#dice{font-size:3em;letter-spacing:.2em}</style>
</head><body>
<div id="dice">…</div><div id="total"></div>
<button id="again" disabled>Roll again</button> <span id="status"></span>
<script>
const faces = ["⚀","⚁","⚂","⚃","⚄","⚅"];
let id = 0;
const pending = new Map();
function request(method, params) {
  return new Promise((resolve, reject) => {
    pending.set(++id, {resolve, reject});
    window.parent.postMessage({jsonrpc: "2.0", id, method, params}, "*");
  });
}
function show(r) {
  r = r || {};
  document.getElementById("dice").textContent = (r.rolls || []).map((n) => faces[n - 1]).join(" ");
  document.getElementById("total").textContent = "total " + r.total;
}
window.addEventListener("message", (e) => {
  if (e.source !== window.parent) return;
  const m = e.data || {};
  if (m.id !== undefined && pending.has(m.id)) {
    const p = pending.get(m.id);
    pending.delete(m.id);
    if (m.error) p.reject(new Error(m.error.message)); else p.resolve(m.result);
    return;
  }
  if (m.method === "ui/notifications/tool-result") show(m.params && m.params.structuredContent);
});
document.getElementById("again").addEventListener("click", async () => {
  const status = document.getElementById("status");
  try {
    const r = await request("tools/call", {name: "roll", arguments: {dice: 3}});
    show(r.structuredContent);
    status.textContent = "rolled again";
  } catch (err) {
    status.textContent = "error: " + err.message;
  }
});
request("ui/initialize", {appInfo: {name: "mcpkit-dice", version: "1.0.0"}, appCapabilities: {}, protocolVersion: "2026-01-26"})
  .then(() => {
    window.parent.postMessage({jsonrpc: "2.0", method: "ui/notifications/initialized", params: {}}, "*");
    document.getElementById("again").disabled = false;
  });
</script>
</body></html>
`

type rollIn struct {
	Dice int `json:"dice,omitzero" jsonschema:"minimum=1,maximum=10,description=How many dice (default 2)."`
}

type rollOut struct {
	Rolls []int `json:"rolls"`
	Total int   `json:"total"`
}

// addDemoApp registers the dice view and the roll tool linked to it; the
// view advertises the extension in both eras.
func addDemoApp(s *server.Server) error {
	prefersBorder := true
	if err := apps.AddResource(s, &apps.Resource{
		URI: diceViewURI, Name: "dice", Description: "Shows a roll of the dice.", HTML: diceView,
		Meta: apps.ResourceMeta{PrefersBorder: &prefersBorder},
	}); err != nil {
		return err
	}
	tool := &mcp.Tool{Name: "roll", Description: "Rolls dice (shown in the dice view by hosts that render MCP Apps)."}
	if err := apps.Link(tool, diceViewURI); err != nil {
		return err
	}
	return server.AddTool(s, tool, func(_ context.Context, _ *server.CallToolRequest, in rollIn) (rollOut, error) {
		if in.Dice == 0 {
			in.Dice = 2
		}
		out := rollOut{Rolls: make([]int, in.Dice)}
		for i := range out.Rolls {
			out.Rolls[i] = rand.IntN(6) + 1
			out.Total += out.Rolls[i]
		}
		return out, nil // structuredContent, which the view shows
	})
}
