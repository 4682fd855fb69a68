// fabricscope web page: sends the pasted text to the engine in worker.js and
// renders the JSON report. All diagnosis logic lives in the engine; this file
// only displays what it returns.

import { h, table, SEVERITIES, severityRank, plural } from "./dom.js";
import { renderPictures } from "./pictures.js";
import { decodeFragment, encodeFragment, reportMarkdown } from "./share.js";

const EXAMPLES = [
  { file: "h200-nvlink-health.txt", label: "H200 NVLink health", interval: null },
  { file: "h200-nvlink-traffic.txt", label: "H200 NVLink traffic", interval: "2" },
  { file: "ib-two-hosts.txt", label: "InfiniBand, 2 hosts", interval: null },
  { file: "ibsim-ports-down.txt", label: "IB sim: ports down", interval: null },
  { file: "ibsim-error-counters.txt", label: "IB sim: error counters", interval: null },
];
const DEBOUNCE_MS = 250;
/** Findings rendered at once per list; the rest behind a "show more" button. */
const PAGE_SIZE = 200;

const $ = (id) => document.getElementById(id);
const input = $("input");
const linesView = $("lines");
// The filter bar lives at the top of the findings panel, which is re-rendered.
const filtersBar = $("filters");

const state = {
  worker: null,
  ready: false,
  everReady: false,
  busy: false,
  timer: 0,
  progressTimer: 0,
  latest: { id: 0, text: "", sentAt: 0 },
  pending: null,
  calls: new Map(),
  callCount: 0,
  report: null,
  reportLines: [],
  reportText: "",
  linesShown: null,
  marks: null,
  picturesFor: null,
  filters: { severities: new Set(SEVERITIES), host: "", rule: "" },
};

// ---------------------------------------------------------------- DOM helpers

function setPanel(name, ...children) {
  $(`panel-${name}`).replaceChildren(...children.flat());
}

function setTabCount(name, count) {
  const tab = $(`tab-${name}`);
  tab.querySelector(".tab-count")?.remove();
  if (count != null) tab.append(h("span", { class: "tab-count" }, String(count)));
}

function setState(value) {
  document.body.dataset.state = value;
}

function lineLabel(first, last) {
  return first === last || last == null ? `L${first}` : `L${first}–${last}`;
}

function lineLink(first, last) {
  if (first == null) return h("span", { class: "muted" }, "—");
  return h("button", {
    type: "button",
    class: "line-link",
    "data-first": first,
    "data-last": last ?? first,
    "aria-label": `Show input ${first === last ? "line" : "lines"} ${lineLabel(first, last).slice(1)}`,
  }, lineLabel(first, last));
}

function empty(text) {
  return h("p", { class: "empty" }, text);
}

function megabytes(n) {
  return n >= 1 << 20 ? `${(n / (1 << 20)).toFixed(1)} MB` : `${Math.max(1, Math.round(n / 1024))} kB`;
}

// ---------------------------------------------------------------- markdown
// Rule explanations are short markdown: headings, paragraphs, lists, fenced
// code, `code`, **bold** and [links](https://…). Built as DOM nodes, never as
// HTML strings, so nothing in them can run.

const INLINE = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\(([^)\s]+)\)/g;

function renderInline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    out.push(text.slice(last, m.index));
    if (m[1] != null) out.push(h("code", {}, m[1]));
    else if (m[2] != null) out.push(h("strong", {}, m[2]));
    else if (/^https?:\/\//.test(m[4])) out.push(h("a", { href: m[4], rel: "noopener noreferrer", target: "_blank" }, m[3]));
    else out.push(m[3]);
    last = m.index + m[0].length;
  }
  out.push(text.slice(last));
  return out;
}

