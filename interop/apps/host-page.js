// The host page: the official AppBridge of @modelcontextprotocol/ext-apps, in a browser,
// rendering an MCP App's HTML in a sandboxed iframe and carrying the view protocol over
// postMessage. The MCP client lives in Node (host.mjs): the view's tools/call reaches it
// through `window.hostCallTool`, which host.mjs exposes to the page.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.hostEvents = [];
const record = (kind, params) => window.hostEvents.push({ kind, params });

// The view's Content Security Policy, built from its resource's `_meta.ui.csp` as the
// specification says (ext-apps' `McpUiResourceCsp`; the package ships no builder): nothing
// but the view's own inline code and data: URIs, plus the origins it declared
// (`connectDomains` for fetch/XHR/WebSocket, none without; `resourceDomains` for scripts,
// styles, images, fonts and media; `frameDomains`, none without; `baseUriDomains`, the
// view's own without). A declared entry that could break out of its directive (a space,
// `;`, a quote, a comma) is dropped.
const cspOf = (csp) => {
  const origins = (list) =>
    (Array.isArray(list) ? list : []).filter((d) => typeof d === "string" && /^[^\s;,'"]+$/.test(d)).join(" ");
  const resources = origins(csp?.resourceDomains);
  const connects = origins(csp?.connectDomains);
  const frames = origins(csp?.frameDomains);
  const bases = origins(csp?.baseUriDomains);
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${resources}`,
    `style-src 'self' 'unsafe-inline' ${resources}`,
    `img-src 'self' data: ${resources}`,
    `font-src 'self' data: ${resources}`,
    `media-src 'self' data: ${resources}`,
    `connect-src ${connects || "'none'"}`,
    `frame-src ${frames || "'none'"}`,
    "object-src 'none'",
    `base-uri ${bases || "'self'"}`,
  ]
    .map((d) => d.trim())
    .join("; ");
};
// The policy goes first in the document, before any of the view's own markup can run.
const withCsp = (html, policy) => {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy.replaceAll('"', "&quot;")}">`;
  const head = /<head(\s[^>]*)?>/i.exec(html);
  return head ? html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length) : meta + html;
};

window.startHost = async ({ html, csp, input, result, border }) => {
  const iframe = document.createElement("iframe");
  iframe.id = "app";
  iframe.setAttribute("sandbox", "allow-scripts allow-forms");
  iframe.style.cssText = `width: 640px; height: 480px; border: ${border ? "1px solid #999" : "none"};`;
  document.body.appendChild(iframe);
  const bridge = new AppBridge(
    null,
    { name: "mcp-rust-apps-host-test", version: "1.0.0" },
    { openLinks: {}, serverTools: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline", platform: "web" } },
  );
  bridge.oncalltool = async (params) => {
    record("tools/call", params);
    return await window.hostCallTool(params);
  };
  bridge.onmessage = async (params) => {
    record("ui/message", params);
    return {};
  };
  bridge.onopenlink = async (params) => {
    record("ui/open-link", params);
    return {};
  };
  bridge.onloggingmessage = (params) => record("notifications/message", params);
  bridge.onsizechange = (params) => {
    record("ui/notifications/size-changed", params);
    if (params.height) iframe.style.height = `${params.height}px`;
  };
  const initialized = new Promise((resolve) => {
    bridge.oninitialized = () => {
      record("ui/notifications/initialized", {});
      resolve();
    };
  });
  // The transport listens before the view loads: the view's first message is ui/initialize.
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  const policy = cspOf(csp);
  record("csp", { declared: csp ?? null, policy });
  iframe.srcdoc = withCsp(html, policy);
  await initialized;
  record("app", { version: bridge.getAppVersion(), capabilities: bridge.getAppCapabilities() });
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
  record("sent", {});
};
