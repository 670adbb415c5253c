// The page of mcpkit app: lists the server's tools with a view, renders
// the chosen one in the sandbox proxy (second origin) and bridges it to
// the server with the MCP Apps SDK's AppBridge, whose requests go to the
// mcpkit process (/api/...), which relays them through its client.
// window.mcpkitApp.events records what happened, for people and tests.
import { AppBridge, PostMessageTransport } from "/bridge.js";

const state = (window.mcpkitApp = { events: [], open });
const $ = (id) => document.getElementById(id);

function note(kind, detail) {
  state.events.push({ kind, detail });
  const li = document.createElement("li");
  li.textContent = kind + (detail === undefined ? "" : " " + (typeof detail === "string" ? detail : JSON.stringify(detail)));
  if (kind === "error") li.className = "error";
  $("log").append(li);
}

async function api(path, body) {
  const init = body === undefined ? {} : { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) };
  const r = await fetch(path, init);
  const j = await r.json();
  if (!r.ok || j.error) {
    const e = new Error((j.error && j.error.message) || r.statusText);
    e.code = j.error && j.error.code;
    throw e;
  }
  return j;
}

let current = null; // { bridge, frame }

async function open(name, args) {
  if (current) {
    const old = current;
    current = null;
    // The view may answer late or never: its teardown gets a second.
    const gone = new Promise((resolve) => setTimeout(resolve, 1000));
    try { await Promise.race([old.bridge.teardownResource({}), gone]); } catch { /* the view may be gone */ }
    await old.bridge.close();
    old.frame.remove();
  }
  $("hint")?.remove();
  note("open", name);
  let v;
  try {
    v = await api("/api/view", { tool: name });
  } catch (e) {
    note("error", e.message);
    return;
  }
  note("view", { uri: v.uri, policy: v.policy });
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", v.proxySandbox);
  if (v.allow) frame.setAttribute("allow", v.allow);
  if (v.prefersBorder === false) frame.className = "borderless";
  frame.title = v.uri;
  frame.src = v.sandbox;
  $("stage").append(frame);

  const bridge = new AppBridge(
    null,
    { name: "mcpkit app", version: "0.1.0" },
    { serverTools: {}, serverResources: {}, logging: {}, openLinks: {} },
    { hostContext: { theme: "light", displayMode: "inline", availableDisplayModes: ["inline"], platform: "web" } },
  );
  current = { bridge, frame };
  bridge.oncalltool = async (params) => {
    note("view-call", { name: params.name, arguments: params.arguments });
    try {
      const r = await api("/api/call", params);
      note("view-result", r);
      return r;
    } catch (e) {
      note("view-call-error", e.message);
      throw e;
    }
  };
  bridge.onreadresource = async (params) => api("/api/read", params);
  bridge.onlistresources = async (params) => api("/api/resources", params || {});
  bridge.onopenlink = async ({ url }) => {
    note("open-link", url); // shown, not followed: a preview opens nothing
    return {};
  };
  bridge.onmessage = async (params) => {
    note("message", params);
    return {};
  };
  bridge.addEventListener("loggingmessage", (p) => note("log", p.data));
  bridge.addEventListener("sizechange", ({ height }) => {
    if (height) frame.style.height = Math.ceil(height) + "px";
  });
  bridge.addEventListener("sandboxready", () => {
    bridge.sendSandboxResourceReady({ html: v.html, csp: v.csp, permissions: v.permissions });
  });
  bridge.addEventListener("initialized", async () => {
    note("initialized", name);
    await bridge.sendToolInput({ arguments: args });
    try {
      const r = await api("/api/call", { name, arguments: args });
      note("tool-result", r);
      await bridge.sendToolResult(r);
    } catch (e) {
      note("error", e.message);
      await bridge.sendToolCancelled({ reason: e.message });
    }
  });
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
}

function parseArgs() {
  try {
    const a = JSON.parse($("args").value || "{}");
    if (a && typeof a === "object" && !Array.isArray(a)) return a;
  } catch { /* reported below */ }
  note("error", "the arguments are not a JSON object");
  return null;
}

async function main() {
  let list;
  try {
    list = await api("/api/tools");
  } catch (e) {
    note("error", e.message);
    return;
  }
  for (const t of list.tools) {
    const li = document.createElement("li");
    const b = document.createElement("button");
    b.textContent = t.title || t.name;
    b.title = (t.description || "") + " (" + t.resourceUri + ")";
    b.dataset.tool = t.name;
    b.addEventListener("click", () => {
      const args = parseArgs();
      if (args) open(t.name, args);
    });
    li.append(b);
    $("tools").append(li);
  }
  if (list.tools.length === 0) note("error", "the server has no tool with a ui:// view");
  note("tools", list.tools.map((t) => t.name));
  // ?tool=NAME&args=JSON opens a view at once (a bookmark, a test).
  const q = new URLSearchParams(location.search);
  if (q.get("args")) $("args").value = q.get("args");
  if (q.get("tool")) {
    const args = parseArgs();
    if (args) await open(q.get("tool"), args);
  }
}

main();
