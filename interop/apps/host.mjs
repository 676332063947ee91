// Renders an MCP server's app in headless Chromium through the official AppBridge, as a host
// would: lists the tools, takes the first one with a UI (`_meta.ui.resourceUri`), reads its
// `ui://` resource (`text/html;profile=mcp-app`), calls the tool, renders the HTML in a
// sandboxed iframe, sends it the tool's input and result, then clicks a button of the view
// that calls a tool back through the host. Checks each step; screenshots go to OUT_DIR.
//
// usage: node host.mjs --url http://127.0.0.1:PORT/mcp | --stdio CMD ARGS...
// env: CHROMIUM (default: chromium), OUT_DIR (default: .), APP_CLICK (a CSS selector to
// click in the view), APP_EXPECT_TEXT (text the view shows after the tool result),
// APP_EXPECT_AFTER_CLICK (text the view shows after the click's tool call).
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import * as esbuild from "esbuild";
import puppeteer from "puppeteer-core";
import { existsSync, mkdirSync } from "node:fs";
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
    input,
    result,
    border: content._meta?.ui?.prefersBorder ?? true,
  });
  const events = () => page.evaluate(() => window.hostEvents);
  const initialized = (await events()).find((e) => e.kind === "app");
  step(`the view initialized: ${JSON.stringify(initialized.params.version)}`);
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
  console.log(`apps host: the host saw: ${(await events()).map((e) => e.kind).join(", ")}`);
} catch (e) {
  fail(`${e?.stack ?? e}`);
} finally {
  await browser.close();
  await client.close();
}
console.log(`${passed} passed, 0 failed`);
process.exit(0);
