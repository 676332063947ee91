// The host page: the official AppBridge of @modelcontextprotocol/ext-apps, in a browser,
// rendering an MCP App's HTML in a sandboxed iframe and carrying the view protocol over
// postMessage. The MCP client lives in Node (host.mjs): the view's tools/call reaches it
// through `window.hostCallTool`, which host.mjs exposes to the page.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

window.hostEvents = [];
const record = (kind, params) => window.hostEvents.push({ kind, params });

window.startHost = async ({ html, input, result, border }) => {
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
  iframe.srcdoc = html;
  await initialized;
  record("app", { version: bridge.getAppVersion(), capabilities: bridge.getAppCapabilities() });
  await bridge.sendToolInput({ arguments: input });
  await bridge.sendToolResult(result);
  record("sent", {});
};
