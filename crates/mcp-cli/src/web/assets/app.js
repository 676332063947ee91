// mcp web: the page. Framework-free; every value of the server goes into the DOM as text
// (textContent, text nodes, attributes of elements built here), never as HTML.
"use strict";

const TOKEN = new URLSearchParams(location.search).get("token") || "";
let nextCall = 1;
let tools = [];
const progressBars = new Map();

// An element: `attrs` set as attributes (or listeners, for on*), children appended as text or
// nodes.
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

function api(path, body) {
  const init = { headers: { "x-mcp-web-token": TOKEN } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return fetch(path, init).then((r) => r.json());
}

function pretty(value) {
  return JSON.stringify(value, null, 2);
}

// ----- the server -----

async function loadInfo() {
  const info = await api("/api/info");
  const server = info.serverInfo || {};
  document.getElementById("server-name").textContent = server.title || server.name || "(no name)";
  document.getElementById("server-version").textContent = server.version || "";
  document.getElementById("server-meta").textContent =
    "protocol " + info.protocolVersion + " · capabilities: " + Object.keys(info.capabilities || {}).join(", ");
  document.getElementById("instructions").textContent = info.instructions || "(no instructions)";
  const caps = document.getElementById("capabilities");
  caps.replaceChildren(tree(info.capabilities || {}, "capabilities"));
  document.title = "mcp web: " + (server.name || "");
}

async function loadTools() {
  const answer = await api("/api/tools");
  tools = answer.tools || [];
  renderTools();
}

function renderTools() {
  const query = document.getElementById("tool-search").value.toLowerCase();
  const list = document.getElementById("tool-list");
  list.replaceChildren();
  for (const tool of tools) {
    const text = (tool.name + " " + (tool.title || "") + " " + (tool.description || "")).toLowerCase();
    if (query && !text.includes(query)) continue;
    list.append(
      el("li", { "data-tool": tool.name, onclick: () => selectTool(tool) },
        tool.title || tool.name,
        el("span", { class: "desc" }, tool.description || "")),
    );
  }
}

// ----- forms from JSON Schema -----

function resolve(root, schema) {
  let s = schema || {};
  for (let i = 0; i < 16 && typeof s.$ref === "string" && s.$ref.startsWith("#/"); i++) {
    let target = root;
    for (const part of s.$ref.slice(2).split("/")) target = target ? target[part.replace(/~1/g, "/").replace(/~0/g, "~")] : undefined;
    if (!target) break;
    s = target;
  }
  return s;
}

function typeOf(schema) {
  let t = schema.type;
  if (Array.isArray(t)) t = t.find((x) => x !== "null") || t[0];
  if (!t && schema.properties) t = "object";
  if (!t && (schema.enum || schema.oneOf || schema.anyOf)) t = "enum";
  return t;
}

function enumOptions(schema) {
  if (Array.isArray(schema.enum)) {
    const names = schema.enumNames || [];
    return schema.enum.map((v, i) => ({ value: v, label: names[i] !== undefined ? names[i] : String(v) }));
  }
  for (const key of ["oneOf", "anyOf"]) {
    const list = schema[key];
    if (Array.isArray(list) && list.length && list.every((o) => o && "const" in o)) {
      return list.map((o) => ({ value: o.const, label: o.title !== undefined ? o.title : String(o.const) }));
    }
  }
  return null;
}

function parseScalar(text, type) {
  if (type === "number") return Number(text);
  if (type === "integer") return parseInt(text, 10);
  if (type === "boolean") return text === "true";
  return text;
}

// A field for `schema`: its element, and `get()` giving its value (undefined: left out).
function field(root, name, rawSchema, required, path) {
  const schema = resolve(root, rawSchema);
  const type = typeOf(schema);
  const id = "f-" + path.join("-") + "-" + nextCall++;
  const label = el("label", { for: id }, schema.title || name, required ? el("span", { class: "required" }, " *") : null);
  const desc = schema.description ? el("div", { class: "desc" }, schema.description) : null;
  const wrap = (input, extra) => el("div", { class: "field", "data-field": path.join(".") }, label, desc, input, extra);
  const has = "default" in schema;
  const options = enumOptions(schema);
  if (options && (type === "enum" || type === "string" || type === "number" || type === "integer" || type === undefined)) {
    const select = el("select", { id });
    if (!required) select.append(el("option", { value: "" }, "—"));
    options.forEach((o, i) => select.append(el("option", { value: String(i), selected: has && schema.default === o.value }, o.label)));
    return { node: wrap(select), get: () => (select.value === "" ? undefined : options[Number(select.value)].value) };
  }
  if (type === "boolean") {
    const box = el("input", { id, type: "checkbox", checked: has && schema.default === true });
    let touched = required || has;
    box.addEventListener("change", () => { touched = true; });
    return { node: wrap(box), get: () => (touched ? box.checked : undefined) };
  }
  if (type === "number" || type === "integer") {
    const input = el("input", { id, type: "number", step: type === "integer" ? "1" : "any", value: has ? schema.default : undefined,
      min: schema.minimum, max: schema.maximum });
    return { node: wrap(input), get: () => (input.value === "" ? undefined : parseScalar(input.value, type)) };
  }
  if (type === "string") {
    const input = el("input", { id, type: "text", value: has ? schema.default : undefined, placeholder: schema.format || undefined });
    return { node: wrap(input), get: () => (input.value === "" && !required ? undefined : input.value) };
  }
  if (type === "array") {
    const items = resolve(root, schema.items || {});
    const itemType = typeOf(items);
    if (["string", "number", "integer", "boolean"].includes(itemType)) {
      const area = el("textarea", { id, placeholder: "one " + itemType + " per line" });
      if (has && Array.isArray(schema.default)) area.value = schema.default.join("\n");
      return {
        node: wrap(area),
        get: () => {
          const lines = area.value.split("\n").filter((l) => l.trim() !== "");
          return lines.length === 0 && !required ? undefined : lines.map((l) => parseScalar(l.trim(), itemType));
        },
      };
    }
  }
  if (type === "object" && schema.properties) {
    const form = objectForm(root, schema, path);
    const set = el("fieldset", { "data-field": path.join(".") }, el("legend", {}, schema.title || name), desc, ...form.nodes);
    return { node: set, get: () => { const v = form.get(); return Object.keys(v).length === 0 && !required ? undefined : v; } };
  }
  // Anything else: JSON.
  const area = el("textarea", { id, placeholder: "JSON" });
  if (has) area.value = pretty(schema.default);
  return {
    node: wrap(area),
    get: () => {
      if (area.value.trim() === "") return undefined;
      return JSON.parse(area.value);
    },
  };
}

function objectForm(root, schema, path) {
  const required = new Set(schema.required || []);
  const fields = Object.entries(schema.properties || {}).map(([name, s]) => [name, field(root, name, s, required.has(name), path.concat(name))]);
  return {
    nodes: fields.map(([, f]) => f.node),
    get: () => {
      const out = {};
      for (const [name, f] of fields) {
        const v = f.get();
        if (v !== undefined) out[name] = v;
      }
      return out;
    },
  };
}

// ----- tools -----

function selectTool(tool) {
  for (const li of document.querySelectorAll("#tool-list li")) li.classList.toggle("selected", li.dataset.tool === tool.name);
  const schema = tool.inputSchema || {};
  const form = objectForm(schema, schema, ["arg"]);
  const button = el("button", { id: "call", class: "primary", type: "button" }, "Call");
  const error = el("div", { class: "required" });
  button.addEventListener("click", () => {
    let args;
    try {
      args = form.get();
      error.textContent = "";
    } catch (e) {
      error.textContent = "Invalid JSON: " + e.message;
      return;
    }
    callTool(tool.name, args);
  });
  document.getElementById("tool-panel").replaceChildren(
    el("h2", {}, tool.title || tool.name),
    el("p", {}, tool.description || ""),
    el("form", { id: "tool-form", onsubmit: (e) => { e.preventDefault(); button.click(); } }, ...form.nodes),
    button, error,
  );
}

async function callTool(name, args) {
  const call = nextCall++;
  const bar = el("progress", { "data-seen": "" });
  const status = el("div", { class: "status" }, "running…");
  const box = el("div", { class: "result running", "data-call": call, "data-tool": name }, el("h3", {}, name), bar, status);
  progressBars.set(call, { bar, status });
  document.getElementById("results").prepend(box);
  let answer;
  try {
    answer = await api("/api/call", { name, arguments: args, call });
  } catch (e) {
    answer = { error: String(e) };
  }
  progressBars.delete(call);
  box.classList.remove("running");
  box.classList.add("done");
  if (bar.dataset.seen === "") bar.remove();
  if (answer.error !== undefined) {
    box.classList.add("error");
    status.replaceChildren(el("pre", {}, answer.error));
    return;
  }
  const result = answer.result || {};
  if (result.isError) box.classList.add("error");
  status.replaceChildren(renderResult(result));
}

function onProgress(event) {
  const entry = progressBars.get(event.call);
  if (!entry) return;
  const p = event.params || {};
  if (typeof p.total === "number") entry.bar.max = p.total;
  if (typeof p.progress === "number") entry.bar.value = p.progress;
  const seen = entry.bar.dataset.seen ? entry.bar.dataset.seen.split(",") : [];
  seen.push(String(p.progress));
  entry.bar.dataset.seen = seen.join(",");
  entry.status.textContent = p.message || "progress " + p.progress + (p.total ? " of " + p.total : "");
}

// ----- results -----

const BASE64 = /^[A-Za-z0-9+/=\s]*$/;

function dataUrl(mime, data) {
  if (typeof mime !== "string" || typeof data !== "string" || !BASE64.test(data)) return null;
  if (!/^[\w.+-]+\/[\w.+-]+$/.test(mime)) return null;
  return "data:" + mime + ";base64," + data.replace(/\s/g, "");
}

function renderBlock(block) {
  switch (block && block.type) {
    case "text":
      return el("pre", { class: "content text" }, block.text);
    case "image": {
      const src = dataUrl(block.mimeType, block.data);
      return src && block.mimeType.startsWith("image/")
        ? el("img", { class: "content", src, alt: "image (" + block.mimeType + ")" })
        : el("pre", {}, "(an image that cannot be shown: " + block.mimeType + ")");
    }
    case "audio": {
      const src = dataUrl(block.mimeType, block.data);
      return src && block.mimeType.startsWith("audio/")
        ? el("audio", { class: "content", controls: true, src })
        : el("pre", {}, "(audio that cannot be played: " + block.mimeType + ")");
    }
    case "resource": {
      const r = block.resource || {};
      return el("div", { class: "content resource" }, el("div", {}, "resource ", el("code", {}, r.uri || "")),
        r.text !== undefined ? el("pre", {}, r.text) : el("pre", {}, "(" + (r.mimeType || "binary") + ", " + (r.blob || "").length + " base64 characters)"));
    }
    case "resource_link":
      return el("div", { class: "content link" }, "link: ", el("code", {}, block.uri || ""), " ", block.name || "", block.description ? " — " + block.description : "");
    default:
      return el("pre", {}, pretty(block));
  }
}

function renderResult(result) {
  const out = el("div", {});
  for (const block of result.content || []) out.append(renderBlock(block));
  if (result.structuredContent !== undefined) out.append(el("div", { class: "tree" }, tree(result.structuredContent, "structuredContent")));
  out.append(el("details", {}, el("summary", {}, "JSON"), el("pre", {}, pretty(result))));
  return out;
}

// A JSON value as a collapsible tree.
function tree(value, key) {
  if (value !== null && typeof value === "object") {
    const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
    const summary = el("summary", {}, el("span", { class: "key" }, String(key)), Array.isArray(value) ? " [" + entries.length + "]" : " {" + entries.length + "}");
    const d = el("details", { open: true }, summary);
    for (const [k, v] of entries) d.append(tree(v, k));
    return d;
  }
  return el("div", { class: "leaf" }, el("span", { class: "key" }, String(key)), ": ", JSON.stringify(value));
}

// ----- the server's questions -----

function onAsk(event) {
  const params = event.params || {};
  const answer = (body) => api("/api/answer", Object.assign({ id: event.id }, body));
  let box;
  if (event.kind === "elicitation") {
    const schema = params.requestedSchema || { type: "object", properties: {} };
    const form = params.url ? null : objectForm(schema, schema, ["elicit"]);
    const content = form ? el("form", { class: "elicit-form", onsubmit: (e) => e.preventDefault() }, ...form.nodes) : el("p", {}, "URL: ", el("code", {}, params.url));
    const accept = el("button", { class: "primary accept", type: "button", onclick: () => answer({ result: form ? { action: "accept", content: form.get() } : { action: "accept" } }) }, "Accept");
    const decline = el("button", { class: "decline", type: "button", onclick: () => answer({ result: { action: "decline" } }) }, "Decline");
    const cancel = el("button", { class: "cancel", type: "button", onclick: () => answer({ result: { action: "cancel" } }) }, "Cancel");
    box = el("div", { class: "ask elicitation" }, el("h3", {}, "The server asks (elicitation)"), el("p", {}, params.message || ""), content, accept, " ", decline, " ", cancel);
  } else if (event.kind === "sampling") {
    const reply = el("textarea", { class: "sampling-reply" });
    const model = el("input", { type: "text", class: "sampling-model", value: "mcp-web (a person)" });
    const approve = el("button", { class: "primary approve", type: "button", onclick: () => answer({ result: { role: "assistant", content: { type: "text", text: reply.value }, model: model.value, stopReason: "endTurn" } }) }, "Approve");
    const reject = el("button", { class: "reject", type: "button", onclick: () => answer({ error: "the person at the page refused the sampling request" }) }, "Reject");
    box = el("div", { class: "ask sampling" }, el("h3", {}, "The server asks for a completion (sampling)"),
      params.systemPrompt ? el("pre", {}, "system: " + params.systemPrompt) : null,
      ...(params.messages || []).map((m) => el("pre", {}, (m.role || "") + ": " + (m.content && m.content.type === "text" ? m.content.text : pretty(m.content)))),
      el("label", {}, "Reply"), reply, el("label", {}, "Model"), model, approve, " ", reject);
  } else {
    return;
  }
  box.dataset.ask = event.id;
  document.getElementById("asks").append(box);
}

function onAsked(event) {
  for (const box of document.querySelectorAll("#asks [data-ask]")) if (box.dataset.ask === String(event.id)) box.remove();
}

// ----- traffic and log -----

function describeMessage(m) {
  if (typeof m !== "object" || m === null) return String(m);
  if (Array.isArray(m)) return "batch of " + m.length;
  if (m.method) return m.method + (m.id !== undefined ? " #" + m.id : "");
  if (m.error) return "error #" + m.id + ": " + (m.error.message || "");
  return "result #" + m.id;
}

function onTraffic(event) {
  const m = event.message;
  const method = m && typeof m === "object" && m.method ? m.method : "";
  const text = JSON.stringify(m);
  const copy = el("button", { type: "button", onclick: () => navigator.clipboard && navigator.clipboard.writeText(pretty(m)) }, "Copy");
  const time = new Date(event.time).toISOString().slice(11, 23);
  const li = el("li", { class: "dir-" + event.dir, "data-dir": event.dir, "data-method": method },
    el("details", {}, el("summary", {}, time + " " + describeMessage(m)), copy, el("pre", {}, pretty(m))));
  li.dataset.text = text.toLowerCase();
  filterOne(li, document.getElementById("traffic-filter").value.toLowerCase());
  document.getElementById("traffic").append(li);
}

function filterOne(li, query) {
  li.hidden = query !== "" && !li.dataset.text.includes(query);
}

function onLog(event) {
  const p = event.params || {};
  const data = typeof p.data === "string" ? p.data : JSON.stringify(p.data);
  document.getElementById("log").append(el("li", { "data-level": p.level }, "[" + p.level + "] " + (p.logger ? p.logger + ": " : "") + data));
}

// ----- events -----

function connectEvents() {
  const source = new EventSource("/api/events?token=" + encodeURIComponent(TOKEN));
  source.onmessage = (m) => {
    const event = JSON.parse(m.data);
    switch (event.type) {
      case "traffic": return onTraffic(event);
      case "progress": return onProgress(event);
      case "log": return onLog(event);
      case "ask": return onAsk(event);
      case "asked": return onAsked(event);
      case "list_changed": if (event.list === "tools") loadTools(); return;
      default: return;
    }
  };
}

document.getElementById("tool-search").addEventListener("input", renderTools);
document.getElementById("traffic-filter").addEventListener("input", (e) => {
  const q = e.target.value.toLowerCase();
  for (const li of document.querySelectorAll("#traffic li")) filterOne(li, q);
});
document.getElementById("traffic-clear").addEventListener("click", () => document.getElementById("traffic").replaceChildren());
connectEvents();
loadInfo().then(loadTools).then(() => document.body.classList.add("ready"));
