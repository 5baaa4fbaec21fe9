"use strict";
// aiinfra's page: forms built from the scenario's JSON Schema (/api/v1/schema/scenario), answers from /api/v1
// (the CLI's --json objects), charts with plotly (served by this server), the scenario in the URL's hash.

const $ = (sel, root = document) => root.querySelector(sel);
const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));

// ---------- numbers: shown with 4 significant digits; data-scale says what the shown number is in SI units
function sig(x, digits = 4) {
  if (x === null || x === undefined || Number.isNaN(x)) return "unknown";
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e4) return Math.round(x).toLocaleString("en-US");
  return Number(x.toPrecision(digits)).toLocaleString("en-US", { maximumSignificantDigits: digits });
}
const UNITS = {
  s: [1, "s"], ms: [1e-3, "ms"], days: [86400, "days"], h: [3600, "h"], GB: [1e9, "GB"], pct: [0.01, "%"],
  usd: [1, "$"], kW: [1e3, "kW"], MW: [1e6, "MW"], MWh: [3.6e9, "MWh"], n: [1, ""], tok: [1, "tokens/s"],
  req: [1, "requests/s"], months: [1, "months"], kWh_as_MWh: [1000, "MWh"], t: [1000, "t"],
};
function fig(label, key, value, unit = "n") {
  const [scale, suffix] = UNITS[unit];
  let text;
  if (value === null || value === undefined) text = "unknown";
  else if (typeof value !== "number") text = esc(value);
  else if (unit === "usd") text = "$" + sig(value);
  else text = `${sig(value / scale)}${suffix ? " " + suffix : ""}`;
  return `<div class="figure"><div class="label">${esc(label)}</div><div class="value" data-key="${esc(key)}" data-scale="${scale}" data-unit="${esc(unit)}">${text}</div></div>`;
}

// ---------- error bands (docs/accuracy.md): "80 %: low–high" under each figure an answer's accuracy object covers,
// and the accuracy note (where the bands come from, or that the answer extrapolates)
function addBands(out, r) {
  const sets = [[r.accuracy, [""]], [r.answer?.accuracy, [""]], [r.reliability?.accuracy, ["reliability."]], [r.accuracy, ["chosen."]]];
  for (const [acc, prefixes] of sets) {
    if (!acc) continue;
    for (const [k, q] of Object.entries(acc.quantities || {})) {
      for (const prefix of prefixes) {
        const el = out.querySelector(`.figure .value[data-key="${prefix}${k}"]`);
        if (!el || (el.nextElementSibling && el.nextElementSibling.classList.contains("band"))) continue;
        const [scale, suffix] = UNITS[el.dataset.unit] || [1, ""];
        const f = (v) => (el.dataset.unit === "usd" ? "$" + sig(v) : sig(v / scale));
        el.insertAdjacentHTML("afterend", `<div class="band">${Math.round(acc.interval * 100)} %: ${f(q.low)}–${f(q.high)}${suffix && el.dataset.unit !== "usd" ? " " + esc(suffix) : ""}</div>`);
      }
    }
  }
  const main = r.accuracy || r.answer?.accuracy;
  if (main) out.insertAdjacentHTML("afterbegin", `<p class="accuracy${main.extrapolation ? " extrapolation" : ""}">${main.extrapolation ? "<b>Extrapolation.</b> " : ""}accuracy: ${esc(main.note)}</p>`);
}
const figures = (items) => `<div class="figures">${items.join("")}</div>`;
const get = (obj, path) => path.split(".").reduce((o, k) => (o == null ? undefined : o[k]), obj);

