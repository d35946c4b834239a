// flintlock's web dashboard: polls the job's REST API (same origin, bearer token) once a
// second and renders the job list, the job graph (coloured by backpressure and busy time),
// a throughput chart, the TaskManagers, the checkpoint history and the exception history.
// No dependencies; every value from the API is written with textContent or as an SVG
// attribute, never as HTML.
"use strict";

const POLL_MS = 1000;
const HISTORY = 300; // samples of the throughput chart: five minutes at one per second
const COLOURS = ["#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037"];
const SVG = "http://www.w3.org/2000/svg";

const state = { token: null, plan: null, jobId: null, samples: [], last: null, timer: null };

function takeToken() {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  if (match) {
    sessionStorage.setItem("flintlock-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", window.location.pathname); // the token leaves the URL
  }
  state.token = sessionStorage.getItem("flintlock-token");
}

async function api(path) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${state.token}` } });
  if (response.status === 401) {
    throw Object.assign(new Error("the token was refused"), { unauthorized: true });
  }
  if (!response.ok) {
    throw new Error(`${path}: HTTP ${response.status}`);
  }
  return response.json();
}

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
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i += 1; }
    return `${i ? n.toFixed(1) : n} ${units[i]}`;
  },
  count: (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k`
    : `${n}`),
  rate: (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(2)} M/s` : n >= 1e3
    ? `${(n / 1e3).toFixed(1)} k/s` : `${Math.round(n)}/s`),
};

function fillTable(id, rows) {
  const body = document.querySelector(`#${id} tbody`);
  body.replaceChildren(...rows.map(({ attrs, cells }) => {
    const tr = el("tr", attrs);
    for (const cell of cells) {
      const numeric = typeof cell === "number";
      tr.append(el("td", numeric ? { class: "num" } : {}, cell));
    }
    return tr;
  }));
}

