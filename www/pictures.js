// Pictures of a report, drawn as inline SVG from the report's sections and
// `measurements` (no chart library): NVLink bandwidth and errors per link of
// each GPU, the `topo -m` matrix as a colour-coded grid, and a host × rule
// heatmap for multi-host pastes. Every picture has a text equivalent: an
// aria description on the SVG and the same data as a table.

import { h, s, table, severityRank, SEVERITIES, plural } from "./dom.js";

/** At most this many hosts get NVLink and topology pictures (worst first). */
const MAX_HOSTS = 24;

/** The pictures of one report: a list of <figure> elements (maybe empty). */
export function renderPictures(report, { onHeatmapCell } = {}) {
  const sections = (report.documents ?? [report.document]).flatMap((d) => d?.sections ?? []);
  const worstByHost = worstSeverityByHost(report.findings);
  const byWorst = (a, b) => (worstByHost.get(a) ?? 9) - (worstByHost.get(b) ?? 9) || String(a).localeCompare(String(b));
  return [
    heatmap(report, onHeatmapCell),
    ...nvlinkFigures(sections, report, byWorst),
    ...topoFigures(sections, report.findings, byWorst),
  ].filter(Boolean);
}

function worstSeverityByHost(findings) {
  const worst = new Map();
  for (const f of findings) {
    const host = f.subject?.host ?? null;
    worst.set(host, Math.min(worst.get(host) ?? 9, severityRank(f.severity)));
  }
  return worst;
}

function figure(kind, caption, svg, description, textTable) {
  return h("figure", { class: `picture picture-${kind}` },
    h("figcaption", {}, caption),
    h("div", { class: "picture-svg" }, svg),
    h("p", { class: "visually-hidden" }, description),
    h("details", { class: "picture-data" }, h("summary", {}, "Data as a table"), textTable));
}

// ----------------------------------------------------------------- NVLink

/** Per host and GPU: links with speed, throughput, errors and state. */
function nvlinkLinks(sections, report) {
  const hosts = new Map();
  const linkOf = (host, gpu, link) => {
    if (!hosts.has(host)) hosts.set(host, new Map());
    const gpus = hosts.get(host);
    if (!gpus.has(gpu)) gpus.set(gpu, new Map());
    const links = gpus.get(gpu);
    if (!links.has(link)) links.set(link, { link, speed: null, inactive: false, errors: null, gib: null, utilisation: null });
    return links.get(link);
  };
  for (const section of sections) {
    if (section.kind !== "nvlink") continue;
    for (const gpu of section.data?.gpus ?? []) {
      for (const l of gpu.links ?? []) {
        const entry = linkOf(section.host ?? null, gpu.index, l.link);
        if (l.speed_gb_per_s != null) entry.speed = l.speed_gb_per_s;
        if (l.inactive) entry.inactive = true;
        const counters = Object.entries(l.counters ?? {}).filter(([name]) => /error/.test(name));
        const lanes = (l.lanes ?? []).map((lane) => lane.ecc_correction_count?.value ?? 0);
        if (counters.length || lanes.length) {
          // The latest snapshot's lifetime totals: history, not a rate.
          entry.errors = counters.reduce((n, [, c]) => n + (c.value ?? 0), 0) + lanes.reduce((n, v) => n + v, 0);
        }
      }
    }
  }
  for (const t of report.measurements?.throughput ?? []) {
    const sub = t.subject ?? {};
    if (sub.gpu == null || sub.link == null) continue;
    const entry = linkOf(sub.host ?? null, sub.gpu, sub.link);
    entry.gib = (entry.gib ?? 0) + t.gib_per_second;
    if (t.utilisation_percent != null) entry.utilisation = Math.max(entry.utilisation ?? 0, t.utilisation_percent);
  }
  return hosts;
}

/** What is wrong with a link, relative to its GPU's other links; null when fine. */
function linkProblem(link, topSpeed) {
  if (link.inactive) return "inactive";
  if (link.speed != null && topSpeed != null && link.speed < topSpeed * 0.99) return "slow";
  if (link.errors > 0) return "errors";
  return null;
}