// ---------- fleet design on the capacity page (docs/examples/fleet.md): mixed fleet, disaggregated pools, the day
// profile, and the deployment's launch command (POST /api/v1/export)
const money = (v) => (v == null ? "unknown" : "$" + sig(v));
function fleetHtml(r, after) {
  let html = "";
  if (r.fleet) {
    const f = r.fleet;
    html += `<h2>Mixed fleet</h2><p id="fleet-verdict">${esc(f.verdict)}</p>` + figures([fig("mixed fleet $/hour", "fleet.mixed.usd_per_hour", f.mixed.usd_per_hour, "usd"),
      fig("saving $/hour", "fleet.saving_usd_per_hour", f.saving_usd_per_hour, "usd")]);
    html += table("t-fleet-pools", ["pool (accelerator)", "offer", "instances", "accelerators used", "$/h", "classes"],
      f.mixed.pools.map((p) => [p.accelerator, p.offer_id, { text: p.instances, sort: p.instances }, { text: p.accelerators_used, sort: p.accelerators_used }, { text: money(p.usd_per_hour), sort: p.usd_per_hour }, p.classes.join(", ")]));
    html += table("t-fleet-single", ["one type alone", "$/h", "why not possible"],
      f.single_types.map((t) => [t.accelerator, { text: money(t.usd_per_hour), sort: t.usd_per_hour ?? 1e18 }, t.reason || ""]));
    html += '<div class="chart" id="chart-fleet"></div>';
    after.push(() => chart("chart-fleet", [{ type: "bar", name: "$/hour", x: ["mixed", ...f.single_types.map((t) => t.accelerator + " alone")],
      y: [f.mixed.usd_per_hour, ...f.single_types.map((t) => t.usd_per_hour)] }],
      { title: "Hourly bill: the mixed fleet against each single accelerator type", xaxis: { title: "fleet" }, yaxis: { title: "cost ($ per hour)" } }));
  }
  if (r.disaggregated) {
    const d = r.disaggregated;
    html += `<h2>Disaggregated prefill/decode</h2><p id="disagg-recommended">recommended: ${esc(d.recommended)}</p>`;
    html += table("t-disagg", ["accelerator", "TP", "weights", "xPyD", "prefill replicas", "decode replicas", "accelerators", "TTFT p90 ms", "TPOT ms", "$/h"],
      d.candidates.map((c) => [c.accelerator, c.tp, c.weight_precision, c.ratio, c.prefill_replicas, c.decode_replicas, { text: c.accelerators, sort: c.accelerators },
        { text: sig(c.ttft_p90_s * 1e3), sort: c.ttft_p90_s }, { text: sig(c.tpot_s * 1e3), sort: c.tpot_s }, { text: money(c.usd_per_hour), sort: c.usd_per_hour ?? 1e18 }]));
  }
  if (r.load_profile) {
    const lp = r.load_profile;
    html += `<h2>Load over ${esc(lp.hours)} hours</h2><p>one replica serves ${sig(lp.per_replica_demand)} ${esc(lp.demand_unit)}; scale-up delay ${sig(lp.scale_up_delay_s)} s, ${esc(lp.autoscaler)} autoscaler</p>`;
    html += table("t-day", ["fleet", "$/day", "SLO attainment", "worst minute", "reserved instances"],
      lp.strategies.map((st) => [st.name, { text: money(st.usd_per_day), sort: st.usd_per_day ?? 1e18 }, { text: sig(st.slo_attainment_frac * 100) + " %", sort: st.slo_attainment_frac },
        { text: sig(st.worst_minute_coverage_frac * 100) + " %", sort: st.worst_minute_coverage_frac }, st.reserved_instances || ""]));
    html += '<div class="chart" id="chart-day"></div>';
    const hours = lp.instances_by_hour.map((_, i) => i);
    after.push(() => chart("chart-day", [{ type: "scatter", mode: "lines", line: { shape: "hv" }, name: "instances needed", x: hours, y: lp.instances_by_hour },
      { type: "scatter", mode: "lines", name: `demand (${lp.demand_unit})`, x: hours, y: lp.demand_by_hour, yaxis: "y2" }],
      { title: "Fleet size hour by hour", xaxis: { title: "hour" }, yaxis: { title: "instances" }, yaxis2: { title: `demand (${lp.demand_unit})`, overlaying: "y", side: "right" } }));
  }
  html += `<h2>Deploy it</h2><p><label>format <select id="export-format">${["vllm", "sglang", "trtllm", "kubernetes"].map((f) => `<option>${f}</option>`).join("")}</select></label>
    <button type="button" id="export-go">Export</button> <button type="button" id="export-copy">Copy</button></p><pre id="export-out" class="export"></pre>`;
  after.push(() => {
    const go = $("#export-go"), out = $("#export-out");
    if (!go) return;
    go.addEventListener("click", async () => {
      out.textContent = "…";
      const res = await fetch(`/api/v1/export?format=${encodeURIComponent($("#export-format").value)}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(state.scenario) });
      const j = await res.json();
      out.textContent = res.ok ? (j.manifest_yaml ?? j.command_line) : `error: ${j.detail?.message ?? JSON.stringify(j)}`;
    });
    $("#export-copy").addEventListener("click", () => navigator.clipboard && navigator.clipboard.writeText(out.textContent));
  });
  return html;
}

// ---------- sortable tables: cells are strings or {text, sort, num}
function table(id, headers, rows) {
  const head = headers.map((h, i) => `<th data-col="${i}">${esc(h)}</th>`).join("");
  const body = rows.map((r) => "<tr>" + r.map((c) => {
    const cell = typeof c === "object" && c !== null ? c : { text: c };
    const sortv = cell.sort ?? cell.text;
    return `<td class="${typeof sortv === "number" ? "num" : ""}" data-sort="${esc(sortv)}">${cell.html ?? esc(cell.text)}</td>`;
  }).join("") + "</tr>").join("");
  return `<div class="table-wrap"><table id="${id}" class="sortable"><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
}
function makeSortable(root) {
  root.querySelectorAll("table.sortable th").forEach((th) => th.addEventListener("click", () => {
    const tbody = th.closest("table").tBodies[0];
    const col = Number(th.dataset.col);
    const asc = !th.classList.contains("sorted-asc");
    th.closest("tr").querySelectorAll("th").forEach((h) => h.classList.remove("sorted-asc", "sorted-desc"));
    th.classList.add(asc ? "sorted-asc" : "sorted-desc");
    const key = (tr) => { const v = tr.cells[col].dataset.sort; const n = Number(v); return v !== "" && !Number.isNaN(n) ? n : v; };
    const rows = Array.from(tbody.rows).sort((a, b) => {
      const x = key(a), y = key(b);
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
      return asc ? c : -c;
    });
    rows.forEach((r) => tbody.appendChild(r));
  }));
}

// ---------- API
async function api(path, { method = "GET", body, signal, raw = false } = {}) {
  const opts = { method, signal, headers: {} };
  if (body !== undefined) {
    opts.body = typeof body === "string" ? body : JSON.stringify(body);
    opts.headers["content-type"] = typeof body === "string" ? "application/yaml" : "application/json";
  }
  const res = await fetch(path, opts);
  if (!res.ok) {
    let detail = { message: `HTTP ${res.status}` };
    try { detail = (await res.json()).detail || detail; } catch (e) { /* not JSON */ }
    const err = new Error(detail.message || JSON.stringify(detail));
    err.detail = detail;
    err.status = res.status;
    throw err;
  }
  return raw ? res.text() : res.json();
}
const cache = {};
const once = (key, fn) => (cache[key] ??= fn());

// ---------- the scenario in the URL: #/page?s=<base64url of the JSON>&o=<options>
const b64 = (obj) => btoa(unescape(encodeURIComponent(JSON.stringify(obj)))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const unb64 = (s) => JSON.parse(decodeURIComponent(escape(atob(s.replace(/-/g, "+").replace(/_/g, "/")))));
function parseHash() {
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  return { page: path || "home", params: new URLSearchParams(query) };
}
function writeHash(page, scenario, options) {
  if (parseHash().page !== page) return;  // the user went to another page: its hashchange is on its way
  const q = new URLSearchParams();
  if (scenario) q.set("s", b64(scenario));
  const o = Object.fromEntries(Object.entries(options || {}).filter(([, v]) => v !== "" && v !== false && v != null));
  if (Object.keys(o).length) q.set("o", b64(o));
  history.replaceState(null, "", `#/${page}?${q.toString()}`);
}

// ---------- pages
const SECTIONS = {
  train: ["hardware", "training", "reliability"], memory: ["hardware", "training"],
  infer: ["hardware", "inference"], capacity: ["hardware", "inference"], simulate: ["hardware", "inference"],
  cost: ["hardware", "training", "inference", "cost", "reliability"], tco: ["hardware", "tco"],
  datacenter: ["hardware", "datacenter", "training"], schedule: ["schedule"], pack: ["pack"],
};
const TITLES = {
  train: "Training plan", memory: "Training memory", infer: "Inference at a load", capacity: "Capacity: the cheapest deployment",
  simulate: "Serving simulation", cost: "Cost", tco: "TCO: on-prem vs cloud", datacenter: "Datacenter: racks, power, fabric",
  schedule: "Cluster scheduling: a job trace under a policy", pack: "Packing a portfolio onto MIG-partitioned GPUs",
};
const LONG = new Set(["simulate", "capacity"]);
// fields a page's question does not read (the CLI's command ignores them too): shown disabled with the reason
const UNUSED = {
  capacity: { "hardware.count": "not used here: capacity chooses the number of accelerators (the answer's accelerators)" },
};
let unused = {};  // answered as jobs (progress, cancel)

let state = { page: "home", scenario: null, options: {}, inflight: null, timer: null };
// each page shown gets a number: an answer, error or URL change from a page no longer shown is dropped
let view = 0;
const current = (v) => v === view;

async function route() {
  const { page, params } = parseHash();
  document.querySelectorAll("#nav a").forEach((a) => a.classList.toggle("active", a.dataset.page === page));
  view += 1;
  clearTimeout(state.timer);
  if (state.inflight) state.inflight.cancel();
  state = { page, scenario: null, options: {}, inflight: null, timer: null };
  if (page === "catalog") return renderCatalog(params);
  if (page === "validation") return renderValidation(params);
  if (page === "mig") return renderMig(params);
  if (SECTIONS[page]) return renderQuestion(page, params);
  return renderHome();
}

function renderHome() {
  const link = (page, file, text) => `<li><a href="#/${page}?example=${encodeURIComponent(file)}">${esc(text)}</a></li>`;
  $("#main").innerHTML = `<h1>aiinfra: what hardware, how many, in what layout, how long, at what cost?</h1>
  <p>Pick a question; every form starts from a shipped example and re-answers as you change it. The URL carries the scenario: copy it to share the answer.</p>
  <h2>Seed questions</h2><ul class="seeds">
  ${link("memory", "memory-llama2-7b-adam-fp16.yaml", "How much GPU memory does training a 7B model take (mixed precision, Adam, ZeRO)?")}
  ${link("train", "train-llama2-70b-a100.yaml", "How many GPUs and how long to train a 70B model?")}
  ${link("train", "train-gpt3-175b-a100.yaml", "GPT-3 175B on A100s: layout, MFU, time to train")}
  ${link("capacity", "capacity-llama70b-10k-users.yaml", "Serve a 70B model to 10,000 concurrent users under latency targets: fleet and $/hour")}
  ${link("tco", "tco-dgx-h100-vs-cloud.yaml", "Buy DGX H100s or rent in the cloud: breakeven month")}
  ${link("datacenter", "datacenter-dgx-h100-pod.yaml", "Power, racks and cooling of a DGX H100 POD")}
  ${link("cost", "cost-train-70b-32xh100.yaml", "What does a 70B training run cost per cloud provider?")}
  ${link("simulate", "simulate-llama70b-h100.yaml", "Latency distribution of a 70B deployment at 8 requests/s")}
  ${link("pack", "pack-portfolio.yaml", "How many A100s, cut into which MIG layouts, hold two chat services, ten notebooks and a fine-tune?")}
  ${link("schedule", "schedule-synthetic.yaml", "Queueing and utilisation of a 512-GPU cluster under FIFO, backfill, gang, priority or fair share")}
  <li><a href="#/mig?accelerator=nvidia-a100-sxm4-80gb">Which MIG layouts does an A100 80GB allow?</a></li>
  </ul>
  <p>Also: the <a href="#/catalog">catalog</a> (every figure with its source and date), the <a href="#/validation">validation table</a> (predicted vs published measurements) and the <a href="/api/docs">HTTP API</a>.</p>`;
}

async function renderQuestion(page, params) {
  const myView = view;
  const [schema, ex] = await Promise.all([once("schema", () => api("/api/v1/schema/scenario")), once("examples", () => api("/api/v1/examples"))]);
  if (!current(myView)) return;
  const examples = ex.examples.filter((e) => e.pages.includes(page));
  let scenario;
  if (params.get("s")) {
    try { scenario = unb64(params.get("s")); } catch (e) { scenario = null; }
  }
  const exampleFile = params.get("example") || ex.defaults[page];
  if (!scenario) scenario = structuredClone((examples.find((e) => e.file === exampleFile) || examples[0] || { scenario: { model: "", hardware: { accelerator: "" } } }).scenario);
  let options = {};
  if (params.get("o")) { try { options = unb64(params.get("o")); } catch (e) { options = {}; } }
  state = { page, scenario, options, inflight: null, timer: null };
  const exOpts = examples.map((e) => `<option value="${esc(e.file)}"${e.file === exampleFile && !params.get("s") ? " selected" : ""}>${esc(e.file)} — ${esc(e.title)}</option>`).join("");
  $("#main").innerHTML = `<h1>${esc(TITLES[page])}</h1>
  <div class="layout"><div class="panel" id="form-panel">
    <div class="toolbar"><label>example <select id="example"><option value="">(choose)</option>${exOpts}</select></label></div>
    ${page === "schedule" ? `<div class="toolbar"><label class="button">Upload trace CSV <input type="file" id="trace-file" accept=".csv,text/csv" hidden></label>
      <button type="button" id="trace-forget" hidden>Use the form's trace / generator</button><span id="trace-name" class="hint"></span></div>` : ""}
    <form id="form" autocomplete="off"></form>
    <div id="options"></div>
    <details><summary>Scenario as YAML (load, edit, download)</summary>
      <textarea class="yaml" id="yaml"></textarea>
      <div class="toolbar"><button type="button" id="apply-yaml">Apply YAML</button>
        <label class="button">Load YAML file <input type="file" id="yaml-file" accept=".yaml,.yml,text/yaml" hidden></label>
        <button type="button" id="download-yaml">Download YAML</button></div>
      <div class="err" id="yaml-err"></div>
    </details>
  </div>
  <div class="panel"><div class="toolbar"><span id="status"></span><button type="button" id="cancel" hidden>Cancel</button><button type="button" id="share">Copy link</button></div>
    <div class="error-box" id="error"></div><div id="result"></div></div></div>`;
  buildForm(schema, page);
  $("#form").addEventListener("change", (e) => {
    const el = e.target;
    if (!el.dataset.path) return;
    if (el.dataset.kind === "model") {
      if (!el.value.startsWith("(")) state.scenario.model = el.value;
    } else {
      setPath(state.scenario, el.dataset.path, parseValue(el.dataset.kind, el.value));
    }
    answerSoon(150);
  });
  buildOptions(page);
  $("#example").addEventListener("change", (e) => {
    const chosen = examples.find((x) => x.file === e.target.value);
    if (!chosen) return;
    state.scenario = structuredClone(chosen.scenario);
    buildForm(schema, page);
    answerSoon(0);
  });
  $("#apply-yaml").addEventListener("click", () => loadYaml($("#yaml").value, schema, page));
  if (page === "schedule") {
    $("#trace-file").addEventListener("change", async (e) => {
      const f = e.target.files[0];
      if (!f) return;
      state.traceCsv = await f.text();
      $("#trace-name").textContent = `${f.name}: ${state.traceCsv.split("\n").filter((l) => l.trim() && !l.startsWith("#")).length - 1} jobs, used instead of the form's trace or generator (a shared link does not carry it)`;
      $("#trace-forget").hidden = false;
      answerSoon(0);
    });
    $("#trace-forget").addEventListener("click", () => { state.traceCsv = null; $("#trace-name").textContent = ""; $("#trace-forget").hidden = true; answerSoon(0); });
  }
  $("#yaml-file").addEventListener("change", async (e) => { const f = e.target.files[0]; if (f) loadYaml(await f.text(), schema, page); });
  $("#download-yaml").addEventListener("click", async () => {
    const text = await api("/api/v1/yaml", { method: "POST", body: state.scenario, raw: true });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(new Blob([text], { type: "application/yaml" }));
    a.download = "scenario.yaml";
    a.click();
  });
  $("#share").addEventListener("click", () => navigator.clipboard?.writeText(location.href));
  answerSoon(0);
}

async function loadYaml(text, schema, page) {
  $("#yaml-err").textContent = "";
  const myView = view;
  try {
    const parsed = await api("/api/v1/parse-yaml", { method: "POST", body: text });
    if (!current(myView)) return;
    state.scenario = parsed;
    buildForm(schema, page);
    answerSoon(0);
  } catch (e) { $("#yaml-err").textContent = e.message; }
}

async function refreshYaml() {
  const myView = view;
  try { const text = await api("/api/v1/yaml", { method: "POST", body: state.scenario, raw: true }); if (current(myView)) $("#yaml").value = text; } catch (e) { /* shown by the answer */ }
}

// ---------- forms from the JSON Schema
function resolveRef(s, defs) { return s && s.$ref ? defs[s.$ref.split("/").pop()] : s; }
function kindOf(s, defs) {
  s = resolveRef(s, defs);
  if (!s) return { kind: "json" };
  if (s.anyOf) {
    const inner = s.anyOf.filter((x) => x.type !== "null");
    if (inner.length === 1) return { ...kindOf(inner[0], defs), nullable: true };
    if (inner.every((x) => ["integer", "number", "string"].includes(x.type) || x.const !== undefined)) return { kind: "scalar" };
    return { kind: "json" };
  }
  if (s.enum) return { kind: "enum", values: s.enum };
  if (s.const !== undefined) return { kind: "enum", values: [s.const] };
  if (s.type === "boolean") return { kind: "bool" };
  if (s.type === "integer" || s.type === "number") return { kind: "number" };
  if (s.type === "string") return { kind: "string" };
  if (s.type === "object" && s.properties) return { kind: "object", schema: s };
  return { kind: "json" };
}
function setPath(obj, path, value) {
  const keys = path.split(".");
  let o = obj;
  keys.slice(0, -1).forEach((k) => { if (typeof o[k] !== "object" || o[k] === null) o[k] = {}; o = o[k]; });
  if (value === undefined) delete o[keys.at(-1)]; else o[keys.at(-1)] = value;
  // drop emptied parents so an untouched section stays absent
  for (let i = keys.length - 1; i > 0; i--) {
    const parent = get(obj, keys.slice(0, i).join("."));
    if (parent && typeof parent === "object" && Object.keys(parent).length === 0) setPath(obj, keys.slice(0, i).join("."), undefined);
  }
}
function parseValue(kind, raw) {
  if (raw === "") return undefined;
  if (kind === "number" || kind === "scalar") { const n = Number(raw); return raw.trim() !== "" && !Number.isNaN(n) ? n : raw; }
  if (kind === "bool") return raw === "true";
  if (kind === "json") { try { return JSON.parse(raw); } catch (e) { return raw; } }
  return raw;
}
function fieldHtml(name, s, defs, value, path, depth) {
  const k = kindOf(s, defs);
  if (unused[path]) {
    return `<div class="field unused" data-field="${esc(path)}"><label title="${esc(unused[path])}">${esc(name)}</label><input data-unused="${esc(path)}" value="${esc(value ?? "")}" disabled>` +
      `<div class="hint">${esc(unused[path])}</div></div>`;
  }
  const desc = resolveRef(s, defs)?.description || s.description || "";
  const dflt = s.default !== undefined && s.default !== null ? `default ${JSON.stringify(s.default)}` : (k.nullable ? "optional" : "required");
  if (k.kind === "object" && depth < 3) {
    const inner = Object.entries(k.schema.properties).map(([n, ps]) => fieldHtml(n, ps, defs, value?.[n], `${path}.${n}`, depth + 1)).join("");
    return `<details${value !== undefined ? " open" : ""}><summary>${esc(name)}</summary><div class="err" data-err-for="${esc(path)}"></div>${inner}</details>`;
  }
  const id = "f-" + path.replace(/\./g, "-");
  let control;
  const shown = value === undefined || value === null ? "" : (k.kind === "json" || (typeof value === "object") ? JSON.stringify(value) : String(value));
  if (k.kind === "enum" || k.kind === "bool") {
    const values = k.kind === "bool" ? [true, false] : k.values;
    control = `<select id="${id}" data-path="${esc(path)}" data-kind="${k.kind}"><option value="">(${esc(dflt)})</option>` +
      values.map((v) => `<option value="${esc(v)}"${String(v) === shown ? " selected" : ""}>${esc(v)}</option>`).join("") + "</select>";
  } else if (k.kind === "json") {
    control = `<textarea id="${id}" rows="${Math.min(8, Math.max(1, Math.ceil(shown.length / 34)))}" data-path="${esc(path)}" data-kind="json" placeholder="${esc(dflt)} (JSON)">${esc(shown)}</textarea>`;
  } else {
    control = `<input id="${id}" data-path="${esc(path)}" data-kind="${k.kind}" value="${esc(shown)}" placeholder="${esc(dflt)}"${k.kind === "number" ? ' inputmode="decimal"' : ""}>`;
  }
  return `<div class="field" data-field="${esc(path)}"><label for="${id}" title="${esc(desc)}">${esc(name)}</label>${control}` +
    `${desc ? `<div class="hint">${esc(desc)}</div>` : ""}<div class="err" data-err-for="${esc(path)}"></div></div>`;
}
function buildForm(schema, page) {
  const sc = state.scenario;
  unused = UNUSED[page] || {};
  const modelShown = typeof sc.model === "string" ? sc.model : (sc.model && sc.model.name ? `(uploaded architecture: ${sc.model.name})` : "(inline architecture)");
  let html = page === "schedule" ? "" : `<fieldset><legend>model</legend><div class="field" data-field="model"><label for="f-model" title="${esc(schema.model.description)}">model</label>` +
    `<input id="f-model" data-path="model" data-kind="model" list="model-ids" value="${esc(modelShown)}"><div class="hint">${esc(schema.model.description)}</div>` +
    `<div class="err" data-err-for="model"></div></div><datalist id="model-ids"></datalist>` +
    `<label class="button">Upload config.json <input type="file" id="config-file" accept=".json,application/json" hidden></label></fieldset>`;
  if (page === "schedule" || page === "pack") html = "";
  for (const name of SECTIONS[page]) {
    const s = schema.sections[name];
    const inner = Object.entries(s.properties).map(([n, ps]) => fieldHtml(n, ps, s.$defs || {}, sc[name]?.[n], `${name}.${n}`, 1)).join("");
    const open = sc[name] !== undefined || name === "hardware";
    html += `<details class="section"${open ? " open" : ""}><summary>${esc(name)}${sc[name] === undefined && name !== "hardware" ? " (not in this scenario: fill a field to add it)" : ""}</summary>` +
      `<div class="err" data-err-for="${esc(name)}"></div>${inner}</details>`;
  }
  const form = $("#form");
  form.innerHTML = html;
  if (page === "schedule" || page === "pack") { refreshYaml(); return; }
  once("models", () => api("/api/v1/catalog/models")).then((m) => {
    $("#model-ids").innerHTML = m.rows.map((r) => `<option value="${esc(r.id)}">`).join("");
  }).catch(() => {});
  $("#config-file").addEventListener("change", async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    clearErrors();
    try {
      let cfg;
      try { cfg = JSON.parse(await f.text()); } catch (err) { throw Object.assign(new Error(`model.config: ${f.name} is not JSON`), { detail: { field: "model", message: `${f.name} is not JSON — upload a Hugging Face config.json` } }); }
      const r = await api(`/api/v1/model-from-config?name=${encodeURIComponent(f.name.replace(/\.json$/, ""))}`, { method: "POST", body: cfg });
      state.scenario.model = r.model;
      $("#f-model").value = `(uploaded architecture: ${r.model.name})`;
      answerSoon(0);
    } catch (err) { showError(err); }
  });
  refreshYaml();
}
function buildOptions(page) {
  const o = state.options;
  let html = "";
  if (page === "capacity") {
    html = `<fieldset><legend>options (as the CLI's)</legend>
      <div class="field"><label for="opt-accelerators">--accelerators</label><input id="opt-accelerators" data-opt="accelerators" value="${esc(o.accelerators || "")}" placeholder="the scenario's; e.g. nvidia-h100-sxm5-80gb,nvidia-h200-sxm-141gb"><div class="err" data-err-for="accelerators"></div></div>
      <div class="field"><label for="opt-engines">--engines</label><input id="opt-engines" data-opt="engines" value="${esc(o.engines || "")}" placeholder="the scenario's; e.g. vllm,trtllm"><div class="err" data-err-for="engines"></div></div>
      <div class="field"><label for="opt-simulate">--simulate</label><input type="checkbox" id="opt-simulate" data-opt="simulate"${o.simulate ? " checked" : ""}></div>
      <div class="field"><label for="opt-disaggregate">--disaggregate</label><input type="checkbox" id="opt-disaggregate" data-opt="disaggregate"${o.disaggregate ? " checked" : ""}></div></fieldset>`;
  } else if (page === "simulate") {
    html = `<fieldset><legend>options</legend><div class="field"><label for="opt-seed">--seed</label><input id="opt-seed" data-opt="seed" value="${esc(o.seed ?? 0)}"><div class="err" data-err-for="seed"></div></div></fieldset>`;
  }
  $("#options").innerHTML = html;
  $("#options").addEventListener("change", (e) => {
    const el = e.target;
    if (!el.dataset.opt) return;
    state.options[el.dataset.opt] = el.type === "checkbox" ? el.checked : el.value;
    answerSoon(150);
  });
}

// ---------- answering
function clearErrors() {
  $("#error").textContent = "";
  document.querySelectorAll("[data-err-for]").forEach((e) => { e.textContent = ""; });
  document.querySelectorAll(".field.invalid").forEach((e) => e.classList.remove("invalid"));
}
function showError(err) {
  const d = err.detail || { message: err.message };
  $("#error").textContent = d.message || String(err);
  let field = (d.field || "").replace(/^-+/, "");
  while (field) {
    const slot = document.querySelector(`[data-err-for="${CSS.escape(field)}"]`);
    if (slot) {
      slot.textContent = d.message;
      slot.closest(".field")?.classList.add("invalid");
      const det = slot.closest("details"); if (det) det.open = true;
      let p = det?.parentElement?.closest("details"); while (p) { p.open = true; p = p.parentElement?.closest("details"); }
      return;
    }
    field = field.includes(".") ? field.slice(0, field.lastIndexOf(".")) : "";
  }
}
function answerSoon(ms) {
  clearTimeout(state.timer);
  markStale();
  setStatus("working…", true);  // at once: the answer shown is no longer the input's
  const myView = view;
  state.timer = setTimeout(() => { if (current(myView)) answer(); }, ms);
}
function markStale() {
  const out = $("#result");
  if (out && out.innerHTML) out.classList.add("stale");
}
function setStatus(text, working) {
  const s = $("#status");
  if (!s) return;
  s.textContent = text;
  s.classList.toggle("working", !!working);
  $("#cancel").hidden = !working;
}
function query(page) {
  const o = state.options, q = new URLSearchParams();
  if (page === "capacity") {
    if (o.accelerators) q.set("accelerators", o.accelerators);
    if (o.engines) q.set("engines", o.engines);
    if (o.simulate) q.set("simulate", "true");
    if (o.disaggregate) q.set("disaggregate", "true");
  }
  if (o.seed !== undefined && o.seed !== "") q.set("seed", o.seed);
  return q.toString();
}
async function answer() {
  const page = state.page, myView = view;
  if (parseHash().page !== page) return;  // a navigation is pending: answer nothing for the page being left
  if (state.inflight) state.inflight.cancel();
  clearErrors();
  writeHash(page, state.scenario, state.options);
  refreshYaml();
  const started = performance.now();
  const tick = setInterval(() => setStatus(`working… ${((performance.now() - started) / 1000).toFixed(1)} s${state.inflight?.progress || ""}`, true), 200);
  setStatus("working…", true);
  const job = LONG.has(page) && (page === "simulate" || state.options.simulate);
  const body = page === "schedule" && state.traceCsv ? { ...state.scenario, trace_csv: state.traceCsv } : state.scenario;
  const run = job ? runJob(page === "simulate" ? "simulate-series" : page, body, query(page)) : runDirect(page, body, query(page));
  state.inflight = run;
  $("#cancel").onclick = () => run.cancel();
  try {
    const result = await run.promise;
    if (!current(myView) || state.inflight !== run) return;
    setStatus(`answered in ${((performance.now() - started) / 1000).toFixed(2)} s`, false);
    $("#result").classList.remove("stale");
    renderAnswer(page, result);
  } catch (err) {
    if (!current(myView) || state.inflight !== run) return;
    $("#result").innerHTML = "";  // no answer is shown for input that has none
    $("#result").classList.remove("stale");
    if (err.name === "AbortError" || err.cancelled) { setStatus("cancelled", false); return; }
    setStatus("not answered: see the error", false);
    showError(err);
  } finally {
    clearInterval(tick);
    if (state.inflight === run) state.inflight = null;
  }
}
function runDirect(page, scenario, q) {
  const ctrl = new AbortController();
  return { promise: api(`/api/v1/${page}?${q}`, { method: "POST", body: scenario, signal: ctrl.signal }), cancel: () => ctrl.abort(), progress: "" };
}
function runJob(question, scenario, q) {
  const ctrl = new AbortController();
  const handle = { cancel: null, progress: "" };
  let cancelled = false, jobId = null;
  handle.cancel = () => {
    cancelled = true;
    ctrl.abort();
    if (jobId) fetch(`/api/v1/jobs/${jobId}`, { method: "DELETE" });
  };
  handle.promise = (async () => {
    const body = question === "validate" ? {} : scenario;
    const started = await api(`/api/v1/jobs/${question}?${q}`, { method: "POST", body, signal: ctrl.signal });
    jobId = started.id;
    for (;;) {
      if (cancelled) throw Object.assign(new Error("cancelled"), { cancelled: true });
      await new Promise((r) => setTimeout(r, 250));
      const s = await api(`/api/v1/jobs/${jobId}`, { signal: ctrl.signal });
      handle.progress = s.done ? ` (${s.done}${s.total ? "/" + s.total : ""} done)` : "";
      if (s.state === "done") return s.result;
      if (s.state === "error") throw Object.assign(new Error(s.error.message), { detail: s.error });
      if (s.state === "cancelled") throw Object.assign(new Error("cancelled"), { cancelled: true });
    }
  })();
  return handle;
}

// ---------- answers
// plotly.js takes titles as objects ({text}); a plain string is ignored by the version served here
const titled = (t) => (typeof t === "string" ? { text: t } : t);
function chart(id, traces, layout, opts = {}) {
  const el = document.getElementById(id);
  if (!el || !window.Plotly) return;
  const lay = { margin: { t: 40, r: 10, b: 55, l: 70 }, height: 320, showlegend: traces.length > 1, legend: { orientation: "h", y: -0.25 }, ...layout };
  lay.title = titled(lay.title);
  for (const ax of ["xaxis", "yaxis"]) if (lay[ax]) lay[ax] = { automargin: true, ...lay[ax], title: titled(lay[ax].title) };
  if (opts.capacity != null) {  // a horizontal line across the plot at the capacity, with its value
    lay.shapes = [...(lay.shapes || []), { type: "line", xref: "paper", x0: 0, x1: 1, yref: "y", y0: opts.capacity, y1: opts.capacity, line: { dash: "dash", color: "#c0262d", width: 2 } }];
    lay.annotations = [...(lay.annotations || []), { xref: "paper", x: 1, xanchor: "right", yref: "y", y: opts.capacity, yanchor: "bottom", text: `capacity ${sig(opts.capacity)} GB`, showarrow: false, font: { color: "#c0262d" } }];
    lay.yaxis = { ...(lay.yaxis || {}), range: [0, Math.max(opts.capacity, opts.top ?? 0) * 1.12] };
  }
  window.Plotly.newPlot(el, traces, lay, { displaylogo: false, responsive: true });
}
// readable names of the answers' keys (chart legends and labels)
const LABELS = {
  weights: "weights", gradients: "gradients", optimizer_states: "optimizer states", activations: "activations", other: "other (buffers, fragmentation)",
  kv_cache: "KV cache", workspace: "workspace", compute: "compute", exposed_comm: "exposed communication", pipeline_bubble: "pipeline bubble",
};
const label = (key) => { const k = key.replace(/_(bytes|s|frac)$/, ""); return LABELS[k] ?? k.replace(/_/g, " "); };
const notesHtml = (notes) => (notes && notes.length ? `<h2>Notes</h2><ul class="notes">${notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : "");
const planText = (p) => (p ? Object.entries(p).filter(([k, v]) => v !== 1 && v !== false && v !== "none").map(([k, v]) => `${k} ${v}`).join(" · ") : "");
const GBv = (b) => (b == null ? null : b / 1e9);

function renderAnswer(page, r) {
  const out = $("#result");
  const after = [];
  let html = "";
  if (page === "train") {
    html = figures([fig("plan", "plan", planText(r.plan)), fig("time to train", "time_to_train_s", r.time_to_train_s, "days"),
      fig("MFU", "mfu_frac", r.mfu_frac, "pct"),
      fig("step time", "step_time_s", r.step_time_s, "s"), fig("memory per accelerator", "memory_per_accelerator_bytes", r.memory_per_accelerator_bytes, "GB"),
      fig("tokens/s", "tokens_per_s", r.tokens_per_s, "tok"), fig("accelerator-hours", "accelerator_hours", r.accelerator_hours),
      fig("accelerators used", "accelerators_used", r.accelerators_used), fig("accelerators idle", "accelerators_idle", r.accelerators_idle),
      fig("energy (at TDP)", "energy_j", r.energy_j, "MWh")]);
    html += `<p>${esc(r.why || "")}</p>`;
    if (r.reliability) {
      const rl = r.reliability;
      html += `<h2>With failures, checkpoints and restarts</h2>` + figures([fig("time to train (mean)", "reliability.time_to_train_mean_s", rl.time_to_train_mean_s, "days"),
        fig("p90", "reliability.time_to_train_p90_s", rl.time_to_train_p90_s, "days"), fig("ETTR", "reliability.ettr_frac", rl.ettr_frac, "pct")]);
    }
    html += `<div class="chart" id="chart-memory"></div><div class="chart" id="chart-step"></div>`;
    const alts = [r, ...(r.alternatives || [])];
    html += "<h2>Ranked layouts</h2>" + table("t-plans", ["rank", "plan", "step s", "MFU %", "memory GB", "days", "fits"],
      alts.map((a, i) => [{ text: i + 1, sort: i + 1 }, planText(a.plan), { text: sig(a.step_time_s), sort: a.step_time_s }, { text: sig(a.mfu_frac * 100, 3), sort: a.mfu_frac },
        { text: sig(GBv(a.memory_per_accelerator_bytes)), sort: a.memory_per_accelerator_bytes }, { text: sig(a.time_to_train_s / 86400), sort: a.time_to_train_s }, String(a.fits)]));
    if (r.searched) {
      html += `<h2>Search: ${sig(r.candidates)} candidates, ${sig(r.valid_plans)} valid, ${sig(r.fitting_plans)} fit</h2>` +
        table("t-rejected", ["rejected because", "candidates"], Object.entries(r.rejected).sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, { text: sig(v), sort: v }]));
    }
    html += notesHtml(r.notes) + `<p class="hint">FLOP convention: ${esc(r.flop_convention)}</p>`;
    after.push(() => {
      const mb = r.memory_breakdown;
      chart("chart-memory", Object.entries(mb).map(([k, v]) => ({ type: "bar", name: label(k), x: ["best layout"], y: [v / 1e9] })),
        { barmode: "stack", title: "Memory per accelerator, by component, against its capacity", xaxis: { title: "layout" }, yaxis: { title: "memory per accelerator (GB)" } },
        { capacity: r.memory_capacity_bytes / 1e9, top: Object.values(mb).reduce((a, b) => a + b, 0) / 1e9 });
      chart("chart-step", [{ type: "bar", orientation: "h", name: "time per step", y: Object.keys(r.step_breakdown).map(label), x: Object.values(r.step_breakdown) }],
        { title: "Step time, by part", xaxis: { title: "time per optimizer step (s)" }, yaxis: { title: "part of the step" } });
    });
  } else if (page === "memory") {
    html = figures([fig("total parameters", "total_params", r.total_params), fig("trainable parameters", "trainable_params", r.trainable_params),
      fig("capacity per accelerator", "capacity_bytes", r.capacity_bytes, "GB")]);
    html += `<div class="chart" id="chart-memory"></div>`;
    html += table("t-memory", ["configuration", "weights GB", "grads GB", "optimizer GB", "activations GB", "other GB", "total GB", "host offload GB", "fits"],
      r.rows.map((row) => [row.label, ...["weights_bytes", "gradients_bytes", "optimizer_states_bytes", "activations_bytes", "other_bytes", "total_bytes", "host_offload_bytes"].map((k) => ({ text: sig(GBv(row[k])), sort: row[k] ?? 0 })), String(row.fits)]));
    html += notesHtml(r.conventions);
    after.push(() => chart("chart-memory", ["weights_bytes", "gradients_bytes", "optimizer_states_bytes", "activations_bytes", "other_bytes"].map((k) => ({
      type: "bar", name: label(k), x: r.rows.map((row) => row.label), y: r.rows.map((row) => (row[k] || 0) / 1e9) })),
    { barmode: "stack", title: "Memory per accelerator, by configuration and component", xaxis: { title: "configuration" }, yaxis: { title: "memory per accelerator (GB)" } },
    { capacity: r.capacity_bytes / 1e9, top: Math.max(...r.rows.map((row) => (row.total_bytes || 0) / 1e9)) }));
  } else if (page === "infer") {
    html = `<p>${esc(r.load)}</p>` + figures([fig("TTFT", "ttft_s", r.ttft_s, "ms"), fig("TPOT", "tpot_s", r.tpot_s, "ms"),
      fig("output tokens/s", "output_tokens_per_s", r.output_tokens_per_s, "tok"), fig("tokens/s per user", "output_tokens_per_s_per_user", r.output_tokens_per_s_per_user, "tok"),
      fig("requests/s", "requests_per_s", r.requests_per_s, "req"), fig("batch (sequences)", "batch_seqs", r.batch_seqs),
      fig("KV capacity (tokens)", "kv_capacity_tokens", r.kv_capacity_tokens), fig("max concurrent sequences", "max_concurrent_seqs", r.max_concurrent_seqs),
      fig("layout", "layout", `TP ${r.tp} · PP ${r.pp} · ${r.replicas} replica(s) on ${r.engine}`)]);
    const slo = state.scenario?.inference?.slo;
    if (slo && Object.values(slo).some((v) => v != null)) {
      const est = { ttft_p90_s: ["TTFT", r.ttft_s], tpot_p99_s: ["TPOT", r.tpot_s] };
      html += `<h2>Against the SLO</h2><p class="hint">The estimate is the analytic latency at this load, not a percentile: the Capacity page sizes a fleet to the SLO and the Serving simulation page measures its percentiles.</p>` +
        table("t-slo", ["target", "limit ms", "this estimate ms", "within"], Object.entries(slo).filter(([, v]) => v != null).map(([k, v]) => {
          const [what, x] = est[k] || [k, null];
          return [`${what} (${k})`, { text: sig(v * 1e3), sort: v }, { text: x == null ? "—" : sig(x * 1e3), sort: x ?? 0 }, x == null ? "—" : (x <= v ? "yes" : "no")];
        }));
    }
    html += `<div class="chart" id="chart-memory"></div>` + notesHtml(r.notes);
    after.push(() => { const m = r.memory_per_accelerator; const parts = Object.entries(m).filter(([k]) => k !== "capacity_bytes" && k !== "runtime_visible_bytes");
      chart("chart-memory", parts.map(([k, v]) => ({ type: "bar", name: label(k), x: ["one accelerator"], y: [v / 1e9] })),
        { barmode: "stack", title: "Memory per accelerator, by component, against its capacity", xaxis: { title: "accelerator" }, yaxis: { title: "memory per accelerator (GB)" } },
        { capacity: m.capacity_bytes / 1e9, top: parts.reduce((a, [, v]) => a + v, 0) / 1e9 }); });
  } else if (page === "capacity") {
    const c = r.chosen;
    html = `<p>Cheapest: ${esc(c.accelerators)} × ${esc(c.accelerator)} as ${esc(c.replicas)} replica(s) of TP ${esc(c.tp)} (${esc(c.weight_precision)}) on ${esc(c.engine)}</p>` +
      figures([fig("accelerators", "chosen.accelerators", c.accelerators), fig("billed (whole instances)", "chosen.accelerators_billed", c.accelerators_billed),
        fig("replicas", "chosen.replicas", c.replicas), fig("$/hour", "chosen.usd_per_hour", c.usd_per_hour, "usd"),
        fig("$/million output tokens", "chosen.usd_per_million_output_tokens", c.usd_per_million_output_tokens, "usd"),
        fig("TTFT", "chosen.ttft_s", c.ttft_s, "ms"), fig("TPOT", "chosen.tpot_s", c.tpot_s, "ms")]);
    if (c.price) html += `<p class="hint">price: ${esc(c.price.source_id)}${c.price.read_on ? `, read ${esc(c.price.read_on)} (${c.price.age_days} days old)` : ", date unknown"}${staleMark(r)}</p>`;
    const all = [c, ...(r.alternatives || [])];
    html += "<h2>Candidates (cheapest first)</h2>" + table("t-capacity", ["engine", "accelerator", "TP", "weights", "batch", "replicas", "accelerators", "$/h", "$/M out tok", "TTFT ms", "TPOT ms", "verdict"],
      all.map((o) => [o.engine, o.accelerator, { text: o.tp, sort: o.tp }, o.weight_precision, { text: o.batch_per_replica, sort: o.batch_per_replica }, { text: o.replicas, sort: o.replicas },
        { text: o.accelerators, sort: o.accelerators }, { text: o.usd_per_hour == null ? "unknown" : sig(o.usd_per_hour), sort: o.usd_per_hour ?? 1e18 },
        { text: o.usd_per_million_output_tokens == null ? "unknown" : sig(o.usd_per_million_output_tokens), sort: o.usd_per_million_output_tokens ?? 1e18 },
        { text: o.ttft_s == null ? "—" : sig(o.ttft_s * 1e3), sort: o.ttft_s ?? 1e18 },
        { text: o.tpot_s == null ? "—" : sig(o.tpot_s * 1e3), sort: o.tpot_s ?? 1e18 }, o.verdict]));
    if (r.simulated) {
      const s = r.simulated;
      html += `<h2>Simulated check (seed ${esc(r.seed ?? 0)})</h2><p>Poisson arrivals at the same mean rate:</p>` + figures([fig("max requests/s per replica", "simulated.max_request_rate_per_replica_per_s", s.max_request_rate_per_replica_per_s, "req"),
        fig("replicas needed", "simulated.replicas_needed", s.replicas_needed), fig("accelerators needed", "simulated.accelerators_needed", s.accelerators_needed)]);
      if (s.closed_loop) {
        const c = s.closed_loop;
        html += `<p>Closed loop (each user sends the next request when its answer ends):</p>` + figures([fig("users per replica within the SLO", "simulated.closed_loop.max_users_per_replica", c.max_users_per_replica),
          fig("replicas needed", "simulated.closed_loop.replicas_needed", c.replicas_needed), fig("accelerators needed", "simulated.closed_loop.accelerators_needed", c.accelerators_needed)]);
      }
      (s.rejected || []).forEach((x) => { html += `<p>passed over (misses the SLO in simulation): ${esc(x.deployment)}</p>`; });
    }
    html += fleetHtml(r, after);
    html += notesHtml(r.accuracy_notes);
  } else if (page === "simulate") {
    const a = r.answer;
    html = figures([fig("TTFT p50", "ttft_s.p50", a.ttft_s.p50, "ms"), fig("TTFT p90", "ttft_s.p90", a.ttft_s.p90, "ms"), fig("TTFT p99", "ttft_s.p99", a.ttft_s.p99, "ms"),
      fig("TPOT p50", "tpot_exclusive_s.p50", a.tpot_exclusive_s.p50, "ms"), fig("TPOT p99", "tpot_exclusive_s.p99", a.tpot_exclusive_s.p99, "ms"),
      fig("e2e p99", "e2e_s.p99", a.e2e_s.p99, "s"), fig("output tokens/s", "output_tokens_per_s", a.output_tokens_per_s, "tok"),
      fig("requests/s", "requests_per_s", a.requests_per_s, "req"), fig("requests completed", "completed", a.completed),
      fig("SLO attainment", "slo_attainment_frac", a.slo_attainment_frac, "pct"),
      fig("preemptions", "preemptions", a.preemptions), fig("max queue", "queue_length_max", a.queue_length_max)]);
    html += `<div class="chart" id="chart-ttft"></div><div class="chart" id="chart-tpot"></div><div class="chart" id="chart-queue"></div><div class="chart" id="chart-kv"></div>` + notesHtml(a.notes);
    after.push(() => {
      const lat = r.latencies, t = r.timeline;
      chart("chart-ttft", [{ type: "histogram", name: "requests", x: lat.ttft_s.map((x) => x * 1e3), nbinsx: 60 }], { title: "Time to first token, per request", xaxis: { title: "TTFT (ms)" }, yaxis: { title: "requests" } });
      chart("chart-tpot", [{ type: "histogram", name: "requests", x: lat.tpot_exclusive_s.map((x) => x * 1e3), nbinsx: 60 }], { title: "Time per output token, per request", xaxis: { title: "TPOT (ms)" }, yaxis: { title: "requests" } });
      chart("chart-queue", [{ type: "scatter", mode: "lines", name: "waiting (queued)", x: t.t_s, y: t.waiting }, { type: "scatter", mode: "lines", name: "running (in the batch)", x: t.t_s, y: t.running }],
        { title: "Requests waiting and running over the run", xaxis: { title: "simulated time (s)" }, yaxis: { title: "requests" } });
      chart("chart-kv", [{ type: "scatter", mode: "lines", name: "KV cache in use", x: t.t_s, y: t.kv_frac.map((x) => x * 100) }], { title: "KV-cache utilisation over the run", xaxis: { title: "simulated time (s)" }, yaxis: { title: "KV cache in use (%)", range: [0, 100] } });
    });
  } else if (page === "cost") {
    const ch = r.cheapest;
    html = figures([fig("duration", "duration_s", r.duration_s, "days"), fig("cheapest total", "cheapest.total_known_usd", ch?.total_known_usd, "usd"),
      fig("cheapest offer", "cheapest.price_id", ch ? `${ch.provider} ${ch.instance} (${ch.pricing})` : null),
      fig("energy", "energy.energy_kwh", r.energy?.energy_kwh, "kWh_as_MWh"), fig("CO2e", "energy.co2e_kg", r.energy?.co2e_kg, "t")]);
    html += `<p class="hint">duration: ${esc(r.duration_source)}</p>`;
    const offerLabel = (o) => `${o.provider} ${o.instance} ${o.region} (${o.pricing})`;
    html += `<h2>Itemised bill of <select id="bill-offer">${r.options.map((o, i) => `<option value="${i}">${esc(offerLabel(o))}${o.price_id === r.cheapest?.price_id && o.pricing === r.cheapest?.pricing ? " — cheapest" : ""}</option>`).join("")}</select></h2><div id="bill"></div>`;
    const bill = (i) => {
      const o = r.options[i];
      $("#bill").innerHTML = table("t-bill", ["item", "quantity", "unit", "unit price $", "cost $", "source"], (o.items || []).map((it) => [it.item,
        { text: sig(it.unit_count), sort: it.unit_count ?? 0 }, it.unit, { text: it.unit_price_usd == null ? "unknown" : sig(it.unit_price_usd), sort: it.unit_price_usd ?? -1 },
        { text: it.cost_usd == null ? "unknown" : sig(it.cost_usd), sort: it.cost_usd ?? -1 }, it.source]));
      makeSortable($("#bill"));
    };
    after.push(() => { bill(0); $("#bill-offer").addEventListener("change", (e) => bill(Number(e.target.value))); });
    html += `<div class="chart" id="chart-cost"></div>`;
    html += "<h2>Per provider and pricing</h2>" + table("t-cost", ["provider", "instance", "pricing", "region", "instances", "billed h", "compute $", "total $", "$/M tok", "price date", "source", "note"],
      r.options.map((o) => [o.provider, o.instance, o.pricing, o.region, { text: o.instances, sort: o.instances }, { text: sig(o.billed_hours), sort: o.billed_hours },
        { text: sig(o.compute_usd), sort: o.compute_usd ?? 1e18 }, { text: sig(o.total_known_usd), sort: o.total_known_usd ?? 1e18 },
        { text: o.usd_per_million_tokens == null ? "—" : sig(o.usd_per_million_tokens), sort: o.usd_per_million_tokens ?? 1e18 },
        (o.price_read_on ? `${o.price_read_on} (${o.price_age_days} d)` : "date unknown") + (o.stale ? " STALE" : ""), { text: o.price_source, html: esc(o.price_source) }, (o.price_conflicting ? "CONFLICTING price; " : "") + (o.note || "")]));
    if (r.stale) html += `<p class="hint">cheapest offer's price: ${staleMark(r)}</p>`;
    html += notesHtml(r.notes);
    after.push(() => { const top = r.options.filter((o) => o.total_known_usd != null).slice(0, 20);
      const names = top.map((o) => `${o.provider} ${o.instance} ${o.region || ""} (${o.pricing})`.replace(/\s+/g, " "));
      const seen = {};  // one bar per offer: a repeated label would stack two offers into one bar
      const unique = names.map((n) => { seen[n] = (seen[n] || 0) + 1; return seen[n] > 1 ? `${n} #${seen[n]}` : n; });
      chart("chart-cost", [{ type: "bar", orientation: "h", name: "total known cost", y: unique, x: top.map((o) => o.total_known_usd) }],
        { title: `Total known cost per offer (the ${top.length} cheapest)`, height: 110 + 24 * top.length, xaxis: { title: "total known cost (USD)" }, yaxis: { autorange: "reversed", title: "offer (provider, instance, region, pricing)" } }); });
  } else if (page === "tco") {
    const be = Object.entries(r.breakeven_month);
    html = figures([fig("on-prem capex", "capex_usd", r.capex_usd, "usd"), fig("on-prem opex per month", "monthly_opex_usd", r.monthly_opex_usd, "usd"),
      ...be.map(([k, v]) => (v == null ? fig(`breakeven vs ${k}`, `breakeven_month.${k}`, `never within ${r.months} months`) : fig(`breakeven vs ${k}`, `breakeven_month.${k}`, v, "months")))]);
    html += `<div class="chart" id="chart-tco"></div>`;
    html += "<h2>Cloud offers</h2>" + table("t-tco", ["pricing", "offer", "provider", "$/accelerator-h", "$/month", "instances", "breakeven month", "price date"],
      r.cloud.map((c) => [c.pricing, c.source_id, c.provider, { text: sig(c.usd_per_accelerator_hour), sort: c.usd_per_accelerator_hour }, { text: sig(c.monthly_usd), sort: c.monthly_usd },
        { text: c.instances ?? "", sort: c.instances ?? 0 }, { text: r.breakeven_month[`${c.pricing}:${c.source_id}`] ?? "never", sort: r.breakeven_month[`${c.pricing}:${c.source_id}`] ?? 1e9 },
        (c.read_on ? `${c.read_on} (${c.age_days} d)` : "date unknown") + (c.stale ? " STALE" : "")]));
    if (r.stale) html += `<p class="hint">${staleMark(r)}</p>`;
    html += notesHtml(r.notes);
    after.push(() => {
      const months = r.onprem_cumulative_usd.map((_, i) => i);
      const traces = [{ type: "scatter", mode: "lines", name: "on-prem", x: months, y: r.onprem_cumulative_usd, line: { width: 3 } }];
      for (const [k, ys] of Object.entries(r.cloud_cumulative_usd)) traces.push({ type: "scatter", mode: "lines", name: k, x: months, y: ys });
      const marks = be.filter(([, v]) => v != null).map(([k, v]) => ({ type: "scatter", mode: "markers", name: `breakeven ${k}`, x: [v], y: [r.onprem_cumulative_usd[v]], marker: { size: 10, symbol: "x" }, showlegend: false }));
      chart("chart-tco", traces.concat(marks), { title: "Cumulative cost: on-prem against each cloud offer", xaxis: { title: "month" }, yaxis: { title: "cumulative cost (USD)" }, height: 460, legend: { orientation: "v" } });
    });
  } else if (page === "schedule") {
    const j = r.jobs, f = r.failures;
    html = `<p>${esc(r.trace.jobs)} jobs (${esc(r.trace.source)}) on ${esc(r.cluster.total_gpus)} GPUs, policy ${esc(r.policy)}</p>` +
      figures([fig("finished", "jobs.finished", j.finished), fig("running at end", "jobs.running_at_end", j.running_at_end), fig("queued at end", "jobs.queued_at_end", j.queued_at_end),
        fig("end", "end_s", r.end_s, "h"), fig("utilisation", "utilisation_frac", r.utilisation_frac, "pct"),
        fig("utilisation while jobs arrive", "utilisation_while_arriving_frac", r.utilisation_while_arriving_frac, "pct"),
        fig("preemptions", "preemptions", r.preemptions), fig("head blocked by fragmentation", "fragmentation.head_blocked_with_enough_free_gpus_frac", r.fragmentation.head_blocked_with_enough_free_gpus_frac, "pct")]);
    if (f) html += "<h2>Node failures</h2>" + figures([fig("node failures", "failures.node_failures", f.node_failures), fig("job interruptions", "failures.job_interruptions", f.job_interruptions),
      fig("GPU-hours redone or restarting", "failures.lost_gpu_hours", f.lost_gpu_hours), fig("GPU-hours out for repair", "failures.down_gpu_hours", f.down_gpu_hours)]);
    html += `<div class="chart" id="chart-util"></div>`;
    const rows = [["all", r.all_jobs], ...Object.entries(r.by_size)].map(([k, st]) => { const q = st.queue_delay_s || {}, c = st.jct_s || {};
      return [k, { text: st.jobs, sort: st.jobs }, ...[q.p50, q.p90, q.p99, c.p50, c.p90, c.p99].map((v) => ({ text: v == null ? "—" : sig(v / 3600), sort: v ?? -1 }))]; });
    html += "<h2>Queueing delay and completion time by job size (hours)</h2>" + table("t-schedule", ["GPUs", "jobs", "wait p50", "wait p90", "wait p99", "JCT p50", "JCT p90", "JCT p99"], rows);
    html += notesHtml(r.notes);
    after.push(() => chart("chart-util", [{ type: "scatter", mode: "lines", name: "GPUs busy", line: { shape: "hv" }, x: r.utilisation_over_time.map((p) => p.t_start_s / 3600), y: r.utilisation_over_time.map((p) => p.busy_frac * 100) }],
      { title: "GPU utilisation over the trace", xaxis: { title: "time (h)" }, yaxis: { title: "GPUs busy (%)", range: [0, 100] } }));
  } else if (page === "pack") {
    const c = r.compare;
    html = figures([fig(r.objective === "cost" ? "$/hour" : "GPUs", "objective_value", r.objective_value), fig("GPUs", "gpus", r.gpus),
      fig("method", "method", r.method), fig("lower bound", "lower_bound", r.lower_bound), fig("gap to the bound", "gap_to_lower_bound_frac", r.gap_to_lower_bound_frac, "pct"),
      fig("whole GPUs instead", "compare.whole_gpus", c.whole_gpus), fig("time-slicing / MPS (memory bound)", "compare.time_slicing_or_mps_gpus_memory_bound", c.time_slicing_or_mps_gpus_memory_bound)]);
    html += "<h2>MIG layouts</h2>" + table("t-layouts", ["layout", "GPUs"], Object.entries(r.layouts).map(([k, v]) => [k, { text: v, sort: v }]));
    html += "<h2>Workloads</h2>" + table("t-workloads", ["workload", "kind", "accelerator", "profile", "instances", "detail"],
      r.workloads.map((w) => [w.name, w.kind, w.chosen.accelerator, w.chosen.profile, { text: w.chosen.instances, sort: w.chosen.instances }, w.chosen.detail || ""]));
    html += "<h2>Assignment</h2>" + table("t-assignment", ["GPU", "accelerator", "instances"],
      r.assignment.map((g) => [{ text: g.gpu, sort: g.gpu }, g.accelerator, g.instances.map((i) => `${i.profile}: ${i.workload ?? "(free)"}`).join(", ")]));
    html += "<h2>What each way of sharing shares</h2><ul class=\"notes\">" + Object.values(c.what_each_shares).map((t) => `<li>${esc(t)}</li>`).join("") + "</ul>";
  } else if (page === "datacenter") {
    const f = r.fabric;
    const siteUnit = r.facility_power_w >= 1e6 ? "MW" : "kW";  // IT and facility power in one unit
    html = figures([fig("nodes", "nodes", r.nodes), fig("racks", "racks", r.racks), fig("nodes per rack", "nodes_per_rack", r.nodes_per_rack),
      fig("node power", "node_power_w", r.node_power_w, "kW"), fig("rack power", "rack_power_w", r.rack_power_w, "kW"), fig("cooling", "cooling", r.cooling),
      fig("IT power", "it_power_w", r.it_power_w, siteUnit), fig("PUE", "pue_ratio", r.pue_ratio), fig("facility power", "facility_power_w", r.facility_power_w, siteUnit),
      fig("fabric", "fabric.topology", `${f.topology}, ${f.tiers} tiers`), fig("switches", "fabric.switches", f.switches), fig("transceivers", "fabric.transceivers", f.transceivers)]);
    html += `<div class="chart" id="chart-power"></div>`;
    html += "<h2>Fabric</h2>" + table("t-fabric", ["field", "value"], Object.entries(f).map(([k, v]) => [k, { text: String(v), sort: v }]));
    html += "<h2>Sources</h2>" + table("t-dc-sources", ["figure", "source"], [["node power", r.node_power_source], ["rack power limit", r.rack_power_limit_source],
      ["air-cooling limit", r.air_cooling_limit_source], ["PUE", r.pue?.source ?? ""], ["switch radix", r.switch_radix_source]].map(([a, b]) => [a, String(b ?? "")]));
    html += notesHtml(r.notes);
    const scale = UNITS[siteUnit][0];
    after.push(() => chart("chart-power", [{ type: "bar", name: "power", x: ["IT load", "facility (IT × PUE)"], y: [r.it_power_w / scale, r.facility_power_w / scale] }],
      { title: "IT and facility power", xaxis: { title: "" }, yaxis: { title: `power (${siteUnit})` } }));
  }
  out.innerHTML = html;
  addBands(out, r);
  makeSortable(out);
  after.forEach((f) => f());
}

// ---------- catalog
const CATALOG_TABS = ["accelerators", "systems", "interconnects", "models", "benchmarks", "prices"];
// a price older than the answer's stale_after_days (or undated): the mark and the command that refreshes it
function staleMark(r) {
  return r && r.stale ? ` — STALE (older than ${esc(r.stale_after_days)} days): run <code>${esc(r.refresh_command)}</code>` : "";
}

function sourcesHtml(sources) {
  return (sources || []).map((s) => `${s.url ? `<a href="${esc(s.url)}" rel="noreferrer noopener" target="_blank">${esc(s.title)}</a>` : esc(s.title)}${s.read_on ? ` (read ${esc(s.read_on)})` : ""}`).join("<br>");
}
const CATALOG_COLUMNS = {
  accelerators: [["id", (r) => r.id], ["name", (r) => r.name], ["memory GB", (r) => GBv(r.memory_bytes)], ["memory TB/s", (r) => r.memory_bw_bytes_per_s / 1e12],
    ["dense bf16 TFLOP/s", (r) => (r.dense_flop_per_s?.bf16 ?? r.dense_flop_per_s?.fp16 ?? null) / 1e12], ["dense fp8 TFLOP/s", (r) => (r.dense_flop_per_s?.fp8 ?? null) / 1e12],
    ["TDP W", (r) => r.tdp_w], ["scale-up", (r) => r.scale_up?.interconnect ?? ""]],
  systems: [["id", (r) => r.id], ["name", (r) => r.name], ["accelerator", (r) => r.accelerator], ["per node", (r) => r.accelerators_per_node], ["max power W", (r) => r.power_max_w]],
  interconnects: [["id", (r) => r.id], ["name", (r) => r.name], ["tier", (r) => r.tier], ["GB/s one way", (r) => r.bw_one_way_bytes_per_s / 1e9], ["latency µs", (r) => (r.latency_s == null ? null : r.latency_s * 1e6)]],
  models: [["id", (r) => r.id], ["name", (r) => r.name], ["layers", (r) => r.num_layers], ["hidden", (r) => r.hidden_size], ["heads", (r) => r.num_heads], ["KV heads", (r) => r.num_kv_heads], ["experts", (r) => r.num_experts]],
  benchmarks: [["id", (r) => r.id], ["name", (r) => r.name], ["suite", (r) => r.suite], ["model", (r) => r.model], ["input tokens", (r) => r.input_tokens], ["output tokens", (r) => r.output_tokens]],
  prices: [["id", (r) => r.id], ["provider", (r) => r.provider], ["instance", (r) => r.instance], ["region", (r) => r.region], ["accelerator", (r) => r.accelerator], ["per instance", (r) => r.accelerators_per_instance],
    ["pricing", (r) => r.pricing], ["$/h", (r) => r.usd_per_hour], ["$/accelerator-h", (r) => r.usd_per_accelerator_hour], ["conflicting", (r) => (r.conflicting ? "CONFLICT" : "")]],
};
async function renderCatalog(params) {
  const kind = CATALOG_TABS.includes(params.get("kind")) ? params.get("kind") : "accelerators";
  const tabs = CATALOG_TABS.map((k) => `<a href="#/catalog?kind=${k}" class="${k === kind ? "active" : ""}">${k}</a>`).join("");
  $("#main").innerHTML = `<h1>Catalog</h1><div class="tabs">${tabs}</div><div class="toolbar"><input id="search" placeholder="search ${kind}" value="${esc(params.get("q") || "")}"> <span id="count"></span></div><div id="status"></div><div class="error-box" id="error"></div><div id="result"></div>`;
  const myView = view;
  const data = await api(kind === "prices" ? "/api/v1/catalog/prices" : `/api/v1/catalog/${kind}`);
  if (!current(myView)) return;
  const cols = CATALOG_COLUMNS[kind];
  const rows = data.rows.map((r) => [...cols.map(([, f]) => { const v = f(r); return typeof v === "number" ? { text: sig(v), sort: v } : String(v ?? ""); }),
    kind === "prices" ? { html: `${r.source_url ? `<a href="${esc(r.source_url)}" rel="noreferrer noopener" target="_blank">${esc(r.source_title)}</a>` : esc(r.source_title)}`, text: r.source_title } : { html: sourcesHtml(r.sources), text: (r.sources || []).map((s) => s.title).join(" ") },
    kind === "prices" ? (r.read_on ? `${r.read_on} (${r.age_days} days old)` : "date unknown") + (r.stale ? " STALE" : "") : (r.sources || []).map((s) => s.read_on).filter(Boolean).join(", ") || "date unknown"]);
  $("#result").innerHTML = table("t-catalog", [...cols.map(([h]) => h), "sources", "read on"], rows);
  makeSortable($("#result"));
  const filter = () => {
    const q = $("#search").value.toLowerCase();
    let shown = 0;
    $("#t-catalog").tBodies[0].querySelectorAll("tr").forEach((tr) => { const ok = tr.textContent.toLowerCase().includes(q); tr.hidden = !ok; shown += ok; });
    $("#count").textContent = `${shown} of ${rows.length} rows`;
  };
  $("#search").addEventListener("input", filter);
  filter();
}

// ---------- MIG
async function renderMig(params) {
  const myView = view;
  const accs = (await once("accelerators", () => api("/api/v1/catalog/accelerators"))).rows.filter((r) => r.mig);
  if (!current(myView)) return;
  const acc = params.get("accelerator") || accs[0]?.id || "";
  const layout = params.get("layout") || "";
  $("#main").innerHTML = `<h1>MIG: instance profiles and layouts</h1>
    <div class="panel"><div class="toolbar"><label>accelerator <select id="mig-acc">${accs.map((a) => `<option${a.id === acc ? " selected" : ""}>${esc(a.id)}</option>`).join("")}</select></label>
    <label>layout to check <input id="mig-layout" size="40" placeholder="e.g. 3g.40gb,2g.20gb,1g.10gb (empty: list every full layout)" value="${esc(layout)}"></label>
    <button type="button" id="mig-go">Check</button></div><div class="err" data-err-for="layout"></div><div class="error-box" id="error"></div><div id="result"></div></div>`;
  const go = async () => {
    if (!current(myView)) return;  // a change event fired while leaving the page
    const a = $("#mig-acc").value, l = $("#mig-layout").value.trim();
    if (parseHash().page !== "mig") return;
    history.replaceState(null, "", `#/mig?accelerator=${encodeURIComponent(a)}${l ? "&layout=" + encodeURIComponent(l) : ""}`);
    $("#error").textContent = ""; $("[data-err-for='layout']").textContent = "";
    try {
      const r = await api(`/api/v1/mig/${encodeURIComponent(a)}${l ? "?layout=" + encodeURIComponent(l) : ""}`);
      if (!current(myView)) return;
      let html = table("t-mig", ["profile", "compute slices", "memory slices", "memory GB", "memory TB/s", "max instances", "start slices"],
        r.profiles.map((p) => [p.name, { text: `${p.compute_slices}/${r.compute_slices}`, sort: p.compute_slices }, { text: `${p.memory_slices}/${r.memory_slices}`, sort: p.memory_slices },
          { text: sig(p.memory_bytes / 1e9), sort: p.memory_bytes }, { text: sig(p.memory_bw_bytes_per_s / 1e12), sort: p.memory_bw_bytes_per_s }, { text: p.max_instances, sort: p.max_instances }, p.starts.join(", ")]));
      if (r.layout) html += `<h2>Layout valid</h2><p id="mig-placed">${r.layout.map((pl) => `${esc(pl.profile)} at slice ${esc(pl.start_slice)}`).join(", ")}</p>`;
      else html += `<h2 id="mig-count">${r.full_layouts.length} full layouts (no further instance fits)</h2><ul>${r.full_layouts.map((lay) => `<li>${lay.map((pl) => esc(pl.profile)).join(" + ")}</li>`).join("")}</ul>`;
      $("#result").innerHTML = html;
      makeSortable($("#result"));
    } catch (err) {
      if (!current(myView)) return;
      $("#result").innerHTML = "";
      $("#error").textContent = err.message;
      if ((err.detail?.field || "").includes("layout")) $("[data-err-for='layout']").textContent = err.message;
    }
  };
  $("#mig-go").addEventListener("click", go);
  $("#mig-acc").addEventListener("change", go);
  $("#mig-layout").addEventListener("change", go);
  go();
}

// ---------- validation
async function renderValidation(params) {
  const rows = params.get("rows") === "inference" ? "inference" : "training";
  $("#main").innerHTML = `<h1>Validation: predicted vs published measurements</h1>
    <div class="tabs"><a href="#/validation?rows=training" class="${rows === "training" ? "active" : ""}">training rows</a><a href="#/validation?rows=inference" class="${rows === "inference" ? "active" : ""}">inference rows</a></div>
    <div class="toolbar"><input id="search" placeholder="filter rows (id, metric, notes)"> <span id="count"></span><span id="status"></span><button type="button" id="cancel" hidden>Cancel</button></div>
    <div class="error-box" id="error"></div><div id="summary"></div><div class="chart" id="chart-validation"></div><div id="result"></div>`;
  const myView = view;
  const run = runJob("validate", null, `rows=${rows}`);
  state.inflight = run;
  $("#cancel").onclick = () => run.cancel();
  const started = performance.now();
  const tick = setInterval(() => setStatus(`predicting every row… ${((performance.now() - started) / 1000).toFixed(1)} s${run.progress}`, true), 200);
  let r;
  try { r = await run.promise; } catch (err) {
    clearInterval(tick);
    if (!current(myView)) return;
    if (err.cancelled || err.name === "AbortError") { setStatus("cancelled", false); return; }
    setStatus("", false); $("#error").textContent = err.message; return;
  }
  clearInterval(tick);
  if (!current(myView)) return;
  setStatus("", false);
  const s = r.summary;
  $("#summary").innerHTML = figures([fig("rows", "summary.n", s.n), fig("compared", "summary.n_compared", s.n_compared),
    fig("median |error|", "summary.median_abs_rel_error", s.median_abs_rel_error, "pct"),
    fig("p90 |error|", "summary.p90_abs_rel_error", s.p90_abs_rel_error, "pct")]);
  $("#result").innerHTML = table("t-validation", ["id", "metric", "measured", "predicted", "80 % interval (without its source)", "error %", "accelerators", "notes"],
    r.cases.map((c) => [c.id, c.metric, { text: sig(c.measured), sort: c.measured ?? 0 }, { text: sig(c.predicted), sort: c.predicted ?? 0 },
      { text: c.predicted_low == null ? "—" : `${sig(c.predicted_low)}–${sig(c.predicted_high)}`, sort: c.predicted_low ?? 0 },
      { text: c.rel_error == null ? "—" : (c.rel_error * 100).toFixed(1), sort: c.rel_error == null ? 1e9 : c.rel_error * 100 }, { text: c.accelerators_count ?? "", sort: c.accelerators_count ?? 0 }, c.notes || ""]));
  makeSortable($("#result"));
  const cmp = r.cases.filter((c) => c.predicted != null && c.measured != null && c.measured > 0 && c.predicted > 0);
  chart("chart-validation", [{ type: "scatter", mode: "markers", x: cmp.map((c) => c.measured), y: cmp.map((c) => c.predicted), text: cmp.map((c) => `${c.id} (${c.metric})`), name: "rows" },
    { type: "scatter", mode: "lines", x: [Math.min(...cmp.map((c) => c.measured)), Math.max(...cmp.map((c) => c.measured))], y: [Math.min(...cmp.map((c) => c.measured)), Math.max(...cmp.map((c) => c.measured))], name: "predicted = measured", line: { dash: "dash" } }],
  { title: "Predicted against measured, every compared row", xaxis: { type: "log", title: "measured (each row's metric and unit, log scale)" }, yaxis: { type: "log", title: "predicted (same unit, log scale)" }, height: 420 });
  const filter = () => {
    const q = $("#search").value.toLowerCase();
    let shown = 0;
    $("#t-validation").tBodies[0].querySelectorAll("tr").forEach((tr) => { const ok = tr.textContent.toLowerCase().includes(q); tr.hidden = !ok; shown += ok; });
    $("#count").textContent = `${shown} of ${r.cases.length} rows`;
  };
  $("#search").addEventListener("input", filter);
  filter();
}

window.addEventListener("hashchange", route);
route();
