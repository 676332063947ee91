// `mcp web` in headless Chromium (see xtask/src/web.rs): starts `mcp web --no-open --port 0`
// with the server command line of argv, opens the URL it prints and goes through the page as
// a person would: a tool called through its generated form, the traffic log, a progress bar,
// an image, an elicitation form answered (with a `<script>` in the answer, which the tool
// result must show as text), a sampling request edited and approved. A screenshot of each
// step goes to OUT_DIR. Runs from the directory of the apps harness (its puppeteer-core).

import { spawn } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import path from "node:path";
import readline from "node:readline";
import puppeteer from "puppeteer-core";

let child;
const fail = (message) => {
  console.error(`FAIL: ${message}`);
  // mcp web (and its server) must not outlive the run: they hold its output open.
  if (child) child.kill("SIGKILL");
  process.exit(1);
};
// The whole run is bounded: a hang is a failure, not a stuck CI.
setTimeout(() => fail("the run took more than 120 s"), 120_000).unref();

const mcp = process.env.MCP_BIN ?? fail("MCP_BIN is not set");
const out = process.env.OUT_DIR ?? fail("OUT_DIR is not set");
const server = process.argv.slice(2);
if (server.length === 0) fail("usage: web.mjs SERVER_COMMAND...");
mkdirSync(out, { recursive: true });

child = spawn(mcp, ["web", "--no-open", "--port", "0", "--", ...server], { stdio: ["ignore", "inherit", "pipe"] });
child.on("exit", (code) => {
  if (!stopping) fail(`mcp web exited early (${code})`);
});
let stopping = false;
const url = await new Promise((resolve) => {
  readline.createInterface({ input: child.stderr }).on("line", (line) => {
    process.stderr.write(`[mcp web] ${line}\n`);
    const found = line.match(/^mcp web: (http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64})$/);
    if (found) resolve(found[1]);
  });
});

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
let passed = 0;
const step = async (name, run) => {
  try {
    await run();
  } catch (e) {
    await page.screenshot({ path: path.join(out, `failed-${name}.png`) }).catch(() => {});
    fail(`${name}: ${e.message}`);
  }
  await page.screenshot({ path: path.join(out, `${String(++passed).padStart(2, "0")}-${name}.png`) });
  console.log(`ok: ${name}`);
};
const page = await browser.newPage();
await page.setViewport({ width: 1400, height: 900 });
const errors = [];
page.on("pageerror", (e) => errors.push(e.message));
page.on("console", (m) => {
  if (m.type() === "error") errors.push(m.text());
});

// Selects a tool by searching for it, and fills its form's fields (data-field = arg.NAME).
const chooseTool = async (name) => {
  await page.$eval("#tool-search", (e) => { e.value = ""; });
  await page.type("#tool-search", name);
  await page.click(`#tool-list li[data-tool="${name}"]`);
  await page.waitForSelector("#tool-form");
};
// The newest result of `tool` (the first: results are prepended) once done: its text.
const resultOf = async (tool) => {
  const selector = `#results .result[data-tool="${tool}"]`;
  await page.waitForFunction((s) => document.querySelector(s)?.classList.contains("done"), { timeout }, selector);
  return page.$eval(selector, (e) => e.textContent);
};

await step("info", async () => {
  await page.goto(url);
  await page.waitForSelector("body.ready", { timeout });
  const name = await page.$eval("#server-name", (e) => e.textContent);
  if (!name.includes("Everything")) throw new Error(`the server's name: ${name}`);
  const meta = await page.$eval("#server-meta", (e) => e.textContent);
  if (!meta.includes("protocol 20")) throw new Error(`the revision: ${meta}`);
});

await step("search-and-call", async () => {
  await page.type("#tool-search", "simple_text");
  const shown = await page.$$eval("#tool-list li", (items) => items.map((i) => i.dataset.tool));
  if (shown.length !== 1 || shown[0] !== "test_simple_text") throw new Error(`the search shows ${shown}`);
  await chooseTool("test_simple_text");
  await page.click("#call");
  const text = await resultOf("test_simple_text");
  if (!text.includes("This is a simple text response for testing.")) throw new Error(`the result: ${text}`);
});