function nvlinkFigures(sections, report, byWorst) {
  const hosts = nvlinkLinks(sections, report);
  const names = [...hosts.keys()].sort(byWorst).slice(0, MAX_HOSTS);
  return names.map((host) => {
    const gpus = [...hosts.get(host)].sort(([a], [b]) => a - b);
    const rows = [];
    const problems = [];
    const charts = gpus.map(([gpu, linkMap]) => {
      const links = [...linkMap.values()].sort((a, b) => a.link - b.link);
      const speeds = links.map((l) => l.speed).filter((v) => v != null);
      const topSpeed = speeds.length ? Math.max(...speeds) : null;
      for (const l of links) {
        const problem = linkProblem(l, topSpeed);
        if (problem) problems.push(`GPU ${gpu} link ${l.link} ${problem === "errors" ? `${l.errors} errors` : problem}`);
        rows.push([`GPU ${gpu}`, String(l.link), l.inactive ? "inactive" : fmt(l.speed, "GB/s"), fmt(l.gib, "GiB/s"),
          l.errors == null ? "—" : String(l.errors), problem ?? "ok"]);
      }
      return gpuChart(gpu, links, topSpeed);
    });
    const caption = `NVLink per link${host ? ` on ${host}` : ""}: bandwidth (bars) and error counts (squares)`;
    const description = `${caption}. ${plural(gpus.length, "GPU")}. ` +
      (problems.length ? `Problem links: ${problems.join("; ")}.` : "Every link active at the same speed, without errors.");
    const svg = h("div", { class: "gpu-charts", role: "img", "aria-label": description }, charts);
    return figure("nvlink", caption, svg, description,
      table(["GPU", "link", "speed", "throughput", "errors (lifetime)", "state"], rows));
  });
}

function fmt(value, unit) {
  if (value == null) return "—";
  return `${Number(value.toPrecision(4))} ${unit}`;
}

/** One GPU: a bar per link (speed, or throughput when measured) and an error square under it. */
function gpuChart(gpu, links, topSpeed) {
  const step = 14;
  const barH = 44;
  const width = Math.max(60, links.length * step + 8);
  const useThroughput = links.some((l) => l.gib != null);
  const value = (l) => (useThroughput ? l.gib ?? 0 : l.speed ?? 0);
  const max = Math.max(1e-9, ...links.map(value));
  const maxErrors = Math.max(0, ...links.map((l) => l.errors ?? 0));
  const items = links.map((l, i) => {
    const x = 4 + i * step;
    const problem = linkProblem(l, topSpeed);
    const height = l.inactive ? 0 : Math.max(2, (value(l) / max) * barH);
    const errorLevel = !l.errors ? 0 : 1 + Math.min(3, Math.floor(Math.log10(l.errors) / Math.max(1, Math.log10(maxErrors + 1)) * 3));
    return s("g", { class: `link${problem ? ` link-${problem}` : ""}`, "data-link": l.link },
      s("title", {}, `link ${l.link}: ${l.inactive ? "inactive" : useThroughput ? fmt(l.gib, "GiB/s") : fmt(l.speed, "GB/s")}` +
        `${l.errors == null ? "" : `, ${l.errors} errors`}`),
      s("rect", { class: "bar-track", x, y: 4, width: step - 3, height: barH }),
      s("rect", { class: "bar", x, y: 4 + barH - height, width: step - 3, height }),
      l.inactive && s("text", { class: "bar-x", x: x + (step - 3) / 2, y: 4 + barH / 2 + 4, "text-anchor": "middle" }, "×"),
      s("rect", { class: `err err-${errorLevel}`, x, y: barH + 8, width: step - 3, height: step - 3 }),
      s("text", { class: "tick", x: x + (step - 3) / 2, y: barH + step + 16, "text-anchor": "middle" }, String(l.link)));
  });
  return h("div", { class: "gpu-chart" },
    h("span", { class: "gpu-label" }, `GPU ${gpu}`, h("span", { class: "muted" }, useThroughput ? " GiB/s" : " GB/s")),
    s("svg", { viewBox: `0 0 ${width} ${barH + step + 20}`, width, height: barH + step + 20, "aria-hidden": "true" }, items));
}