function renderJobs(jobs) {
  fillTable("jobs", jobs.map((job) => ({
    attrs: { "data-job-id": job.jid, "data-state": job.state },
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

function renderGraph(details, levels) {
  const svg = document.getElementById("graph");
  const nodes = state.plan ? state.plan.plan.nodes : details.vertices.map((v) => ({
    id: v.id, parallelism: v.parallelism, description: v.name, inputs: [] }));
  const place = layout(nodes);
  const vertices = new Map(details.vertices.map((v) => [v.id, v]));
  const width = 290;
  const height = 96;
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
    const g = el("svg:g", { class: "vertex", "data-vertex-id": node.id,
      "data-backpressure": level, "data-status": vertex.status,
      transform: `translate(${x} ${y})` });
    g.append(el("svg:rect", { width, height, fill: `rgba(21, 101, 192, ${0.08 + 0.5 * busy})` }));
    const lines = [
      [vertex.name || node.description, "title"],
      [`parallelism ${node.parallelism} · ${vertex.status}${backlog(m)}`, ""],
      [`records in ${m["read-records"] ?? 0} · out ${m["write-records"] ?? 0}`, "records"],
      [`busy ${Math.round(busy * 100)}% · backpressure ${level}`, "load"],
    ];
    lines.forEach(([text, cls], i) => {
      const label = text.length > 44 ? `${text.slice(0, 43)}…` : text;
      g.append(el("svg:text", { x: 10, y: 22 + i * 20, class: cls }, label));
    });
    parts.push(g);
  }
  const bottom = Math.max(...[...place.values()].map((p) => p.y)) + height + 20;
  const right = Math.max(...[...place.values()].map((p) => p.x)) + width + 20;
  svg.setAttribute("viewBox", `0 0 ${right} ${bottom}`);
  svg.style.height = `${bottom}px`;
  svg.replaceChildren(...parts);
}

function recordThroughput(details) {
  const now = Date.now();
  const totals = new Map(details.vertices.map((v) => {
    const m = v.metrics || {};
    return [v.id, Math.max(m["write-records"] || 0, m["read-records"] || 0)];
  }));
  if (state.last) {
    const seconds = Math.max(0.001, (now - state.last.at) / 1000);
    const rates = new Map();
    for (const [id, total] of totals) {
      rates.set(id, Math.max(0, (total - (state.last.totals.get(id) || 0)) / seconds));
    }
    state.samples.push({ at: now, rates });
    if (state.samples.length > HISTORY) state.samples.shift();
  }
  state.last = { at: now, totals };
}

function renderThroughput(details) {
  const svg = document.getElementById("throughput");
  const legend = document.getElementById("throughput-legend");
  const samples = state.samples;
  const peak = Math.max(1, ...samples.flatMap((s) => [...s.rates.values()]));
  const lines = [];
  const entries = [];
  details.vertices.forEach((vertex, i) => {
    const colour = COLOURS[i % COLOURS.length];
    const points = samples.map((s, j) => {
      const x = (800 * (HISTORY - samples.length + j)) / (HISTORY - 1);
      const y = 195 - (190 * (s.rates.get(vertex.id) || 0)) / peak;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    });
    if (points.length > 1) {
      lines.push(el("svg:polyline", { points: points.join(" "), fill: "none", stroke: colour,
        "stroke-width": 2, "data-vertex-id": vertex.id, "vector-effect": "non-scaling-stroke" }));
    }
    const latest = samples.length ? samples[samples.length - 1].rates.get(vertex.id) || 0 : 0;
    const item = el("li", { "data-vertex-id": vertex.id });
    const swatch = el("span", { class: "swatch" });
    swatch.style.background = colour; // CSSOM, not a style attribute: the CSP allows it
    item.append(swatch, document.createTextNode(`${vertex.name}: ${fmt.rate(latest)}`));
    entries.push(item);
  });
  lines.push(el("svg:text", { x: 4, y: 14, class: "edge-label" }, `peak ${fmt.rate(peak)}`));
  svg.replaceChildren(...lines);
  legend.replaceChildren(...entries);
}

function networkBuffers(metrics) {
  if (!metrics) return "–";
  const used = metrics.nettyShuffleMemorySegmentsUsed;
  return `${used} of ${metrics.nettyShuffleMemorySegmentsTotal} (${fmt.bytes(metrics.nettyShuffleMemoryUsed)})`;
}

function renderTaskManagers(body) {
  fillTable("taskmanagers", body.taskmanagers.map((tm) => ({
    attrs: { "data-tm-id": tm.id },
    cells: [tm.id, tm.host ?? "–", tm.pid ?? "–", tm.slotsNumber,
      tm.memory ? fmt.bytes(tm.memory.rss) : "–", networkBuffers(tm.metrics),
      tm.hardware ? tm.hardware.cpuCores : "–", fmt.time(tm.timeSinceLastHeartbeat)],
  })));
}

function renderCheckpoints(checkpoints) {
  const counts = checkpoints.counts;
  document.getElementById("checkpoint-counts").textContent =
    `${counts.completed} completed, ${counts.failed} failed, ${counts.in_progress} in progress`;
  fillTable("checkpoints", checkpoints.history.map((c) => ({
    attrs: { "data-checkpoint-id": c.id, "data-status": c.status },
    cells: [c.id, c.status, c.checkpoint_type, fmt.time(c.trigger_timestamp),
      fmt.ms(c.end_to_end_duration), fmt.bytes(c.state_size), fmt.bytes(c.checkpointed_size),
      fmt.ms(c.alignment_duration), fmt.bytes(c.persisted_data),
      `${c.num_acknowledged_subtasks}/${c.num_subtasks}`],
  })));
}

function renderExceptions(exceptions) {
  const entries = (exceptions.exceptionHistory || {}).entries || [];
  fillTable("exceptions", entries.map((e) => ({
    attrs: { "data-kind": e.kind },
    cells: [fmt.time(e.timestamp), e.attempt, e.kind, `${e.exceptionName}: ${e.stacktrace}`],
  })));
}

async function backpressureLevels(jobId, vertices) {
  const levels = new Map();
  await Promise.all(vertices.map(async (v) => {
    const body = await api(`/jobs/${jobId}/vertices/${v.id}/backpressure`);
    levels.set(v.id, body.status === "ok" ? body.backpressureLevel : "unknown");
  }));
  return levels;
}

async function refresh() {
  const overview = await api("/jobs/overview");
  renderJobs(overview.jobs);
  if (!overview.jobs.length) return;
  const jobId = overview.jobs[0].jid;
  if (state.jobId !== jobId) {
    Object.assign(state, { jobId, plan: null, samples: [], last: null });
  }
  if (!state.plan) {
    state.plan = await api(`/jobs/${jobId}/plan`).catch(() => null);
  }
  const [details, checkpoints, exceptions, managers] = await Promise.all([
    api(`/jobs/${jobId}`), api(`/jobs/${jobId}/checkpoints`), api(`/jobs/${jobId}/exceptions`),
    api("/taskmanagers")]);
  document.getElementById("job-title").textContent = `${details.name} (${details.state})`;
  const levels = await backpressureLevels(jobId, details.vertices);
  recordThroughput(details);
  renderGraph(details, levels);
  renderThroughput(details);
  renderTaskManagers(managers);
  renderCheckpoints(checkpoints);
  renderExceptions(exceptions);
  setStatus(`updated ${new Date().toLocaleTimeString()}`);
}

async function poll() {
  try {
    await refresh();
  } catch (error) {
    if (error.unauthorized) {
      sessionStorage.removeItem("flintlock-token");
      state.token = null;
      showLogin("the token was refused; enter this job's token");
      return;
    }
    setStatus(`cannot reach the job: ${error.message}`, "error");
  }
  state.timer = setTimeout(poll, POLL_MS);
}

function showLogin(message) {
  document.getElementById("app").hidden = true;
  document.getElementById("login").hidden = false;
  setStatus(message, "error");
}

function start() {
  document.getElementById("login").hidden = true;
  document.getElementById("app").hidden = false;
  clearTimeout(state.timer);
  poll();
}

document.addEventListener("DOMContentLoaded", () => {
  takeToken();
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
  if (state.token) start(); else showLogin("enter this job's REST token");
});