function renderMarkdown(markdown) {
  const blocks = [];
  const lines = markdown.split("\n");
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (line.startsWith("```")) {
      const end = lines.findIndex((l, j) => j > i && l.startsWith("```"));
      const stop = end < 0 ? lines.length : end;
      blocks.push(h("pre", {}, h("code", {}, lines.slice(i + 1, stop).join("\n"))));
      i = stop + 1;
    } else if (/^#{1,6} /.test(line)) {
      const level = Math.min(6, line.indexOf(" ") + 2);
      blocks.push(h(`h${level}`, {}, renderInline(line.slice(line.indexOf(" ") + 1))));
      i++;
    } else if (/^\s*([-*]|\d+\.) /.test(line)) {
      const ordered = /^\s*\d+\./.test(line);
      const items = [];
      for (; i < lines.length && /^\s*([-*]|\d+\.) /.test(lines[i]); i++) {
        items.push(h("li", {}, renderInline(lines[i].replace(/^\s*([-*]|\d+\.) /, ""))));
      }
      blocks.push(h(ordered ? "ol" : "ul", {}, items));
    } else if (line.trim() === "") {
      i++;
    } else {
      const para = [];
      for (; i < lines.length && lines[i].trim() !== "" && !/^(```|#{1,6} |\s*([-*]|\d+\.) )/.test(lines[i]); i++) {
        para.push(lines[i].trim());
      }
      blocks.push(h("p", {}, renderInline(para.join(" "))));
    }
  }
  return blocks;
}

// ----------------------------------------------------------- analysis cycle
// One worker runs one analysis at a time. When the text changes while it is
// busy, the stale analysis is cancelled by terminating the worker and
// starting a fresh one (wasm cannot be interrupted from outside).

function startWorker() {
  const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });
  state.worker = worker;
  state.ready = false;
  state.busy = false;
  worker.onmessage = ({ data }) => {
    if (worker !== state.worker) return;
    onWorkerMessage(data);
  };
  worker.onerror = (event) => {
    event.preventDefault();
    if (worker === state.worker) showFatal(`The analysis worker failed: ${event.message || "unknown error"}`);
  };
}

function restartWorker() {
  state.worker?.terminate();
  for (const { reject } of state.calls.values()) reject(new Error("cancelled: the text changed"));
  state.calls.clear();
  startWorker();
}

function onWorkerMessage(data) {
  if (data.type === "ready") return onReady(data);
  if (data.type === "fatal") return showFatal(data.error);
  const call = state.calls.get(data.id);
  if (call) {
    state.calls.delete(data.id);
    if (data.type === "html") call.resolve(data.html);
    else if (data.type === "redacted") call.resolve(JSON.parse(data.json));
    else call.reject(new Error(data.error));
    return;
  }
  if (data.id !== state.latest.id) return;
  state.busy = false;
  stopProgress();
  if (data.type === "result") onResult(data);
  else if (data.type === "interval") onIntervalError(data.error);
  else if (data.type === "error") onEngineError(data.error);
}

/** Asks the worker for something other than an analysis; resolves with its answer. */
function ask(message) {
  if (!state.ready) return Promise.reject(new Error("the engine is not ready"));
  const id = `call-${++state.callCount}`; // never equal to an analysis id (a number)
  return new Promise((resolve, reject) => {
    state.calls.set(id, { resolve, reject });
    state.worker.postMessage({ ...message, id });
  });
}

function options() {
  const raw = $("interval").value.trim();
  return { interval: raw === "" ? null : raw, max_input_bytes: null };
}

/** Typing waits for a pause; a paste or drop is analysed at once. */
function scheduleAnalysis(event) {
  clearTimeout(state.timer);
  if (/^insertFrom(Paste|Drop)$/.test(event?.inputType ?? "")) return requestAnalysis();
  state.timer = setTimeout(requestAnalysis, DEBOUNCE_MS);
}

function requestAnalysis() {
  clearTimeout(state.timer);
  const text = input.value;
  state.latest = { id: state.latest.id + 1, text, sentAt: performance.now() };
  if (text.trim() === "") {
    if (state.busy) restartWorker();
    stopProgress();
    showIdle();
    return;
  }
  if (state.busy) restartWorker();
  setState("busy");
  startProgress(text.length);
  state.pending = { type: "analyze", id: state.latest.id, text, options: options() };
  if (state.ready) sendPending();
}

function sendPending() {
  if (!state.pending) return;
  state.busy = true;
  state.worker.postMessage(state.pending);
  state.pending = null;
}

function onReady({ version, rules }) {
  state.ready = true;
  if (!state.everReady) {
    state.everReady = true;
    $("engine-version").textContent = `fabricscope ${version}`;
    renderRules(JSON.parse(rules));
    if (state.pending === null && document.body.dataset.state === "loading") requestAnalysis();
  }
  sendPending();
}

// A progress indication while the worker runs: the engine cannot report
// progress from inside one call, so the bar is indeterminate and the elapsed
// time counts up, once a second: each update lays the page out again, which
// with megabytes in the textarea costs the main thread ~70 ms (at ten
// updates a second it was busy most of the time the worker ran).
function startProgress(bytes) {
  stopProgress();
  const started = performance.now();
  const size = megabytes(bytes);
  const tick = () => {
    const seconds = (performance.now() - started) / 1000;
    $("timing").textContent = `Analysing ${size}… ${seconds.toFixed(1)} s`;
  };
  $("progress").hidden = false;
  tick();
  state.progressTimer = setInterval(tick, 1000);
}

function stopProgress() {
  clearInterval(state.progressTimer);
  $("progress").hidden = true;
}

function onResult({ json, engineMs }) {
  const receivedAt = performance.now();
  const report = JSON.parse(json);
  state.report = report;
  state.reportLines = state.latest.text.split("\n");
  state.reportText = json;
  hideError();
  setIntervalValid(true);
  renderReport(report);
  const renderMs = performance.now() - receivedAt;
  const totalMs = performance.now() - state.latest.sentAt;
  $("timing").textContent =
    `${plural(state.reportLines.length, "line")} analysed in ${Math.round(totalMs)} ms (engine ${engineMs.toFixed(1)} ms, page ${Math.round(renderMs)} ms)`;
  setState("done");
}

function onIntervalError(message) {
  setIntervalValid(false, message);
  $("timing").textContent = "";
  setState(state.report ? "done" : "idle");
}

function setIntervalValid(valid, message = "") {
  const box = $("interval");
  box.setAttribute("aria-invalid", String(!valid));
  $("interval-hint").textContent = valid ? "" : message;
  $("interval-hint").hidden = valid;
}

function onEngineError(message) {
  clearResults();
  $("verdict-text").textContent = "Could not analyse this input.";
  $("timing").textContent = "";
  showError(message);
  setState("error");
}

function showFatal(message) {
  state.ready = false;
  stopProgress();
  $("verdict-text").textContent = "The analysis engine is not available.";
  showError(message);
  setState("fatal");
}

function showIdle() {
  clearResults();
  hideError();
  $("verdict-text").textContent = "Paste tool output, drop a file or pick an example.";
  $("timing").textContent = "";
  setState("idle");
}

function showError(message) {
  const box = $("error");
  box.replaceChildren(h("strong", {}, "Error: "), message);
  box.hidden = false;
}

function hideError() {
  $("error").hidden = true;
}

// ------------------------------------------------------------------ report

function clearResults() {
  state.report = null;
  state.reportText = "";
  state.marks = null;
  state.picturesFor = null;
  delete $("verdict").dataset.status;
  state.reportLines = [];
  setInputView("edit");
  $("counts").replaceChildren();
  filtersBar.hidden = true;
  setPanel("findings", filtersBar);
  setTabCount("findings", null);
  for (const name of ["pictures", "sections", "measurements", "unrecognised", "warnings"]) {
    setPanel(name);
    setTabCount(name, null);
  }
  setExportEnabled(false);
}

function allSections(report) {
  return (report.documents ?? [report.document]).flatMap((d) => d?.sections ?? []);
}

function mainDocument(report) {
  return report.document ?? report.documents?.[0] ?? { sections: [], unrecognised: [], warnings: [], messages: [] };
}

function renderReport(report) {
  const doc = mainDocument(report);
  $("verdict-text").textContent = report.verdict;
  $("verdict").dataset.status = report.status ?? "healthy";
  renderCounts(report.summary);
  state.marks = null;
  $("marks-hint").textContent = "";
  renderFilters(report);
  renderFindings(report);
  renderPicturesPanel(report);
  renderSections(doc.sections);
  renderMeasurements(report.measurements);
  renderUnrecognised(doc.unrecognised);
  renderWarnings(doc);
  setExportEnabled(true);
  state.linesShown = null;
  if (!linesView.hidden) buildLines();
}

function renderCounts(summary) {
  $("counts").replaceChildren(...SEVERITIES.map((sev) =>
    h("li", { class: `count sev-${sev}`, "data-severity": sev, "data-count": summary[sev] },
      h("span", { class: "count-n" }, String(summary[sev])), ` ${sev}`)));
}

function groupByHost(entries) {
  const worst = (list) => Math.min(...list.map((e) => severityRank(e.finding.severity)));
  return [...Map.groupBy(entries, (e) => e.finding.subject?.host ?? null)]
    .map(([host, list]) => [host, list.toSorted((a, b) => severityRank(a.finding.severity) - severityRank(b.finding.severity))])
    .toSorted(([ha, la], [hb, lb]) => worst(la) - worst(lb) || String(ha).localeCompare(String(hb)));
}

function subjectText(subject = {}) {
  const parts = [];
  if (subject.device != null) parts.push(subject.device);
  if (subject.port != null) parts.push(`port ${subject.port}`);
  if (subject.gpu != null) parts.push(`GPU ${subject.gpu}`);
  if (subject.link != null) parts.push(`link ${subject.link}`);
  if (subject.lane != null) parts.push(`lane ${subject.lane}`);
  return parts.join(" ");
}

function severityBadge(sev) {
  return h("span", { class: `badge sev-${sev}` }, sev);
}

function renderFinding(f, index) {
  const subject = subjectText(f.subject);
  const evidence = (f.evidence ?? []).map((e) =>
    h("li", {}, lineLink(e.first_line, e.last_line), h("code", { class: "evidence-text" }, e.text)));
  return h("details", {
    class: `finding sev-${f.severity}`, id: `finding-${index}`, "data-index": index, "data-rule": f.rule,
    "data-severity": f.severity, "data-host": f.subject?.host ?? "",
  },
  h("summary", {},
    severityBadge(f.severity),
    h("span", { class: "rule-id" }, f.rule),
    subject && h("span", { class: "subject" }, subject),
    h("span", { class: "finding-message" }, f.message)),
  h("dl", { class: "finding-body" },
    evidence.length > 0 && [h("dt", {}, "Evidence"), h("dd", {}, h("ul", { class: "evidence" }, evidence))],
    f.threshold && [h("dt", {}, "Threshold"),
      h("dd", {}, f.threshold.value, f.threshold.source && h("span", { class: "source" }, ` — ${f.threshold.source}`))],
    f.remediation && [h("dt", {}, "What to do"), h("dd", {}, f.remediation)],
    h("dt", {}, "Rule"),
    h("dd", {}, h("button", { type: "button", class: "link rule-link", "data-rule": f.rule },
      [f.rule, f.name].filter(Boolean).join(" ")))));
}

// Findings are rendered lazily in pages: a 100-host paste can have thousands.
function pagedList(entries, render) {
  const out = entries.slice(0, PAGE_SIZE).map(render);
  if (entries.length > PAGE_SIZE) {
    const more = h("button", { type: "button", class: "show-more" }, `Show ${entries.length - PAGE_SIZE} more`);
    more.addEventListener("click", () => {
      more.replaceWith(...pagedList(entries.slice(PAGE_SIZE), render));
      applyFilters();
    });
    out.push(more);
  }
  return out;
}

/** A table showing PAGE_SIZE rows at first; `toCells` runs only for rows shown. */
function pagedTable(headers, items, toCells) {
  const wrap = table(headers, []);
  const body = wrap.querySelector("tbody");
  const addRows = (from) => {
    body.append(...items.slice(from, from + PAGE_SIZE).map((item, i) =>
      h("tr", {}, toCells(item, from + i).map((c) => h("td", {}, c)))));
    wrap.querySelector(".show-more")?.remove();
    const rest = items.length - from - PAGE_SIZE;
    if (rest > 0) {
      wrap.append(h("button", { type: "button", class: "show-more", onclick: () => addRows(from + PAGE_SIZE) },
        `Show ${Math.min(rest, PAGE_SIZE)} more of ${rest}`));
    }
  };
  addRows(0);
  return wrap;
}

/** A <details> whose body is built when it is first opened. */
function lazyDetails(attrs, summary, build) {
  const node = h("details", attrs, h("summary", {}, summary));
  node.addEventListener("toggle", () => {
    if (node.open && node.children.length === 1) node.append(build());
  });
  return node;
}

function renderFindings(report) {
  const findings = report.findings;
  const entries = findings.map((finding, index) => ({ finding, index }));
  setTabCount("findings", findings.length);
  const skipped = report.skipped_rules;
  const skippedList = skipped?.length > 0 && h("details", { class: "skipped" },
    h("summary", {}, `${plural(skipped.length, "rule")} not run`),
    h("ul", {}, skipped.map((s) => h("li", {}, h("span", { class: "rule-id" }, s.rule), " ", s.reason))));
  let body;
  if (Array.isArray(report.incidents) && report.incidents.length) {
    body = renderIncidents(report.incidents, entries);
  } else {
    body = groupByHost(entries).map(([host, list]) =>
      h("section", { class: "host-group", "data-host": host ?? "" },
        h("h3", { class: "host" }, host ?? "No host prompt", h("span", { class: "muted" }, ` · ${plural(list.length, "finding")}`)),
        pagedList(list, (e) => renderFinding(e.finding, e.index))));
  }
  setPanel("findings", filtersBar, body.length ? body : empty("No findings."), h("p", { class: "empty filtered-out", hidden: true }, "No finding matches the filters."), skippedList || []);
  applyFilters();
}

/**
 * Incidents from the engine: one broken thing each, its findings grouped
 * under it and a probable cause, grouped by host, worst first. Findings that
 * belong to no incident follow their host's incidents.
 */
function renderIncidents(incidents, entries) {
  const claimed = new Set(incidents.flatMap((inc) => inc.findings ?? []));
  const items = [
    ...incidents.map((inc, i) => ({ inc, i, host: inc.subject?.host ?? null, rank: severityRank(inc.severity) })),
    ...entries.filter((e) => !claimed.has(e.index))
      .map((e) => ({ entry: e, host: e.finding.subject?.host ?? null, rank: severityRank(e.finding.severity) })),
  ];
  const worst = (list) => Math.min(...list.map((x) => x.rank));
  return [...Map.groupBy(items, (x) => x.host)]
    .map(([host, list]) => [host, list.toSorted((a, b) => a.rank - b.rank)])
    .toSorted(([ha, la], [hb, lb]) => worst(la) - worst(lb) || String(ha).localeCompare(String(hb)))
    .map(([host, list]) => h("section", { class: "host-group", "data-host": host ?? "" },
      h("h3", { class: "host" }, host ?? "No host prompt",
        h("span", { class: "muted" }, ` · ${plural(list.filter((x) => x.inc).length, "incident")}`)),
      pagedList(list, (x) => (x.entry ? renderFinding(x.entry.finding, x.entry.index) : renderIncident(x.inc, x.i, entries)))));
}

function renderIncident(inc, i, entries) {
  const members = (inc.findings ?? []).map((k) => entries[k]).filter(Boolean);
  const subject = subjectText(inc.subject ?? {});
  // Open: an incident is a card listing its findings (each one collapsed).
  return h("details", { class: `incident sev-${inc.severity}`, id: `incident-${i}`, "data-incident": i, open: true },
    h("summary", {}, severityBadge(inc.severity), inc.rule && h("span", { class: "rule-id" }, inc.rule),
      subject && h("span", { class: "subject" }, subject),
      h("span", { class: "finding-message" }, inc.title ?? ""),
      h("span", { class: "muted" }, ` · ${plural(members.length, "finding")}`)),
    h("div", { class: "incident-body" },
      inc.probable_cause && h("p", { class: "probable-cause" }, h("strong", {}, "Probable cause: "), inc.probable_cause),
      members.map((e) => renderFinding(e.finding, e.index))));
}

// ----------------------------------------------------------------- filters

function renderFilters(report) {
  const findings = report.findings;
  filtersBar.hidden = findings.length === 0;
  const hosts = [...new Set(findings.map((f) => f.subject?.host).filter(Boolean))].sort();
  const rules = [...new Set(findings.map((f) => f.rule))].sort();
  const keep = (list, value) => (list.includes(value) ? value : "");
  state.filters.host = keep(hosts, state.filters.host);
  state.filters.rule = keep(rules, state.filters.rule);
  const select = (id, all, values) => $(id).replaceChildren(h("option", { value: "" }, all),
    ...values.map((v) => h("option", { value: v, selected: v === state.filters[id.slice(7)] }, v)));
  select("filter-host", `All hosts (${hosts.length})`, hosts);
  select("filter-rule", `All rules (${rules.length})`, rules);
  for (const button of document.querySelectorAll("#filter-severities button")) {
    const sev = button.dataset.severity;
    button.setAttribute("aria-pressed", String(state.filters.severities.has(sev)));
    button.querySelector(".n").textContent = String(report.summary[sev] ?? 0);
  }
}

function passes(node) {
  const f = state.filters;
  return f.severities.has(node.dataset.severity) && (!f.host || node.dataset.host === f.host) && (!f.rule || node.dataset.rule === f.rule);
}

function applyFilters() {
  const panel = $("panel-findings");
  let shown = 0;
  let total = 0;
  for (const node of panel.querySelectorAll("details.finding[data-index]")) {
    const ok = passes(node);
    node.hidden = !ok;
    total++;
    if (ok) shown++;
  }
  for (const group of panel.querySelectorAll(".host-group, details.incident")) {
    group.hidden = !group.querySelector("details.finding[data-index]:not([hidden])");
  }
  const filtered = shown < total;
  panel.querySelector(".filtered-out")?.toggleAttribute("hidden", !(total > 0 && shown === 0));
  $("filter-status").textContent = filtered ? `Showing ${shown} of ${total} findings` : "";
}

function setFilter(changes) {
  Object.assign(state.filters, changes);
  if (state.report) renderFilters(state.report);
  applyFilters();
}

function expandAll(open) {
  for (const node of $("panel-findings").querySelectorAll("details.finding, details.incident")) {
    if (!node.hidden) node.open = open;
  }
}

/** Opens finding `index`, clearing any filter that hides it. */
function openFinding(index) {
  selectTab($("tab-findings"));
  let node = $(`finding-${index}`);
  while (!node) {
    const more = $("panel-findings").querySelector(".show-more");
    if (!more) return;
    more.click();
    node = $(`finding-${index}`);
  }
  if (!passes(node)) setFilter({ severities: new Set(SEVERITIES), host: "", rule: "" });
  node.open = true;
  const incident = node.parentElement?.closest("details.incident");
  if (incident) incident.open = true;
  node.scrollIntoView({ block: "start" });
  node.querySelector("summary").focus({ preventScroll: true });
}

// ---------------------------------------------------------------- pictures

/** Pictures are drawn when their tab is first shown: a fleet has many. */
function renderPicturesPanel(report) {
  state.picturesFor = report;
  setTabCount("pictures", null);
  setPanel("pictures");
  if ($("tab-pictures").getAttribute("aria-selected") === "true") drawPictures();
}

function drawPictures() {
  const report = state.picturesFor;
  if (!report) return;
  state.picturesFor = null;
  const figures = renderPictures(report, {
    onHeatmapCell: (host, rule) => {
      setFilter({ severities: new Set(SEVERITIES), host, rule });
      selectTab($("tab-findings"));
    },
  });
  setTabCount("pictures", figures.length);
  setPanel("pictures", figures.length ? figures : empty("Nothing to draw: pictures need NVLink output, a topo -m matrix or several hosts."));
}

function renderSections(sections) {
  setTabCount("sections", sections.length);
  if (!sections.length) return setPanel("sections", empty("No tool output was recognised."));
  setPanel("sections", pagedTable(["Kind", "Host", "Command", "Lines", "Warnings", "Parsed data"], sections, (s) => [
    h("code", { class: "kind" }, s.kind),
    s.host ?? h("span", { class: "muted" }, "—"),
    s.command ? h("code", {}, s.command) : h("span", { class: "muted" }, "—"),
    lineLink(s.first_line, s.last_line),
    String(s.warnings?.length ?? 0),
    lazyDetails({ class: "data" }, "show", () => h("pre", {}, JSON.stringify(s.data, null, 2))),
  ]));
}

// Measurements are named tables of records. The page lays each record out
// generically: a subject column, one column per field (nested objects one
// level deep), and line links for spans.

function titleOf(key) {
  const words = key.replaceAll("_", " ");
  return words[0].toUpperCase() + words.slice(1);
}

function isSpan(v) {
  return v !== null && typeof v === "object" && "first_line" in v;
}

function spanLinks(v) {
  const spans = Array.isArray(v) ? v : [v];
  return h("span", { class: "span-links" }, spans.map((sp) => lineLink(sp.first_line, sp.last_line)));
}

function columnsOf(record, prefix = "", out = {}) {
  // A record that is itself a span of input lines (a snapshot) links to them.
  const ownSpan = !prefix && isSpan(record);
  if (ownSpan) out.lines = { first_line: record.first_line, last_line: record.last_line };
  for (const [key, v] of Object.entries(record)) {
    if (key === "subject" && !prefix) continue;
    if (ownSpan && (key === "first_line" || key === "last_line")) continue;
    const name = prefix ? `${prefix}.${key}` : key;
    const nested = v !== null && typeof v === "object" && !Array.isArray(v) && !isSpan(v);
    if (nested && !prefix) columnsOf(v, name, out);
    else out[name] = v;
  }
  return out;
}

function formatFloat(v) {
  const size = Math.abs(v);
  if (size >= 100) return v.toFixed(1);
  return size >= 1 ? v.toFixed(3) : v.toPrecision(3);
}

function formatCell(v) {
  if (v == null) return h("span", { class: "muted" }, "—");
  if (isSpan(v) || (Array.isArray(v) && v.length > 0 && v.every(isSpan))) return spanLinks(v);
  if (typeof v === "number" && !Number.isInteger(v)) return h("span", { title: String(v) }, formatFloat(v));
  if (Array.isArray(v) && v.every((x) => x === null || typeof x !== "object")) return v.join(", ");
  if (typeof v === "object") {
    return lazyDetails({ class: "data" }, Array.isArray(v) ? plural(v.length, "item") : "show",
      () => h("pre", {}, JSON.stringify(v, null, 2)));
  }
  return String(v);
}

function measurementTable(key, records, open) {
  // Columns from a sample of records: a fleet's tables have the same fields throughout.
  const sample = records.slice(0, PAGE_SIZE).map((r) => columnsOf(r));
  const columns = [...new Set(sample.flatMap(Object.keys))];
  const withSubject = records.some((r) => r.subject);
  const headers = [withSubject && "subject", ...columns].filter(Boolean);
  const build = () => pagedTable(headers, records, (r) => {
    const row = columnsOf(r);
    return [
      withSubject && ([r.subject?.host, subjectText(r.subject ?? {})].filter(Boolean).join(" ") || "—"),
      ...columns.map((c) => formatCell(row[c])),
    ].filter((cell) => cell !== false);
  });
  const summary = [h("span", { class: "measurement-title" }, titleOf(key)), h("span", { class: "tab-count" }, String(records.length))];
  if (open) return h("details", { class: "measurement", open }, h("summary", {}, summary), build());
  return lazyDetails({ class: "measurement" }, summary, build);
}

// Report schema 3 writes counter rates in sets (the fields a port's rates
// share once, then `counters`; docs/report.md): the table shows one row per rate.
function flatRates(list = []) {
  return list.flatMap(({ counters, ...set }) => !Array.isArray(counters) ? [set] :
    counters.map(({ counter, unit, before, after, ...own }) => ({
      subject: set.subject, source: set.source, counter, unit,
      from_snapshot: set.from_snapshot, to_snapshot: set.to_snapshot, lines: set.lines, before, after,
      ...(set.interval_seconds !== undefined && { interval_seconds: set.interval_seconds }),
      interval_source: set.interval_source, ...own,
    })));
}

function renderMeasurements(given = {}) {
  const measurements = { ...given, counter_rates: flatRates(given.counter_rates) };
  const tables = Object.entries(measurements).filter(([, list]) => Array.isArray(list) && list.length > 0);
  setTabCount("measurements", tables.reduce((n, [, list]) => n + list.length, 0));
  if (!tables.length) return setPanel("measurements", empty("No measurements (rates need two snapshots of the same counters)."));
  setPanel("measurements", tables.map(([key, list], i) => measurementTable(key, list, i === 0)));
}

function renderUnrecognised(ranges) {
  setTabCount("unrecognised", ranges.length);
  if (!ranges.length) return setPanel("unrecognised", empty("Every line was recognised."));
  setPanel("unrecognised", h("ul", { class: "plain-list stacked" }, pagedList(ranges, (r) =>
    h("li", {},
      h("div", { class: "item-head" }, lineLink(r.first_line, r.last_line),
        r.host && h("span", { class: "host-tag" }, r.host),
        r.reason && h("span", { class: "muted" }, renderInline(r.reason))),
      h("code", { class: "preview" }, state.reportLines[r.first_line - 1] ?? "")))));
}

// Reading warnings and the tools' own error lines (ibwarn, ibpanic …), for the
// whole input and per section.
function notices(doc) {
  const where = (s) => [s.kind, s.host && `on ${s.host}`].filter(Boolean).join(" ");
  const warning = (w, context) => ({ first: w.first_line, last: w.last_line, label: w.kind ?? "warning", context, text: w.message });
  const message = (m, context) => ({ first: m.line, last: m.line, label: `tool ${m.level}`, context, text: m.text });
  return [
    ...(doc.warnings ?? []).map((w) => warning(w, null)),
    ...(doc.messages ?? []).map((m) => message(m, null)),
    ...doc.sections.flatMap((s) => [
      ...(s.warnings ?? []).map((w) => warning(w, where(s))),
      ...(s.messages ?? []).map((m) => message(m, where(s))),
    ]),
  ].toSorted((a, b) => (a.first ?? 0) - (b.first ?? 0));
}

function renderWarnings(doc) {
  const items = notices(doc);
  setTabCount("warnings", items.length);
  if (!items.length) return setPanel("warnings", empty("No warnings."));
  setPanel("warnings", h("ul", { class: "plain-list" }, pagedList(items, (n) =>
    h("li", {}, lineLink(n.first, n.last), h("span", { class: "notice-label" }, n.label.replaceAll("_", " ")),
      h("span", {}, n.context && h("span", { class: "muted" }, `${n.context}: `), renderInline(n.text))))));
}

function renderRule(r) {
  return h("details", { class: "rule", id: `rule-${r.id}` },
    h("summary", {}, h("span", { class: "rule-id" }, r.id), severityBadge(r.severity),
      h("span", { class: "rule-name" }, r.name), h("span", { class: "rule-summary" }, r.summary)),
    h("div", { class: "markdown" },
      r.needs && h("p", { class: "needs" }, h("strong", {}, "Needs: "), r.needs),
      renderMarkdown(r.explanation)));
}

function renderRules(rules) {
  setTabCount("rules", rules.length);
  const families = Map.groupBy(rules, (r) => r.family_title ?? r.family ?? "Rules");
  setPanel("rules", [...families].map(([title, list]) =>
    h("section", { class: "rule-family" }, h("h3", {}, title), list.map(renderRule))));
}

// -------------------------------------------------------- numbered lines view
// The numbered view carries gutter marks: evidence lines in their worst
// finding's severity colour (click: open that finding), unrecognised ranges
// in grey (click: the Unrecognised tab).

/** Gutter marks, computed when the numbered view is first shown. */
function buildMarks(report, doc) {
  const marks = new Map();
  report.findings.forEach((f, index) => {
    for (const e of f.evidence ?? []) {
      if (e.first_line == null || e.source) continue;
      for (let n = e.first_line; n <= (e.last_line ?? e.first_line); n++) {
        const mark = marks.get(n);
        if (!mark || (mark.finding != null && severityRank(f.severity) < severityRank(mark.severity))) {
          marks.set(n, { severity: f.severity, finding: index, label: `${f.rule} ${f.severity}: ${f.message}` });
        }
      }
    }
  });
  for (const u of doc.unrecognised ?? []) {
    for (let n = u.first_line; n <= u.last_line; n++) {
      if (!marks.has(n)) marks.set(n, { severity: "unrecognised", finding: null, label: `not recognised: ${u.reason ?? ""}` });
    }
  }
  state.marks = marks;
  const count = marks.size;
  $("marks-hint").textContent = count ? `${count} marked` : "";
}

function buildLines() {
  if (state.linesShown === state.reportLines) return;
  state.linesShown = state.reportLines;
  if (!state.marks && state.report) buildMarks(state.report, mainDocument(state.report));
  const items = state.reportLines.map((line, i) => {
    const mark = state.marks?.get(i + 1);
    if (!mark) return h("li", { tabindex: "-1" }, line || " ");
    return h("li", { tabindex: "-1", "data-mark": mark.severity },
      h("button", {
        type: "button", class: "gutter-mark", "data-line": i + 1,
        "data-finding": mark.finding ?? "", "aria-label": `Line ${i + 1}: ${mark.label}`, title: mark.label,
      }),
      line || " ");
  });
  linesView.replaceChildren(...items);
}

function onGutterClick(event) {
  const mark = event.target.closest(".gutter-mark");
  if (!mark) return;
  if (mark.dataset.finding === "") {
    selectTab($("tab-unrecognised"));
    $("panel-unrecognised").focus();
  } else {
    openFinding(Number(mark.dataset.finding));
  }
}

function setInputView(view) {
  const lines = view === "lines";
  if (lines) buildLines();
  input.hidden = lines;
  linesView.hidden = !lines;
  $("view-edit").setAttribute("aria-pressed", String(!lines));
  $("view-lines").setAttribute("aria-pressed", String(lines));
}

function showLines(first, last) {
  setInputView("lines");
  for (const li of linesView.querySelectorAll("li.hl")) li.classList.remove("hl");
  const items = linesView.children;
  for (let n = first; n <= last && n <= items.length; n++) items[n - 1].classList.add("hl");
  const target = items[first - 1];
  if (!target) return;
  target.scrollIntoView({ block: "center" });
  target.focus({ preventScroll: true });
}

// ------------------------------------------------------------------- tabs

function selectTab(tab) {
  if (tab.id === "tab-pictures") drawPictures();
  for (const t of $("tabs").querySelectorAll("[role=tab]")) {
    const selected = t === tab;
    t.setAttribute("aria-selected", String(selected));
    t.tabIndex = selected ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !selected;
  }
}

function onTabKey(event) {
  const tabs = [...$("tabs").querySelectorAll("[role=tab]")];
  const i = tabs.indexOf(document.activeElement);
  const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[event.key];
  if (next === undefined || i < 0) return;
  event.preventDefault();
  const tab = tabs[(next + tabs.length) % tabs.length];
  tab.focus();
  selectTab(tab);
}

function showRule(id) {
  selectTab($("tab-rules"));
  const rule = $(`rule-${id}`);
  if (!rule) return;
  rule.open = true;
  rule.scrollIntoView({ block: "start" });
  rule.querySelector("summary").focus({ preventScroll: true });
}

// ---------------------------------------------------------------- input

async function loadExample({ file, interval }) {
  const response = await fetch(new URL(`./examples/${file}`, import.meta.url));
  if (!response.ok) return showError(`Could not load example ${file}: HTTP ${response.status}`);
  setInput(await response.text(), interval);
}

function setInput(text, interval) {
  input.value = text;
  if (interval !== undefined) $("interval").value = interval ?? "";
  setInputView("edit");
  requestAnalysis();
}

/**
 * One file is pasted as it is; several are joined under `==> name <==`
 * headers, as `tail` prints them, so each file's name is its host hint
 * (`node07.txt` → node07) unless its own prompts name one.
 */
async function readFiles(files) {
  const list = [...files];
  const texts = await Promise.all(list.map((f) => f.text()));
  if (!texts.length) return;
  if (texts.length === 1) return setInput(texts[0]);
  setInput(list.map((f, i) => `==> ${f.name} <==\n${texts[i].replace(/\n$/, "")}\n`).join(""));
}

// ---------------------------------------------------------------- export

/** The report as indented JSON, made on demand (it can be tens of MB). */
function reportJson() {
  return JSON.stringify(JSON.parse(state.reportText), null, 2);
}

function setExportEnabled(enabled) {
  for (const id of ["copy-json", "download-json", "download-html", "copy-markdown"]) $(id).disabled = !enabled;
}

async function copyText(button, text) {
  try {
    await navigator.clipboard.writeText(text);
    flash(button, "Copied");
  } catch (err) {
    showError(`Could not copy to the clipboard: ${err.message}`);
  }
}

function download(text, type, name) {
  const url = URL.createObjectURL(new Blob([text], { type }));
  h("a", { href: url, download: name }).click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

async function downloadHtml() {
  try {
    const html = await ask({ type: "html", text: state.latest.text, options: options() });
    download(html, "text/html", "fabricscope-report.html");
  } catch (err) {
    showError(`Could not make the HTML report: ${err.message}`);
  }
}

function flash(button, text) {
  const original = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = original), 1500);
}

// ---------------------------------------------------------------- share
// The link holds the paste, compressed, in the fragment: browsers never send
// the fragment to the server. Redaction (on by default) runs in the engine.

async function makeShareLink() {
  const out = $("share-url");
  const status = $("share-status");
  try {
    let text = input.value;
    let note = "";
    if ($("share-redact").checked) {
      const redacted = await ask({ type: "redact", text });
      text = redacted.text;
      const byKind = Map.groupBy(redacted.replacements, (r) => r.kind);
      note = byKind.size
        ? `Redacted: ${[...byKind].map(([kind, list]) => `${list.length} ${kind}${list.length === 1 ? "" : "s"}`).join(", ")}. `
        : "Nothing to redact was found. ";
    }
    const fragment = await encodeFragment(text, $("interval").value.trim());
    const url = new URL(location.href);
    url.hash = fragment;
    out.value = url.href;
    out.hidden = false;
    status.textContent = `${note}Link: ${megabytes(url.href.length)}${url.href.length > 2_000_000 ? " — too long for some browsers; share the file instead" : ""}.`;
    out.select();
    try {
      await navigator.clipboard.writeText(url.href);
      status.textContent += " Copied to the clipboard.";
    } catch {
      // the link is selected in the box for a manual copy
    }
  } catch (err) {
    status.textContent = `Could not make a link: ${err.message}`;
  }
}

async function loadFragment() {
  if (!location.hash.includes("z=")) return false;
  try {
    const shared = await decodeFragment(location.hash);
    if (!shared) return false;
    input.value = shared.text;
    $("interval").value = shared.interval;
    return true;
  } catch (err) {
    showError(`The link's paste could not be read: ${err.message}`);
    return false;
  }
}

// ---------------------------------------------------------------- wiring

function wire() {
  $("examples").append(...EXAMPLES.map((ex) =>
    h("button", { type: "button", class: "example", onclick: () => loadExample(ex) }, ex.label)));
  input.addEventListener("input", scheduleAnalysis);
  $("interval").addEventListener("input", scheduleAnalysis);
  $("clear").addEventListener("click", () => setInput("", null));
  $("file").addEventListener("change", (e) => readFiles(e.target.files).then(() => (e.target.value = "")));
  $("view-edit").addEventListener("click", () => setInputView("edit"));
  $("view-lines").addEventListener("click", () => setInputView("lines"));
  linesView.addEventListener("click", onGutterClick);
  $("copy-json").addEventListener("click", (e) => copyText(e.currentTarget, reportJson()));
  $("download-json").addEventListener("click", () => download(reportJson(), "application/json", "fabricscope-report.json"));
  $("download-html").addEventListener("click", downloadHtml);
  $("copy-markdown").addEventListener("click", (e) => copyText(e.currentTarget, reportMarkdown(state.report, state.reportLines)));
  $("share-make").addEventListener("click", makeShareLink);

  for (const button of document.querySelectorAll("#filter-severities button")) {
    button.addEventListener("click", () => {
      const sev = button.dataset.severity;
      const set = new Set(state.filters.severities);
      if (set.has(sev)) set.delete(sev);
      else set.add(sev);
      setFilter({ severities: set });
    });
  }
  $("filter-host").addEventListener("change", (e) => setFilter({ host: e.target.value }));
  $("filter-rule").addEventListener("change", (e) => setFilter({ rule: e.target.value }));
  $("expand-all").addEventListener("click", () => expandAll(true));
  $("collapse-all").addEventListener("click", () => expandAll(false));

  const tabs = $("tabs");
  tabs.addEventListener("click", (e) => e.target.closest("[role=tab]") && selectTab(e.target.closest("[role=tab]")));
  tabs.addEventListener("keydown", onTabKey);

  document.querySelector(".results-pane").addEventListener("click", (e) => {
    const line = e.target.closest(".line-link");
    if (line) showLines(Number(line.dataset.first), Number(line.dataset.last));
    const rule = e.target.closest(".rule-link");
    if (rule) showRule(rule.dataset.rule);
  });

  const zone = $("drop-zone");
  zone.addEventListener("dragover", (e) => {
    e.preventDefault();
    zone.classList.add("dragging");
  });
  zone.addEventListener("dragleave", () => zone.classList.remove("dragging"));
  zone.addEventListener("drop", (e) => {
    e.preventDefault();
    zone.classList.remove("dragging");
    readFiles(e.dataTransfer.files);
  });
  window.addEventListener("hashchange", () => loadFragment().then((loaded) => loaded && requestAnalysis()));
}

/** The built site (make site) names its service worker in a meta tag; the dev page has none. */
function registerServiceWorker() {
  const meta = document.querySelector('meta[name="fabricscope-service-worker"]');
  if (!meta || !("serviceWorker" in navigator)) return;
  navigator.serviceWorker.register(new URL(meta.content, document.baseURI)).catch(() => {
    // Offline use is a bonus: the page works without it.
  });
}

setState("loading");
wire();
registerServiceWorker();
loadFragment().then(() => startWorker());
