// Sharing a paste and filing a report: the paste compressed into the URL
// *fragment* (never sent to a server: browsers do not send fragments), and
// the report as Markdown for a ticket.

import { SEVERITIES, severityRank } from "./dom.js";

const FORMAT = "deflate-raw";

function toBase64Url(bytes) {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

function fromBase64Url(text) {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

async function pipe(bytes, stream) {
  return new Uint8Array(await new Response(new Blob([bytes]).stream().pipeThrough(stream)).arrayBuffer());
}

/** The fragment (without `#`) that carries `text` and the interval box. */
export async function encodeFragment(text, interval) {
  const packed = await pipe(new TextEncoder().encode(text), new CompressionStream(FORMAT));
  const params = new URLSearchParams();
  params.set("z", toBase64Url(packed));
  if (interval) params.set("i", interval);
  return params.toString();
}

/** The paste and interval in a fragment made by encodeFragment, or null when it holds none. */
export async function decodeFragment(fragment) {
  const params = new URLSearchParams(fragment.replace(/^#/, ""));
  const z = params.get("z");
  if (!z) return null;
  const bytes = await pipe(fromBase64Url(z), new DecompressionStream(FORMAT));
  return { text: new TextDecoder().decode(bytes), interval: params.get("i") ?? "" };
}

// ---------------------------------------------------------------- Markdown

const MAX_FINDINGS = 60;
const MAX_LINES = 12;

function subjectOf(f) {
  const sub = f.subject ?? {};
  return [sub.host, sub.device, sub.port != null && `port ${sub.port}`, sub.gpu != null && `GPU ${sub.gpu}`,
    sub.link != null && `link ${sub.link}`, sub.lane != null && `lane ${sub.lane}`].filter(Boolean).join(" ");
}

/** A fence that no line of `body` can close. */
function fence(body) {
  let ticks = "```";
  while (body.includes(ticks)) ticks += "`";
  return ticks;
}

function escapeInline(text) {
  return String(text).replace(/([\\`*_[\]<>|])/g, "\\$1");
}

/** The input lines a finding's evidence points at, numbered, at most MAX_LINES. */
function evidenceBlock(f, lines) {
  const out = [];
  for (const e of f.evidence ?? []) {
    if (e.first_line == null) {
      out.push(`      ${e.text}`);
      continue;
    }
    const last = Math.min(e.last_line ?? e.first_line, e.first_line + MAX_LINES - 1);
    for (let n = e.first_line; n <= last; n++) out.push(`${String(n).padStart(5)}  ${lines[n - 1] ?? ""}`);
    if ((e.last_line ?? e.first_line) > last) out.push(`   …  (to line ${e.last_line})`);
  }
  const unique = [...new Set(out)];
  if (!unique.length) return [];
  const body = unique.join("\n");
  const ticks = fence(body);
  return [`${ticks}text`, body, ticks];
}

function findingMarkdown(f, lines) {
  return [
    `- **${f.severity}** \`${f.rule}\` ${escapeInline(subjectOf(f))}: ${escapeInline(f.message)}`,
    ...evidenceBlock(f, lines).map((l) => `  ${l.replaceAll("\n", "\n  ")}`),
    f.threshold && `  Threshold: ${escapeInline(f.threshold.value)} (${escapeInline(f.threshold.source)})`,
    f.remediation && `  What to do: ${escapeInline(f.remediation)}`,
  ].filter(Boolean).join("\n");
}

/**
 * The report for a ticket: verdict, counts, then incidents (when the engine
 * groups findings) or findings, worst first, each with its input lines in a
 * fenced block. `lines` is the pasted text split into lines.
 */
export function reportMarkdown(report, lines) {
  const out = [`## fabricscope: ${escapeInline(report.verdict)}`, ""];
  out.push(`| ${SEVERITIES.join(" | ")} |`, `|${SEVERITIES.map(() => "---").join("|")}|`,
    `| ${SEVERITIES.map((s) => report.summary?.[s] ?? 0).join(" | ")} |`, "");
  const findings = report.findings ?? [];
  const worstFirst = (a, b) => severityRank(a.severity) - severityRank(b.severity);
  let shown = 0;
  if (Array.isArray(report.incidents) && report.incidents.length) {
    out.push("### Incidents", "");
    for (const inc of [...report.incidents].sort(worstFirst)) {
      if (shown >= MAX_FINDINGS) break;
      out.push(`#### ${inc.severity}: ${escapeInline(inc.title ?? inc.subject ?? inc.rule)}`);
      if (inc.probable_cause) out.push(`Probable cause: ${escapeInline(inc.probable_cause)}`);
      out.push("");
      for (const i of inc.findings ?? []) {
        const f = findings[i];
        if (!f || shown >= MAX_FINDINGS) continue;
        out.push(findingMarkdown(f, lines));
        shown++;
      }
      out.push("");
    }
  } else if (findings.length) {
    out.push("### Findings", "");
    for (const f of [...findings].sort(worstFirst).slice(0, MAX_FINDINGS)) {
      out.push(findingMarkdown(f, lines));
      shown++;
    }
    out.push("");
  } else {
    out.push("No findings.", "");
  }
  if (findings.length > shown) out.push(`… and ${findings.length - shown} more findings (full report: fabricscope JSON or HTML download).`, "");
  out.push("_Made with fabricscope; the paste was analysed locally in the browser._");
  return out.join("\n");
}
