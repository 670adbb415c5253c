// The sandbox proxy of mcpkit app, served on the sandbox origin under the
// view's Content Security Policy. It waits for the host's
// ui/notifications/sandbox-resource-ready, loads the view into an inner
// iframe (srcdoc: it inherits this document's policy; sandboxed without
// allow-same-origin: an opaque origin), and relays messages between the
// host page and the view, each way only. The sandbox and allow attributes
// come from this document, which mcpkit app wrote, never from a message.
(() => {
  "use strict";
  const root = document.documentElement;
  const hostOrigin = root.dataset.host;
  const host = window.parent;
  let inner = null;
  window.addEventListener("message", (e) => {
    if (e.source === host && e.origin === hostOrigin) {
      const m = e.data;
      if (m && m.method === "ui/notifications/sandbox-resource-ready") {
        if (inner) return; // one view per proxy
        const p = m.params || {};
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", root.dataset.sandbox);
        if (root.dataset.allow) inner.setAttribute("allow", root.dataset.allow);
        inner.srcdoc = typeof p.html === "string" ? p.html : "";
        document.body.appendChild(inner);
        return;
      }
      // The view's origin is opaque: "*" is the only target it matches.
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(m, "*");
      return;
    }
    if (inner && e.source === inner.contentWindow) host.postMessage(e.data, hostOrigin);
  });
  host.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin);
})();
