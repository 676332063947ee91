// Renders an MCP server's app in headless Chromium through the official AppBridge, as a host
// would: lists the tools, takes the first one with a UI (`_meta.ui.resourceUri`), reads its
// `ui://` resource (`text/html;profile=mcp-app`), calls the tool, renders the HTML in a
// sandboxed iframe, sends it the tool's input and result, then clicks a button of the view
// that calls a tool back through the host. Checks each step; screenshots go to OUT_DIR.
//
// The host applies the view's Content Security Policy, built from the resource's
// `_meta.ui.csp` (see host-page.js), resizes the view's frame to the height the view reports
// (`ui/notifications/size-changed`), and records the view's `ui/message` and `ui/open-link`
// (answering them, opening nothing).
//
// usage: node host.mjs --url http://127.0.0.1:PORT/mcp | --stdio CMD ARGS...
// env: CHROMIUM (default: chromium), OUT_DIR (default: .), APP_CLICK (a CSS selector to
// click in the view), APP_EXPECT_TEXT (text the view shows after the tool result),
// APP_EXPECT_AFTER_CLICK (text the view shows after the click's tool call),
// APP_MESSAGE_CLICK + APP_EXPECT_MESSAGE (a button that sends `ui/message`, and its params as
// JSON, exactly), APP_LINK_CLICK + APP_EXPECT_LINK (a button that sends `ui/open-link`, and
// its URL), APP_RESIZE_CLICK (a button that makes the view taller: the view must report its
// new height and the host's frame must take it), APP_EXPECT_CSP (the resource's
// `_meta.ui.csp`, as JSON, exactly), APP_CSP_PROBE=1 (the view's CSP lets a fetch to
// http://127.0.0.1:PORT through and blocks one to http://localhost:PORT, which the view
// reports as a CSP violation).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import * as esbuild from "esbuild";
import puppeteer from "puppeteer-core";
import { existsSync, mkdirSync } from "node:fs";
import http from "node:http";
import { isDeepStrictEqual } from "node:util";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const out = process.env.OUT_DIR ?? ".";
const name = process.env.APP_NAME ?? "app";
mkdirSync(out, { recursive: true });

// Each step that holds is a passed check; the first that does not ends the run. The last
// line is the `N passed, M failed` summary that `cargo xtask interop` reads.
let passed = 0;
function fail(message) {
  console.error(`apps host: FAIL: ${message}`);
  console.log(`${passed} passed, 1 failed`);
  process.exit(1);
}
function step(message) {
  passed += 1;
  console.log(`apps host: ok: ${message}`);
}

const transport =
  args[0] === "--url"
    ? new StreamableHTTPClientTransport(new URL(args[1]))
    : args[0] === "--stdio"
      ? new StdioClientTransport({ command: args[1], args: args.slice(2), stderr: "inherit" })
      : fail("usage: host.mjs --url URL | --stdio CMD ARGS...");
const client = new Client(
  { name: "mcp-rust-apps-host-test", version: "1.0.0" },
  {
    capabilities: {
      extensions: { "io.modelcontextprotocol/ui": { mimeTypes: ["text/html;profile=mcp-app"] } },
    },
  },
);
await client.connect(transport).catch((e) => fail(`connecting: ${e}`));
const { tools } = await client.listTools();
const uiOf = (tool) => tool._meta?.ui?.resourceUri ?? tool._meta?.["ui/resourceUri"];
const tool = tools.find((t) => uiOf(t) && (!process.env.APP_TOOL || t.name === process.env.APP_TOOL));
if (!tool) fail(`no tool with a UI among ${tools.map((t) => t.name).join(", ")}`);
const uri = uiOf(tool);
step(`tool ${tool.name} has the UI ${uri}`);
const read = await client.readResource({ uri });
const content = read.contents[0];
if (content.mimeType !== "text/html;profile=mcp-app") fail(`${uri} is ${content.mimeType}`);
if (typeof content.text !== "string" || !content.text.includes("<")) fail(`${uri} holds no HTML`);
step(`read ${uri}: ${content.text.length} bytes of ${content.mimeType}`);
const declaredCsp = content._meta?.ui?.csp;
if (process.env.APP_EXPECT_CSP) {
  const expected = JSON.parse(process.env.APP_EXPECT_CSP);
  if (!isDeepStrictEqual(declaredCsp, expected)) {
    fail(`${uri} declares the CSP ${JSON.stringify(declaredCsp)}, not ${JSON.stringify(expected)}`);
  }
  step(`${uri} declares its CSP: ${JSON.stringify(declaredCsp)}`);
}
const input = JSON.parse(process.env.APP_INPUT ?? "{}");
const result = await client.callTool({ name: tool.name, arguments: input });
step(`called ${tool.name}: ${JSON.stringify(result).slice(0, 200)}`);