await step("traffic", async () => {
  await page.waitForSelector('#traffic li[data-dir="out"][data-method="tools/call"]', { timeout });
  await page.waitForSelector('#traffic li[data-dir="in"]', { timeout });
  await page.type("#traffic-filter", "tools/call");
  const visible = await page.$$eval("#traffic li", (items) => items.filter((i) => !i.hidden).length);
  const all = await page.$$eval("#traffic li", (items) => items.length);
  if (!(visible > 0 && visible < all)) throw new Error(`the filter shows ${visible} of ${all}`);
  await page.click('#traffic li[data-method="tools/call"] summary');
});

await step("progress", async () => {
  await page.$eval("#traffic-filter", (e) => { e.value = ""; e.dispatchEvent(new Event("input")); });
  await chooseTool("test_tool_with_progress");
  await page.click("#call");
  await resultOf("test_tool_with_progress");
  const seen = await page.$eval('#results .result[data-tool="test_tool_with_progress"] progress', (e) => [e.dataset.seen, e.value, e.max]);
  const values = seen[0].split(",");
  if (values.length < 3 || values[values.length - 1] !== "100" || seen[1] !== 100 || seen[2] !== 100) {
    throw new Error(`the progress bar went through ${seen[0]} (value ${seen[1]} of ${seen[2]})`);
  }
});

await step("image", async () => {
  await chooseTool("test_image_content");
  await page.click("#call");
  await resultOf("test_image_content");
  const size = await page.$eval('#results .result[data-tool="test_image_content"] img', async (img) => {
    await img.decode();
    return [img.naturalWidth, img.naturalHeight];
  });
  if (size[0] !== 1 || size[1] !== 1) throw new Error(`the image is ${size}`);
});

await step("content-and-log", async () => {
  await chooseTool("test_multiple_content_types");
  await page.click("#call");
  const text = await resultOf("test_multiple_content_types");
  if (!text.includes("Multiple content types test:")) throw new Error(`the result: ${text}`);
  const box = '#results .result[data-tool="test_multiple_content_types"]';
  if (!(await page.$(`${box} img.content`))) throw new Error("no image among the blocks");
  const resource = await page.$eval(`${box} .content.resource`, (e) => e.textContent);
  if (!resource.includes("test://")) throw new Error(`the embedded resource: ${resource}`);
  await chooseTool("test_audio_content");
  await page.click("#call");
  await resultOf("test_audio_content");
  const audio = await page.$eval('#results .result[data-tool="test_audio_content"] audio', (a) => a.src.slice(0, 22));
  if (audio !== "data:audio/wav;base64,") throw new Error(`the audio: ${audio}`);
  await chooseTool("test_tool_with_logging");
  await page.click("#call");
  await resultOf("test_tool_with_logging");
  await page.waitForSelector("#log li", { timeout });
});

await step("elicitation-defaults", async () => {
  await chooseTool("test_elicitation_sep1034_defaults");
  await page.click("#call");
  await page.waitForSelector("#asks .ask.elicitation", { timeout });
  // The defaults are filled in: a string, an integer, a number, an enum and a boolean.
  const form = "#asks .ask.elicitation";
  const values = await page.$eval(form, (f) => [
    f.querySelector('[data-field="elicit.name"] input').value,
    f.querySelector('[data-field="elicit.age"] input').value,
    f.querySelector('[data-field="elicit.score"] input').value,
    f.querySelector('[data-field="elicit.status"] select').selectedOptions[0].textContent,
    f.querySelector('[data-field="elicit.verified"] input').checked,
  ]);
  if (JSON.stringify(values) !== JSON.stringify(["John Doe", "30", "95.5", "active", true])) {
    throw new Error(`the defaults shown: ${JSON.stringify(values)}`);
  }
  await page.select(`${form} [data-field="elicit.status"] select`, "2");
  await page.click(`${form} [data-field="elicit.verified"] input`);
  await page.click(`${form} button.accept`);
  const text = await resultOf("test_elicitation_sep1034_defaults");
  for (const part of ['"age":30', '"score":95.5', '"status":"pending"', '"verified":false', '"name":"John Doe"']) {
    if (!text.includes(part)) throw new Error(`${part} is not in the result: ${text}`);
  }
});

