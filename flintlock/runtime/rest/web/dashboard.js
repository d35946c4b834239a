// flintlock's web dashboard, for one job's live endpoint and for the history server (the
// same views, read from archives; /web/mode.json says which). It polls the REST API (same
// origin, bearer token in a header, never in a cookie or the URL) and renders the job list,
// the job graph (state, backpressure, busy time), the subtask table of the vertex clicked,
// charts of throughput, backpressure and watermarks since the job started (the server keeps
// the history), the TaskManagers with their log and stdout, the checkpoint history with a
// checkpoint's subtasks, the exception history with tracebacks and the configuration; on a
// live endpoint also cancel, savepoint and stop-with-savepoint buttons, which call the same
// authenticated API. No dependencies; every value from the API is written with textContent
// or as an SVG attribute, never as HTML.
"use strict";

const POLL_MS = 1000;
const HISTORY_POLL_MS = 10000;
const COLOURS = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037"];
const SVG = "http://www.w3.org/2000/svg";
const MAX_DATE_MS = 8.64e15; // beyond it a Date is invalid: Flink's MAX_WATERMARK is 2^63 - 1

const state = {
  token: null, mode: "live", plan: null, jobId: null, chosenJob: null, vertex: null,
  checkpoint: null, checkpointShown: null, output: null, timer: null, configShown: null,
};

function takeToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match) {
    sessionStorage.setItem("flintlock-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", window.location.pathname); // the token leaves the URL
  }
  state.token = sessionStorage.getItem("flintlock-token");
}

async function call(path, options = {}) {
  const headers = { Authorization: `Bearer ${state.token}` };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method: options.method || "GET", headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  if (response.status === 401) {
    throw Object.assign(new Error("the token was refused"), { unauthorized: true });
  }
  const text = await response.text();
  if (!response.ok) {
    let message = `HTTP ${response.status}`;
    try { message = JSON.parse(text).errors.join("; "); } catch (ignored) { /* not JSON */ }
    throw Object.assign(new Error(`${path}: ${message}`), { status: response.status });
  }
  return options.text ? text : JSON.parse(text);
}

const api = (path) => call(path);
const optional = (path) => call(path).catch((error) => {
  if (error.unauthorized) throw error;
  return null;
});

function el(tag, attrs = {}, text = null) {
  const node = tag.startsWith("svg:")
    ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  if (text !== null) node.textContent = String(text);
  return node;
}

function setStatus(text, kind = "ok") {
  const status = document.getElementById("status");
  status.textContent = text;
  status.dataset.state = kind;
}