const bundle = await esbuild.build({
  entryPoints: [path.join(here, "host-page.js")],
  bundle: true,
  write: false,
  format: "iife",
  platform: "browser",
  logLevel: "error",
});
const page_js = bundle.outputFiles[0].text;

// Puppeteer wants a path: a bare command name is looked up on PATH.
const chromium = process.env.CHROMIUM ?? "chromium";
const executablePath = chromium.includes("/")
  ? chromium
  : ((process.env.PATH ?? "").split(":").map((d) => path.join(d, chromium)).find((p) => existsSync(p)) ??
    fail(`${chromium} is not on PATH`));
const browser = await puppeteer.launch({
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
}).catch((e) => fail(`starting ${executablePath}: ${e.message}`));
const timeout = 30_000;
try {
  const page = await browser.newPage();
  page.setDefaultTimeout(timeout);
  await page.setViewport({ width: 700, height: 560 });
  page.on("console", (m) => m.type() !== "debug" && console.log(`apps host: [page ${m.type()}] ${m.text()}`));
  page.on("pageerror", (e) => console.log(`apps host: [page error] ${e.message}`));
  // The view's tools/call, answered by the MCP client here: each answer resolves `answered`.
  let answered = () => {};
  await page.exposeFunction("hostCallTool", async (params) => {
    const result = await client.callTool(params);
    answered({ params, result });
    return result;
  });
  await page.setContent(
    `<!doctype html><html><head><meta charset="utf-8"><title>MCP Apps host</title></head>` +
      `<body style="font-family: sans-serif; margin: 16px"><h3 style="margin: 0 0 8px">` +
      `A host (the official AppBridge) rendering <code>${uri}</code></h3>` +
      `<script>${page_js}</script></body></html>`,
  );
  await page.evaluate((params) => window.startHost(params), {
    html: content.text,
    csp: declaredCsp,
    input,
    result,
    border: content._meta?.ui?.prefersBorder ?? true,
  });
  const events = () => page.evaluate(() => window.hostEvents);
  const initialized = (await events()).find((e) => e.kind === "app");
  step(`the view initialized: ${JSON.stringify(initialized.params.version)}`);
  const applied = (await events()).find((e) => e.kind === "csp").params;
  if (!isDeepStrictEqual(applied.declared, declaredCsp ?? null)) fail(`the host applied ${JSON.stringify(applied)}`);
  step(`the host applied the CSP built from the resource's: ${applied.policy}`);
  // The first event of `kind` the host records after the `from`th, with its index.
  const nextEvent = async (kind, from, what) => {
    try {
      const handle = await page.waitForFunction(
        (kind, from) => {
          const i = window.hostEvents.findIndex((e, i) => i >= from && e.kind === kind);
          return i >= 0 && { index: i, params: window.hostEvents[i].params };
        },
        { timeout },
        kind,
        from,
      );
      return await handle.jsonValue();
    } catch {
      fail(`${what}: the host received no ${kind}; it saw ${(await events()).map((e) => e.kind).join(", ")}`);
    }
  };
  const frame = await (await page.$("iframe#app")).contentFrame();
  const waitText = async (text, what) => {
    try {
      await frame.waitForFunction((t) => document.body && document.body.innerText.includes(t), { timeout }, text);
    } catch {
      const shown = await frame.evaluate(() => document.body?.innerText ?? "");
      fail(`${what}: the view never showed "${text}"; it shows: ${shown.slice(0, 500)}`);
    }
  };
  if (process.env.APP_EXPECT_TEXT) {
    await waitText(process.env.APP_EXPECT_TEXT, "the tool result");
    step(`the view shows the tool result ("${process.env.APP_EXPECT_TEXT}")`);
  }
  await page.screenshot({ path: path.join(out, `${name}-result.png`) });
  if (process.env.APP_CLICK) {
    const next = new Promise((resolve, reject) => {
      answered = resolve;
      setTimeout(() => reject(new Error("the click made the view call no tool")), timeout);
    });
    await frame.click(process.env.APP_CLICK);
    const call = await next.catch((e) => fail(e.message));
    if (call.result.isError) fail(`the view's call failed: ${JSON.stringify(call)}`);
    step(`the view called back through the host: ${JSON.stringify(call.params)} -> ${JSON.stringify(call.result).slice(0, 200)}`);
    if (process.env.APP_EXPECT_AFTER_CLICK) {
      await waitText(process.env.APP_EXPECT_AFTER_CLICK, "the view's tool call");
      step(`the view shows its call's result ("${process.env.APP_EXPECT_AFTER_CLICK}")`);
    }
    await page.screenshot({ path: path.join(out, `${name}-after-click.png`) });
  }
  if (process.env.APP_MESSAGE_CLICK) {
    const from = (await events()).length;
    await frame.click(process.env.APP_MESSAGE_CLICK);
    const { params } = await nextEvent("ui/message", from, "the view's message");
    const expected = JSON.parse(process.env.APP_EXPECT_MESSAGE ?? "null");
    if (!isDeepStrictEqual(params, expected)) {
      fail(`the host received the message ${JSON.stringify(params)}, not ${JSON.stringify(expected)}`);
    }
    step(`the host received the view's ui/message: ${JSON.stringify(params)}`);
  }
  if (process.env.APP_LINK_CLICK) {
    const from = (await events()).length;
    const before = [page.url(), (await browser.pages()).length];
    await frame.click(process.env.APP_LINK_CLICK);
    const { params } = await nextEvent("ui/open-link", from, "the view's link");
    if (params.url !== process.env.APP_EXPECT_LINK) {
      fail(`the host was asked to open ${JSON.stringify(params.url)}, not ${process.env.APP_EXPECT_LINK}`);
    }
    if (!isDeepStrictEqual([page.url(), (await browser.pages()).length], before)) fail("the link was opened");
    step(`the host received the view's ui/open-link (and opened nothing): ${params.url}`);
  }
  if (process.env.APP_RESIZE_CLICK) {
    const sizes = (await events()).filter((e) => e.kind === "ui/notifications/size-changed");
    if (sizes.length === 0) fail("the view never reported its size");
    const height = () => page.evaluate(() => document.getElementById("app").clientHeight);
    const first = sizes.at(-1).params.height;
    if ((await height()) !== first) fail(`the view reported the height ${first}; its frame is ${await height()}`);
    const from = (await events()).length;
    await frame.click(process.env.APP_RESIZE_CLICK);
    const { params } = await nextEvent("ui/notifications/size-changed", from, "the view grown");
    if (!(params.height > first)) fail(`the view grew, and reported ${JSON.stringify(params)} after ${first}`);
    if ((await height()) !== params.height) fail(`the view reported ${params.height}; its frame is ${await height()}`);
    // The view's own viewport takes the new height (the frame's layout may take a frame).
    await frame
      .waitForFunction((h) => window.innerHeight === h, { timeout }, params.height)
      .catch(async () => fail(`the view's viewport is ${await frame.evaluate(() => window.innerHeight)}, not ${params.height}`));
    step(`the view reported its height ${first}, then ${params.height} after ${process.env.APP_RESIZE_CLICK}; the host's frame took each`);
    await page.screenshot({ path: path.join(out, `${name}-resized.png`) });
  }
  if (process.env.APP_CSP_PROBE) {
    // A local server that answers anyone (CORS `*`): only the view's CSP can keep a fetch out.
    const reached = [];
    const probe = http.createServer((req, res) => {
      reached.push(`${req.headers.host}${req.url}`);
      res.writeHead(200, { "access-control-allow-origin": "*", "content-type": "text/plain" });
      res.end("probe ok");
    });
    await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const port = probe.address().port;
    const fetchInView = (url) =>
      frame.evaluate(async (url) => {
        try {
          const response = await fetch(url);
          return { ok: response.ok, text: await response.text() };
        } catch (e) {
          return { ok: false, error: String(e) };
        }
      }, url);
    try {
      const declared = await fetchInView(`http://127.0.0.1:${port}/declared`);
      if (!declared.ok || declared.text !== "probe ok") fail(`the view's fetch to a declared origin: ${JSON.stringify(declared)}`);
      const from = (await events()).length;
      const undeclared = await fetchInView(`http://localhost:${port}/undeclared`);
      if (undeclared.ok) fail(`the view's fetch to an undeclared origin went through: ${JSON.stringify(undeclared)}`);
      const { params } = await nextEvent("notifications/message", from, "the CSP violation the view reports");
      const violation = params.data ?? {};
      if (!String(violation.blockedURI).startsWith(`http://localhost:${port}`) || violation.violatedDirective !== "connect-src") {
        fail(`the view reported ${JSON.stringify(params)}`);
      }
      if (reached.some((r) => r.includes("/undeclared"))) fail(`the undeclared fetch reached the server: ${reached}`);
      await waitText("Blocked by the host's CSP", "the CSP violation");
      step(`the view's CSP let a fetch to http://127.0.0.1:${port} through and blocked one to http://localhost:${port} (connect-src), which the view reported`);
    } finally {
      probe.close();
    }
    await page.screenshot({ path: path.join(out, `${name}-csp.png`) });
  }
  console.log(`apps host: the host saw: ${(await events()).map((e) => e.kind).join(", ")}`);
} catch (e) {
  fail(`${e?.stack ?? e}`);
} finally {
  await browser.close();
  await client.close();
}
console.log(`${passed} passed, 0 failed`);
process.exit(0);
