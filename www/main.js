// fabricscope web page: sends the pasted text to the engine in worker.js and
// renders the JSON report. All diagnosis logic lives in the engine; this file
// only displays what it returns.

const EXAMPLES = [
  { file: "h200-nvlink-health.txt", label: "H200 NVLink health", interval: null },
  { file: "h200-nvlink-traffic.txt", label: "H200 NVLink traffic", interval: 2 },
  { file: "ib-two-hosts.txt", label: "InfiniBand, 2 hosts", interval: null },
  { file: "ibsim-ports-down.txt", label: "IB sim: ports down", interval: null },
  { file: "ibsim-error-counters.txt", label: "IB sim: error counters", interval: null },
];
const SEVERITIES = ["critical", "error", "warning", "info"];
const DEBOUNCE_MS = 250;

const $ = (id) => document.getElementById(id);
const input = $("input");
const linesView = $("lines");
const worker = new Worker(new URL("./worker.js", import.meta.url), { type: "module" });

const state = {
  ready: false,
  timer: 0,
  latest: { id: 0, text: "", sentAt: 0 },
  reportLines: [],
  reportJson: "",
  linesShown: null,
};

// ---------------------------------------------------------------- DOM helpers

function h(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.className = value;
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.flat(Infinity).filter((c) => c != null && c !== false));
  return node;
}

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

function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
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

function table(headers, rows) {
  return h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))),
  ));
}