// --------------------------------------------------------------- topology

function linkLabel(value) {
  if (!value) return "?";
  switch (value.type) {
    case "self_cell": return "X";
    case "nvlink": return `NV${value.count}`;
    case "unknown": return value.text ?? "?";
    default: return value.type.toUpperCase();
  }
}

/** A topology cell is a problem when a finding about that pair of devices says so. */
function problemCells(findings, host) {
  const pairs = new Map();
  const mark = (a, b, f) => {
    for (const key of [`${a}|${b}`, `${b}|${a}`]) {
      if (!pairs.has(key) || severityRank(f.severity) < severityRank(pairs.get(key).severity)) pairs.set(key, f);
    }
  };
  for (const f of findings) {
    const sub = f.subject ?? {};
    if ((sub.host ?? null) !== host) continue;
    if (sub.gpu != null && sub.peer_gpu != null) mark(`GPU${sub.gpu}`, `GPU${sub.peer_gpu}`, f);
    if (sub.gpu != null && sub.nic != null) mark(`GPU${sub.gpu}`, sub.nic, f);
    // Topology evidence names the cells it read: "topo -m: GPU3 ↔ GPU0: SYS".
    for (const e of f.evidence ?? []) {
      const pair = /(\S+) ↔ (\S+?):? /.exec(e.text ?? "");
      if (pair) mark(pair[1], pair[2], f);
    }
  }
  return pairs;
}

function topoFigures(sections, findings, byWorst) {
  const matrices = sections.filter((sec) => sec.kind === "topo_matrix" && sec.data?.devices?.length);
  matrices.sort((a, b) => byWorst(a.host ?? null, b.host ?? null));
  return matrices.slice(0, MAX_HOSTS).map((sec) => topoFigure(sec, findings));
}

function topoFigure(sec, findings) {
  const devices = sec.data.devices.map((d) => d.name);
  const cells = new Map(sec.data.cells.map((c) => [`${c.from}|${c.to}`, c]));
  const problems = problemCells(findings, sec.host ?? null);
  const size = 38;
  const labelW = 64;
  const top = 22;
  const n = devices.length;
  const flagged = [];
  const grid = [];
  devices.forEach((from, r) => {
    grid.push(s("text", { class: "axis", x: labelW - 6, y: top + r * size + size / 2 + 4, "text-anchor": "end" }, from));
    grid.push(s("text", { class: "axis", x: labelW + r * size + size / 2, y: top - 8, "text-anchor": "middle" }, from));
    devices.forEach((to, c) => {
      const cell = cells.get(`${from}|${to}`);
      const label = from === to ? "X" : linkLabel(cell?.value);
      const type = from === to ? "self_cell" : cell?.value?.type ?? "missing";
      const problem = problems.get(`${from}|${to}`);
      if (problem && r < c) flagged.push(`${from}–${to} ${label} (${problem.rule} ${problem.severity})`);
      grid.push(s("g", { class: `cell t-${type}${problem ? ` problem sev-${problem.severity}` : ""}`, "data-from": from, "data-to": to },
        s("title", {}, `${from} ↔ ${to}: ${label}${problem ? ` — ${problem.rule}: ${problem.message}` : ""}`),
        s("rect", { x: labelW + c * size + 1, y: top + r * size + 1, width: size - 2, height: size - 2, rx: 3 }),
        s("text", { x: labelW + c * size + size / 2, y: top + r * size + size / 2 + 4, "text-anchor": "middle" }, label)));
    });
  });
  const width = labelW + n * size + 4;
  const height = top + n * size + 4;
  const caption = `Topology matrix (nvidia-smi topo -m)${sec.host ? ` on ${sec.host}` : ""}, lines ${sec.first_line}–${sec.last_line}`;
  const description = `${caption}: ${n} devices. ` +
    (flagged.length ? `Problem cells: ${flagged.join("; ")}.` : "No cell is named by a finding.");
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": description }, grid);
  const rows = devices.map((from) => [from, ...devices.map((to) => {
    const problem = problems.get(`${from}|${to}`);
    const label = from === to ? "X" : linkLabel(cells.get(`${from}|${to}`)?.value);
    return problem ? h("strong", { class: `sev-text-${problem.severity}` }, `${label} (${problem.rule})`) : label;
  })]);
  return figure("topo", caption, svg, description, table(["", ...devices], rows));
}