await step("nested-object-form", async () => {
  // `address` is a `$ref` to an object of `$defs`: a fieldset of its own fields.
  await chooseTool("json_schema_2020_12_tool");
  await page.type('#tool-form [data-field="arg.name"] input', "Ada");
  await page.type('#tool-form [data-field="arg.address.street"] input', "1 Loop Road");
  await page.type('#tool-form [data-field="arg.address.city"] input', "Localhost");
  await page.select('#tool-form [data-field="arg.contactMethod"] select', "1");
  await page.type('#tool-form [data-field="arg.email"] input', "ada@example.com");
  await page.click("#call");
  await resultOf("json_schema_2020_12_tool");
  const text = await page.$eval('#results .result[data-tool="json_schema_2020_12_tool"] pre.text', (e) => e.textContent);
  const sent = JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1));
  const expected = { address: { city: "Localhost", street: "1 Loop Road" }, contactMethod: "email", email: "ada@example.com", name: "Ada" };
  if (JSON.stringify(sent) !== JSON.stringify(expected)) throw new Error(`the tool got ${JSON.stringify(sent)}`);
});

await step("elicitation-declined", async () => {
  await chooseTool("test_elicitation");
  await page.type('#tool-form [data-field="arg.message"] input', "Again?");
  await page.click("#call");
  await page.waitForSelector("#asks .ask.elicitation", { timeout });
  await page.click("#asks .ask.elicitation button.decline");
  const text = await resultOf("test_elicitation");
  if (!text.includes("action=decline")) throw new Error(`the result: ${text}`);
  if ((await page.$$("#asks .ask")).length !== 0) throw new Error("the question stayed on the page");
});

const SCRIPT = "<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2\">";
await step("elicitation", async () => {
  await chooseTool("test_elicitation");
  await page.type('#tool-form [data-field="arg.message"] input', "Who are you?");
  await page.click("#call");
  await page.waitForSelector("#asks .ask.elicitation", { timeout });
  const message = await page.$eval("#asks .ask.elicitation p", (e) => e.textContent);
  if (message !== "Who are you?") throw new Error(`the question: ${message}`);
  await page.type('#asks [data-field="elicit.username"] input', SCRIPT);
  await page.type('#asks [data-field="elicit.email"] input', "ada@example.com");
  await page.screenshot({ path: path.join(out, "elicitation-form.png") });
  await page.click("#asks .ask.elicitation button.accept");
  const text = await resultOf("test_elicitation");
  if (!text.includes("action=accept") || !text.includes("ada@example.com")) throw new Error(`the result: ${text}`);
});

await step("script-shown-as-text", async () => {
  const shown = await page.$eval('#results .result[data-tool="test_elicitation"] pre.text', (e) => e.textContent);
  // The server's answer quotes the username as JSON: its quotes are escaped.
  if (!shown.includes("<script>window.pwned=1</script>")) throw new Error(`the text shown: ${shown}`);
  const scripts = await page.$$eval("#results script, #results img:not(.content)", (s) => s.length);
  const pwned = await page.evaluate(() => window.pwned);
  if (scripts !== 0 || pwned !== undefined) throw new Error(`markup of the server ran: ${scripts} elements, pwned=${pwned}`);
});

await step("sampling", async () => {
  await chooseTool("test_sampling");
  await page.type('#tool-form [data-field="arg.prompt"] input', "What is 2+2?");
  await page.click("#call");
  await page.waitForSelector("#asks .ask.sampling", { timeout });
  const asked = await page.$eval("#asks .ask.sampling", (e) => e.textContent);
  if (!asked.includes("What is 2+2?")) throw new Error(`the request shows ${asked}`);
  await page.type("#asks .sampling-reply", "four, says the person");
  await page.screenshot({ path: path.join(out, "sampling-request.png") });
  await page.click("#asks .ask.sampling button.approve");
  const text = await resultOf("test_sampling");
  if (!text.includes("LLM response: four, says the person")) throw new Error(`the result: ${text}`);
  if ((await page.$$("#asks .ask")).length !== 0) throw new Error("the question stayed on the page");
});

if (errors.length) fail(`errors on the page: ${errors.join("; ")}`);
stopping = true;
await browser.close();
child.kill("SIGINT");
console.log(`PASS: ${passed} steps; screenshots in ${out}`);