const fmt = {
  time: (ms) => (ms > 0 ? new Date(ms).toLocaleTimeString() : "–"),
  ms: (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms)} ms`),
  bytes: (n) => {
    if (n === undefined || n === null || n < 0) return "–";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return `${i ? n.toFixed(1) : n} ${units[i]}`;
  },
  count: (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k`
    : `${n}`),
  rate: (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} M/s` : n >= 1e3
    ? `${(n / 1e3).toFixed(1)} k/s` : `${Math.round(n)}/s`),
  ratio: (r) => (r === null || r === undefined ? "–" : `${Math.round(r * 100)}%`),
  watermark: (w) => {
    if (w === null || w === undefined) return "–";
    if (w >= MAX_DATE_MS) return "end of event time";
    return w <= -MAX_DATE_MS ? "–" : new Date(w).toISOString();
  },
};

function fillTable(id, rows) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren(...rows.map(({ attrs, cells }) => {
    const tr = el("tr", attrs);
    for (const cell of cells) {
      if (cell instanceof Node) {
        const td = el("td");
        td.append(cell);
        tr.append(td);
      } else {
        tr.append(el("td", typeof cell === "number" ? { class: "num" } : {}, cell));
      }
    }
    return tr;
  }));
}

function renderJobs(jobs) {
  fillTable("jobs", jobs.map((job) => ({
    attrs: { "data-job-id": job.jid, "data-state": job.state, class: "clickable",
      "aria-selected": String(job.jid === state.jobId) },
    cells: [job.jid.slice(0, 8), job.name, job.state, fmt.time(job["start-time"]),
      fmt.ms(job.duration), `${job.tasks.RUNNING} / ${Object.values(job.tasks)
        .reduce((a, b) => a + b, 0)}`],
  })));
}

// Columns by depth from the sources, rows in plan order: enough for the jobs people run.
function layout(nodes) {
  const depth = new Map();
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const visit = (node) => {
    if (depth.has(node.id)) return depth.get(node.id);
    depth.set(node.id, 0);
    const d = Math.max(0, ...node.inputs.map((i) => (byId.has(i.id) ? visit(byId.get(i.id)) + 1 : 0)));
    depth.set(node.id, d);
    return d;
  };
  nodes.forEach(visit);
  const rows = new Map();
  const place = new Map();
  for (const node of nodes) {
    const column = depth.get(node.id);
    const row = rows.get(column) || 0;
    rows.set(column, row + 1);
    place.set(node.id, { x: 20 + column * 390, y: 30 + row * 130 });
  }
  return place;
}

function backlog(m) {
  if (m["pending-records"] !== undefined) return ` · backlog ${fmt.count(m["pending-records"])}`;
  if (m["pending-bytes"] !== undefined) return ` · backlog ${fmt.bytes(m["pending-bytes"])}`;
  return "";
}

// A long name wraps onto up to two lines (the full name is the vertex's tooltip).
function nameLines(name, width) {
  if (name.length <= width) return [name];
  const cut = name.lastIndexOf(" ", width);
  const at = cut > width / 2 ? cut : width;
  const rest = name.slice(at).trim();
  return [name.slice(0, at), rest.length > width ? `${rest.slice(0, width - 1)}…` : rest];
}

function renderGraph(details, levels) {
  const svg = document.getElementById("graph");
  const nodes = state.plan ? state.plan.plan.nodes : details.vertices.map((v) => ({
    id: v.id, parallelism: v.parallelism, description: v.name, inputs: [] }));
  const place = layout(nodes);
  const vertices = new Map(details.vertices.map((v) => [v.id, v]));
  const width = 320;
  const height = 110;
  const defs = el("svg:defs");
  const marker = el("svg:marker", { id: "arrow", viewBox: "0 0 10 10", refX: 10, refY: 5,
    markerWidth: 8, markerHeight: 8, orient: "auto-start-reverse" });
  marker.append(el("svg:path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#889" }));
  defs.append(marker);
  const parts = [defs];
  for (const node of nodes) {
    for (const input of node.inputs) {
      const from = place.get(input.id);
      const to = place.get(node.id);
      if (!from || !to) continue;
      const x1 = from.x + width;
      const y1 = from.y + height / 2;
      const x2 = to.x;
      const y2 = to.y + height / 2;
      parts.push(el("svg:path", { class: "edge", "data-from": input.id, "data-to": node.id,
        d: `M ${x1} ${y1} C ${x1 + 20} ${y1}, ${x2 - 20} ${y2}, ${x2} ${y2}` }));
      parts.push(el("svg:text", { class: "edge-label", x: (x1 + x2) / 2, y: (y1 + y2) / 2 - 8,
        "text-anchor": "middle" }, input.ship_strategy));
    }
  }
  for (const node of nodes) {
    const vertex = vertices.get(node.id) || { metrics: {}, status: "CREATED", name: node.description };
    const m = vertex.metrics || {};
    const level = levels.get(node.id) || "unknown";
    const busy = Math.min(1, (m["max-busy-time-ms-per-second"] || 0) / 1000);
    const { x, y } = place.get(node.id);
    const g = el("svg:g", { class: "vertex", "data-vertex-id": node.id, tabindex: 0,
      "data-backpressure": level, "data-status": vertex.status,
      "aria-selected": String(state.vertex === node.id),
      transform: `translate(${x} ${y})` });
    g.append(el("svg:title", {}, vertex.name || node.description));
    g.append(el("svg:rect", { width, height, fill: `rgba(21, 101, 192, ${0.08 + 0.5 * busy})` }));
    const title = nameLines(vertex.name || node.description, 46).map((t) => [t, "title"]);
    const lines = [
      ...title,
      [`parallelism ${node.parallelism} · ${vertex.status}${backlog(m)}`, "state"],
      [`records in ${m["read-records"] ?? 0} · out ${m["write-records"] ?? 0}`, "records"],
      [`busy ${Math.round(busy * 100)}% · backpressure ${level}`, "load"],
    ];
    lines.forEach(([text, cls], i) => {
      g.append(el("svg:text", { x: 10, y: 20 + i * 18, class: cls }, text));
    });
    parts.push(g);
  }
  const bottom = Math.max(...[...place.values()].map((p) => p.y)) + height + 20;
  const right = Math.max(...[...place.values()].map((p) => p.x)) + width + 20;
  svg.setAttribute("viewBox", `0 0 ${right} ${bottom}`);
  svg.style.height = `${bottom}px`;
  svg.replaceChildren(...parts);
}

// A vertex's throughput: records out per second, or for a vertex that emits nothing (a
// sink), records in.
function throughput(series) {
  const out = series["records-out-per-second"];
  return out.some((x) => x) ? out : series["records-in-per-second"];
}

// One chart: a polyline per vertex over the server's history (times, oldest first);
// ``column`` picks the vertex's series.
function drawChart(id, history, column, label) {
  const svg = document.getElementById(id);
  const times = history.times;
  const vertices = Object.entries(history.vertices).map(([id, v]) => [id, column(v)]);
  const shown = (x) => x !== null && Math.abs(x) < MAX_DATE_MS; // no end-of-time watermark
  const values = vertices.flatMap(([, v]) => v.filter(shown));
  const low = id === "chart-watermark" && values.length ? Math.min(...values) : 0;
  const high = Math.max(...values, 0);
  const range = high > low ? high - low : 1;
  const first = times[0];
  const span = Math.max(1, times[times.length - 1] - first);
  const parts = [];
  vertices.forEach(([vertexId, series], i) => {
    const points = [];
    series.forEach((value, j) => {
      if (!shown(value)) return;
      const x = (800 * (times[j] - first)) / span;
      const y = 195 - (190 * (value - low)) / range;
      points.push(`${x.toFixed(1)},${y.toFixed(1)}`);
    });
    if (points.length > 1) {
      parts.push(el("svg:polyline", { points: points.join(" "), fill: "none",
        stroke: COLOURS[i % COLOURS.length], "stroke-width": 2, "data-vertex-id": vertexId,
        "vector-effect": "non-scaling-stroke" }));
    }
  });
  parts.push(el("svg:text", { x: 4, y: 14, class: "edge-label" },
    values.length ? label(high) : "none yet"));
  svg.replaceChildren(...parts);
}

function renderHistory(history) {
  if (!history || !history.times.length) return;
  const note = document.getElementById("history-note");
  note.textContent = `${history.times.length} points from ${fmt.time(history.times[0])}`;
  drawChart("chart-throughput", history, throughput, (h) => `peak ${fmt.rate(h)}`);
  drawChart("chart-backpressure", history, (v) => v["backpressured-ratio"],
    (h) => `peak ${fmt.ratio(h)}`);
  drawChart("chart-watermark", history, (v) => v.watermark, (h) => `latest ${fmt.watermark(h)}`);
  const legend = document.getElementById("throughput-legend");
  legend.replaceChildren(...Object.entries(history.vertices).map(([vertexId, series], i) => {
    const rates = throughput(series).filter((x) => x !== null);
    const item = el("li", { "data-vertex-id": vertexId });
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = COLOURS[i % COLOURS.length]; // CSSOM: the CSP allows it
    const latest = rates.length ? rates[rates.length - 1] : 0;
    item.append(swatch, document.createTextNode(`${series.name}: ${fmt.rate(latest)}`));
    return item;
  }));
}

function networkBuffers(metrics) {
  if (!metrics) return "–";
  const used = metrics.nettyShuffleMemorySegmentsUsed;
  return `${used} of ${metrics.nettyShuffleMemorySegmentsTotal} (${fmt.bytes(metrics.nettyShuffleMemoryUsed)})`;
}

function outputButtons(tmId) {
  const span = el("span");
  for (const stream of ["log", "stdout"]) {
    const button = el("button", { type: "button", class: "tm-output", "data-tm-id": tmId,
      "data-stream": stream }, stream);
    span.append(button);
  }
  return span;
}

function renderTaskManagers(body) {
  fillTable("taskmanagers", body.taskmanagers.map((tm) => ({
    attrs: { "data-tm-id": tm.id },
    cells: [tm.id, tm.host ?? "–", tm.pid ?? "–", tm.slotsNumber,
      tm.memory ? fmt.bytes(tm.memory.rss) : "–", networkBuffers(tm.metrics),
      tm.hardware ? tm.hardware.cpuCores : "–", fmt.time(tm.timeSinceLastHeartbeat),
      outputButtons(tm.id)],
  })));
}

async function renderOutput() {
  if (!state.output) return;
  const { tmId, stream } = state.output;
  const text = await call(`/jobs/${state.jobId}/taskmanagers/${tmId}/${stream}`, { text: true })
    .catch((error) => { if (error.unauthorized) throw error; return `(${error.message})`; });
  document.getElementById("tm-output-panel").hidden = false;
  document.getElementById("tm-output-title").textContent = `${stream} of ${tmId}`;
  const pre = document.getElementById("tm-output");
  pre.dataset.tmId = tmId;
  pre.dataset.stream = stream;
  pre.textContent = text || "(empty)";
}

function renderCheckpoints(checkpoints) {
  const counts = checkpoints.counts;
  document.getElementById("checkpoint-counts").textContent =
    `${counts.completed} completed, ${counts.failed} failed, ${counts.in_progress} in progress`;
  fillTable("checkpoints", checkpoints.history.map((c) => ({
    attrs: { "data-checkpoint-id": c.id, "data-status": c.status, class: "clickable" },
    cells: [c.id, c.status, c.checkpoint_type, fmt.time(c.trigger_timestamp),
      fmt.ms(c.end_to_end_duration), fmt.bytes(c.state_size), fmt.bytes(c.checkpointed_size),
      fmt.ms(c.alignment_duration), fmt.bytes(c.persisted_data),
      `${c.num_acknowledged_subtasks}/${c.num_subtasks}`,
      c.status === "FAILED" ? (c.failure_message || c.failure_reason || "") : ""],
  })));
}

// A checkpoint's subtasks: fetched while it is in the history and not yet final (a completed
// or failed checkpoint's figures do not change); one that left the bounded history keeps
// what was shown.
async function renderCheckpointSubtasks(details, checkpoints) {
  if (state.checkpoint === null) return;
  const entry = checkpoints.history.find((c) => c.id === state.checkpoint);
  const title = document.getElementById("checkpoint-title");
  if (!entry) {
    title.textContent = `${state.checkpoint} (no longer in the history)`;
    return;
  }
  if (state.checkpointShown === state.checkpoint && entry.status !== "IN_PROGRESS") return;
  state.checkpointShown = state.checkpoint;
  const base = `/jobs/${state.jobId}/checkpoints/details/${state.checkpoint}`;
  const names = new Map(details.vertices.map((v) => [v.id, v.name]));
  const bodies = await Promise.all(details.vertices.map((v) => optional(`${base}/subtasks/${v.id}`)));
  const rows = [];
  bodies.forEach((body) => {
    if (!body) return;
    for (const s of body.subtasks) {
      const done = s.status === "completed";
      rows.push({ attrs: { "data-vertex-id": body.vertex, "data-subtask": s.index },
        cells: [names.get(body.vertex) || body.vertex, s.index, s.status,
          done ? fmt.ms(s.end_to_end_duration) : "–", done ? fmt.bytes(s.state_size) : "–",
          done ? fmt.ms(s.alignment.duration) : "–", done ? fmt.bytes(s.alignment.persisted) : "–",
          done ? fmt.ms(s.start_delay) : "–", done ? String(s.unaligned_checkpoint) : "–"] });
    }
  });
  document.getElementById("checkpoint-panel").hidden = false;
  title.textContent = String(state.checkpoint);
  fillTable("checkpoint-subtasks", rows);
}

function renderExceptions(exceptions) {
  const entries = (exceptions.exceptionHistory || {}).entries || [];
  fillTable("exceptions", entries.map((e) => {
    const details = el("details");
    details.append(el("summary", {}, `${e.exceptionName}: ${e.message ?? ""}`),
      el("pre", { class: "trace" }, e.stacktrace));
    return { attrs: { "data-kind": e.kind }, cells: [fmt.time(e.timestamp), e.attempt, e.kind, details] };
  }));
}

function renderConfig(config) {
  if (!config || state.configShown === state.jobId) return;
  state.configShown = state.jobId;
  const rows = [];
  for (const [key, value] of Object.entries(config["execution-config"] || {})) {
    rows.push({ attrs: { "data-key": key }, cells: [key, JSON.stringify(value)] });
  }
  for (const [key, value] of Object.entries(config.configuration || {})) {
    rows.push({ attrs: { "data-key": key }, cells: [key, String(value)] });
  }
  fillTable("configuration", rows);
}

async function renderVertex(details) {
  const panel = document.getElementById("vertex-panel");
  const vertex = details.vertices.find((v) => v.id === state.vertex);
  if (!vertex) { panel.hidden = true; return; }
  const body = await optional(`/jobs/${state.jobId}/vertices/${vertex.id}`);
  panel.hidden = false;
  panel.dataset.vertexId = vertex.id;
  document.getElementById("vertex-title").textContent = vertex.name;
  const subtasks = body ? body.subtasks : vertex.subtasks.map((s) => ({ ...s, metrics: {} }));
  fillTable("subtasks", subtasks.map((s) => ({
    attrs: { "data-subtask": s.subtask, "data-status": s.status },
    cells: [s.subtask, s.status, s["taskmanager-id"] || "–", s.metrics["read-records"] ?? 0,
      s.metrics["write-records"] ?? 0, fmt.ratio(s.busyRatio), fmt.ratio(s.backPressuredRatio),
      fmt.ratio(s.idleRatio), fmt.watermark(s.watermark), fmt.bytes(s["state-size"])],
  })));
}

async function backpressureLevels(jobId, vertices) {
  const levels = new Map();
  await Promise.all(vertices.map(async (v) => {
    const body = await optional(`/jobs/${jobId}/vertices/${v.id}/backpressure`);
    levels.set(v.id, body && body.status === "ok" ? body.backpressureLevel : "unknown");
  }));
  return levels;
}

async function refresh() {
  const overview = await api("/jobs/overview");
  renderJobs(overview.jobs);
  if (!overview.jobs.length) return;
  const chosen = overview.jobs.find((j) => j.jid === state.chosenJob) || overview.jobs[0];
  const jobId = chosen.jid;
  if (state.jobId !== jobId) {
    Object.assign(state, { jobId, plan: null, vertex: null, checkpoint: null,
      checkpointShown: null, output: null, configShown: null });
    renderJobs(overview.jobs);
    for (const id of ["vertex-panel", "checkpoint-panel", "tm-output-panel"]) {
      document.getElementById(id).hidden = true;
    }
  }
  if (!state.plan) state.plan = await optional(`/jobs/${jobId}/plan`);
  const base = `/jobs/${jobId}`;
  const [details, checkpoints, exceptions, managers, history, config] = await Promise.all([
    api(base), api(`${base}/checkpoints`), api(`${base}/exceptions`),
    optional(`${base}/taskmanagers`), optional(`${base}/metrics-history`),
    state.configShown === jobId ? null : optional(`${base}/config`)]);
  // the job's row says what its details say (the job may have changed state in between)
  renderJobs(overview.jobs.map((j) => (j.jid === jobId ? { ...j, state: details.state } : j)));
  document.getElementById("job").hidden = false;
  document.getElementById("job").dataset.state = details.state;
  document.getElementById("job-title").textContent =
    `${details.name} (${details.state}, attempt ${details.attempt ?? 0})`;
  document.getElementById("actions").hidden = state.mode !== "live" || !details.isStoppable;
  const levels = await backpressureLevels(jobId, details.vertices);
  renderGraph(details, levels);
  renderHistory(history);
  if (managers) renderTaskManagers(managers);
  renderCheckpoints(checkpoints);
  renderExceptions(exceptions);
  renderConfig(config);
  await Promise.all([renderVertex(details), renderCheckpointSubtasks(details, checkpoints),
    renderOutput()]);
  setStatus(`updated ${new Date().toLocaleTimeString()}`);
}

async function poll() {
  clearTimeout(state.timer);
  try {
    await refresh();
  } catch (error) {
    if (error.unauthorized) {
      sessionStorage.removeItem("flintlock-token");
      state.token = null;
      showLogin("the token was refused; enter this job's token");
      return;
    }
    if (state.mode === "live" && error instanceof TypeError) { // no answer at all
      setStatus("cannot reach the job: its endpoint closes when the job ends "
        + "(flintlock history shows archived jobs)", "error");
    } else {
      setStatus(`cannot reach the ${state.mode === "live" ? "job" : "history server"}: ${error.message}`, "error");
    }
  }
  state.timer = setTimeout(poll, state.mode === "live" ? POLL_MS : HISTORY_POLL_MS);
}

// -- job control (live endpoint only) ---------------------------------------------------

function actionResult(text, kind = "ok") {
  const out = document.getElementById("action-result");
  out.textContent = text;
  out.dataset.state = kind;
}

async function waitForSavepoint(what, requestId) {
  for (let i = 0; i < 3600; i += 1) {
    const body = await api(`/jobs/${state.jobId}/savepoints/${requestId}`);
    if (body.status.id === "COMPLETED") {
      const operation = body.operation || {};
      if (operation.location) {
        actionResult(`${what} completed: ${operation.location}`, "done");
      } else {
        actionResult(`${what} failed: ${(operation["failure-cause"] || {}).message}`, "error");
      }
      return;
    }
    await new Promise((resolve) => { setTimeout(resolve, 500); });
  }
}

async function act(what, request, follow) {
  actionResult(`${what}: requested…`, "pending");
  try {
    const body = await call(`/jobs/${state.jobId}${request.path}`, request);
    if (follow) await waitForSavepoint(what, body["request-id"]);
    else actionResult(`${what}: requested`, "done");
  } catch (error) {
    if (error.unauthorized) { showLogin("the token was refused; enter this job's token"); return; }
    actionResult(`${what} refused: ${error.message}`, "error");
  }
  poll();
}

function savepointDirectory() {
  const value = document.getElementById("savepoint-dir").value.trim();
  return value || null;
}

function wireActions() {
  document.getElementById("cancel-job").addEventListener("click", () => act("cancel",
    { path: "?mode=cancel", method: "PATCH" }, false));
  document.getElementById("trigger-savepoint").addEventListener("click", () => act("savepoint",
    { path: "/savepoints", method: "POST", body: { "target-directory": savepointDirectory() } },
    true));
  document.getElementById("stop-job").addEventListener("click", () => act("stop", {
    path: "/stop", method: "POST", body: { targetDirectory: savepointDirectory(),
      drain: document.getElementById("stop-drain").checked } }, true));
}

// -- selection by click -----------------------------------------------------------------

function wireSelection() {
  document.getElementById("jobs").addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-job-id]");
    if (row) { state.chosenJob = row.dataset.jobId; poll(); }
  });
  const chooseVertex = (event) => {
    const vertex = event.target.closest("g.vertex");
    if (vertex) { state.vertex = vertex.dataset.vertexId; poll(); }
  };
  document.getElementById("graph").addEventListener("click", chooseVertex);
  document.getElementById("graph").addEventListener("keydown", (event) => {
    if (event.key === "Enter") chooseVertex(event);
  });
  document.getElementById("checkpoints").addEventListener("click", (event) => {
    const row = event.target.closest("tr[data-checkpoint-id]");
    if (row) { state.checkpoint = Number(row.dataset.checkpointId); poll(); }
  });
  document.getElementById("taskmanagers").addEventListener("click", (event) => {
    const button = event.target.closest("button.tm-output");
    if (button) {
      state.output = { tmId: button.dataset.tmId, stream: button.dataset.stream };
      poll();
    }
  });
}

function showLogin(message) {
  document.getElementById("app").hidden = true;
  document.getElementById("login").hidden = false;
  setStatus(message, "error");
}

function start() {
  document.getElementById("login").hidden = true;
  document.getElementById("app").hidden = false;
  poll();
}

document.addEventListener("DOMContentLoaded", async () => {
  takeToken();
  const mode = await fetch("/web/mode.json").then((r) => r.json()).catch(() => ({ mode: "live" }));
  state.mode = mode.mode;
  document.getElementById("mode").hidden = state.mode !== "history";
  document.body.dataset.mode = state.mode;
  wireActions();
  wireSelection();
  document.getElementById("login").addEventListener("submit", (event) => {
    event.preventDefault();
    state.token = document.getElementById("token").value.trim();
    sessionStorage.setItem("flintlock-token", state.token);
    start();
  });
  window.addEventListener("hashchange", () => { // a link with #token= opened in this tab
    takeToken();
    if (state.token) start();
  });
  if (state.token) start(); else showLogin("enter the REST token");
});