// ----------------------------------------------------------- host heatmap

function heatmap(report, onCell) {
  const hostsWithData = new Set((report.documents ?? [report.document]).flatMap((d) => d?.sections ?? []).map((sec) => sec.host).filter(Boolean));
  for (const f of report.findings) if (f.subject?.host) hostsWithData.add(f.subject.host);
  if (hostsWithData.size < 2) return null;
  const worst = new Map();
  const count = new Map();
  for (const f of report.findings) {
    const key = `${f.subject?.host ?? ""}|${f.rule}`;
    count.set(key, (count.get(key) ?? 0) + 1);
    if (!worst.has(key) || severityRank(f.severity) < severityRank(worst.get(key))) worst.set(key, f.severity);
  }
  const rules = [...new Set(report.findings.map((f) => f.rule))].sort();
  const rank = (host) => Math.min(9, ...rules.map((r) => (worst.has(`${host}|${r}`) ? severityRank(worst.get(`${host}|${r}`)) : 9)));
  const hosts = [...hostsWithData].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const cellW = 34;
  const cellH = 18;
  const labelW = Math.min(180, 8 + 7 * Math.max(4, ...hosts.map((x) => x.length)));
  const top = 8 + 6 * Math.min(12, Math.max(...rules.map((r) => r.length)));
  const items = [];
  rules.forEach((rule, c) => items.push(s("text", {
    class: "axis", x: labelW + c * cellW + cellW / 2, y: top - 4, "text-anchor": "start",
    transform: `rotate(-45 ${labelW + c * cellW + cellW / 2} ${top - 4})`,
  }, rule)));
  hosts.forEach((host, r) => {
    items.push(s("text", { class: "axis", x: labelW - 6, y: top + r * cellH + cellH / 2 + 4, "text-anchor": "end" }, host));
    rules.forEach((rule, c) => {
      const sev = worst.get(`${host}|${rule}`);
      const n = count.get(`${host}|${rule}`) ?? 0;
      items.push(s("g", {
        class: `hm-cell ${sev ? `sev-${sev}` : "sev-none"}`, "data-host": host, "data-rule": rule,
        onclick: sev && onCell ? () => onCell(host, rule) : null,
      },
      s("title", {}, `${host} · ${rule}: ${sev ? `${plural(n, "finding")}, worst ${sev}` : "nothing found"}`),
      s("rect", { x: labelW + c * cellW + 1, y: top + r * cellH + 1, width: cellW - 2, height: cellH - 2, rx: 2 })));
    });
  });
  const width = labelW + Math.max(1, rules.length) * cellW + top;
  const height = top + hosts.length * cellH + 4;
  const problemHosts = hosts.filter((x) => rank(x) < 9);
  const caption = `Hosts × rules: the worst finding of each rule on each host (${plural(hosts.length, "host")}, ${plural(rules.length, "rule")} fired)`;
  const description = `${caption}. ` + (problemHosts.length
    ? `Hosts with findings, worst first: ${problemHosts.slice(0, 20).map((x) => `${x} (${SEVERITIES[rank(x)]})`).join(", ")}${problemHosts.length > 20 ? ", …" : ""}.`
    : "No host has a finding.");
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": description }, items);
  const rows = hosts.map((host) => [host, ...rules.map((rule) => {
    const sev = worst.get(`${host}|${rule}`);
    return sev ? `${sev} ×${count.get(`${host}|${rule}`)}` : "";
  })]);
  return figure("heatmap", caption, svg, description, table(["host", ...rules], rows));
}