function empty(text) {
  return h("p", { class: "empty" }, text);
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

function options() {
  const raw = $("interval").value.trim();
  return { interval_seconds: raw === "" ? null : Number(raw), max_input_bytes: null };
}

function scheduleAnalysis() {
  clearTimeout(state.timer);
  state.timer = setTimeout(requestAnalysis, DEBOUNCE_MS);
}

function requestAnalysis() {
  clearTimeout(state.timer);
  if (!state.ready) return;
  const text = input.value;
  state.latest = { id: state.latest.id + 1, text, sentAt: performance.now() };
  if (text.trim() === "") {
    showIdle();
    return;
  }
  setState("busy");
  $("timing").textContent = "Analysing…";
  worker.postMessage({ id: state.latest.id, text, options: options() });
}

worker.onmessage = ({ data }) => {
  if (data.type === "ready") onReady(data);
  else if (data.type === "fatal") showFatal(data.error);
  else if (data.id !== state.latest.id) return;
  else if (data.type === "result") onResult(data);
  else if (data.type === "error") onEngineError(data.error);
};

worker.onerror = (event) => {
  event.preventDefault();
  showFatal(`The analysis worker failed: ${event.message || "unknown error"}`);
};

function onReady({ version, rules }) {
  state.ready = true;
  $("engine-version").textContent = `fabricscope ${version}`;
  renderRules(JSON.parse(rules));
  requestAnalysis();
}

function onResult({ json, engineMs }) {
  const totalMs = performance.now() - state.latest.sentAt;
  const report = JSON.parse(json);
  state.reportLines = state.latest.text.split("\n");
  state.reportJson = JSON.stringify(report, null, 2);
  hideError();
  renderReport(report);
  $("timing").textContent =
    `${plural(state.reportLines.length, "line")} analysed in ${Math.round(totalMs)} ms (engine ${engineMs.toFixed(1)} ms)`;
  setState("done");
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
  state.reportJson = "";
  delete $("verdict").dataset.status;
  state.reportLines = [];
  setInputView("edit");
  $("counts").replaceChildren();
  for (const name of ["findings", "sections", "measurements", "unrecognised", "warnings"]) {
    setPanel(name);
    setTabCount(name, null);
  }
  setExportEnabled(false);
}

function renderReport(report) {
  const doc = report.document;
  $("verdict-text").textContent = report.verdict;
  $("verdict").dataset.status = report.status ?? "healthy";
  renderCounts(report.summary);
  renderFindings(report.findings, report.skipped_rules);
  renderSections(doc.sections);
  renderMeasurements(report.measurements);
  renderUnrecognised(doc.unrecognised);
  renderWarnings(doc);
  setExportEnabled(true);
  if (!linesView.hidden) buildLines();
}

function renderCounts(summary) {
  $("counts").replaceChildren(...SEVERITIES.map((sev) =>
    h("li", { class: `count sev-${sev}`, "data-severity": sev, "data-count": summary[sev] },
      h("span", { class: "count-n" }, String(summary[sev])), ` ${sev}`)));
}

function severityRank(sev) {
  const i = SEVERITIES.indexOf(sev);
  return i < 0 ? SEVERITIES.length : i;
}

function groupByHost(findings) {
  const bySeverity = (a, b) => severityRank(a.severity) - severityRank(b.severity);
  const worst = (list) => severityRank(list[0].severity);
  return [...Map.groupBy(findings, (f) => f.subject?.host ?? null)]
    .map(([host, list]) => [host, list.toSorted(bySeverity)])
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

function renderFinding(f) {
  const subject = subjectText(f.subject);
  const evidence = (f.evidence ?? []).map((e) =>
    h("li", {}, lineLink(e.first_line, e.last_line), h("code", { class: "evidence-text" }, e.text)));
  return h("details", { class: `finding sev-${f.severity}`, "data-rule": f.rule },
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

function renderFindings(findings, skipped) {
  setTabCount("findings", findings.length);
  const groups = groupByHost(findings).map(([host, list]) =>
    h("section", { class: "host-group" },
      h("h3", { class: "host" }, host ?? "No host prompt", h("span", { class: "muted" }, ` · ${plural(list.length, "finding")}`)),
      list.map(renderFinding)));
  const skippedList = skipped?.length > 0 && h("details", { class: "skipped" },
    h("summary", {}, `${plural(skipped.length, "rule")} not run`),
    h("ul", {}, skipped.map((s) => h("li", {}, h("span", { class: "rule-id" }, s.rule), " ", s.reason))));
  setPanel("findings", groups.length ? groups : empty("No findings."), skippedList || []);
}

function renderSections(sections) {
  setTabCount("sections", sections.length);
  if (!sections.length) return setPanel("sections", empty("No tool output was recognised."));
  setPanel("sections", table(["Kind", "Host", "Command", "Lines", "Warnings", "Parsed data"], sections.map((s) => [
    h("code", { class: "kind" }, s.kind),
    s.host ?? h("span", { class: "muted" }, "—"),
    s.command ? h("code", {}, s.command) : h("span", { class: "muted" }, "—"),
    lineLink(s.first_line, s.last_line),
    String(s.warnings?.length ?? 0),
    h("details", { class: "data" }, h("summary", {}, "show"), h("pre", {}, JSON.stringify(s.data, null, 2))),
  ])));
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
  for (const [key, v] of Object.entries(record)) {
    if (key === "subject" && !prefix) continue;
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
    return h("details", { class: "data" }, h("summary", {}, Array.isArray(v) ? plural(v.length, "item") : "show"),
      h("pre", {}, JSON.stringify(v, null, 2)));
  }
  return String(v);
}

function measurementTable(key, records, open) {
  const rows = records.map((r) => columnsOf(r));
  const columns = [...new Set(rows.flatMap(Object.keys))];
  const withSubject = records.some((r) => r.subject);
  const headers = [withSubject && "subject", ...columns].filter(Boolean);
  return h("details", { class: "measurement", open },
    h("summary", {}, h("span", { class: "measurement-title" }, titleOf(key)), h("span", { class: "tab-count" }, String(records.length))),
    table(headers, records.map((r, i) => [
      withSubject && ([r.subject?.host, subjectText(r.subject ?? {})].filter(Boolean).join(" ") || "—"),
      ...columns.map((c) => formatCell(rows[i][c])),
    ].filter((cell) => cell !== false))));
}

function renderMeasurements(measurements = {}) {
  const tables = Object.entries(measurements).filter(([, list]) => Array.isArray(list) && list.length > 0);
  setTabCount("measurements", tables.reduce((n, [, list]) => n + list.length, 0));
  if (!tables.length) return setPanel("measurements", empty("No measurements (rates need two snapshots of the same counters)."));
  setPanel("measurements", tables.map(([key, list], i) => measurementTable(key, list, i === 0)));
}

function renderUnrecognised(ranges) {
  setTabCount("unrecognised", ranges.length);
  if (!ranges.length) return setPanel("unrecognised", empty("Every line was recognised."));
  setPanel("unrecognised", h("ul", { class: "plain-list stacked" }, ranges.map((r) =>
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
  setPanel("warnings", h("ul", { class: "plain-list" }, items.map((n) =>
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

function buildLines() {
  if (state.linesShown === state.reportLines) return;
  state.linesShown = state.reportLines;
  const items = state.reportLines.map((line) => h("li", { tabindex: "-1" }, line || " "));
  linesView.replaceChildren(...items);
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

async function readFiles(files) {
  const texts = await Promise.all([...files].map((f) => f.text()));
  if (texts.length) setInput(texts.join("\n"));
}

function setExportEnabled(enabled) {
  $("copy-json").disabled = !enabled;
  $("download-json").disabled = !enabled;
}

async function copyJson(button) {
  try {
    await navigator.clipboard.writeText(state.reportJson);
    flash(button, "Copied");
  } catch (err) {
    showError(`Could not copy to the clipboard: ${err.message}`);
  }
}

function downloadJson() {
  const url = URL.createObjectURL(new Blob([state.reportJson], { type: "application/json" }));
  h("a", { href: url, download: "fabricscope-report.json" }).click();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

function flash(button, text) {
  const original = button.textContent;
  button.textContent = text;
  setTimeout(() => (button.textContent = original), 1500);
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
  $("copy-json").addEventListener("click", (e) => copyJson(e.currentTarget));
  $("download-json").addEventListener("click", downloadJson);

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
}

setState("loading");
wire();
