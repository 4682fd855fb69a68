// Small DOM helpers shared by the page's modules. Nodes are built with
// createElement and text nodes, never from HTML strings, so nothing pasted
// can become markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function fill(node, attrs, children) {
  for (const [key, value] of Object.entries(attrs)) {
    if (value == null || value === false) continue;
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "class") node.setAttribute("class", value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  node.append(...children.flat(Infinity).filter((c) => c != null && c !== false).map((c) => (typeof c === "number" ? String(c) : c)));
  return node;
}

/** An HTML element: `h("p", {class: "x"}, "text", child)`. */
export function h(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, the same way (presentation by class, never a style attribute). */
export function s(tag, attrs = {}, ...children) {
  return fill(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A table with a header row; cells are text or nodes. */
export function table(headers, rows, attrs = {}) {
  return h("div", { class: "table-wrap" }, h("table", attrs,
    h("thead", {}, h("tr", {}, headers.map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, rows.map((cells) => h("tr", {}, cells.map((c) => h("td", {}, c))))),
  ));
}

export const SEVERITIES = ["critical", "error", "warning", "info"];

export function severityRank(sev) {
  const i = SEVERITIES.indexOf(sev);
  return i < 0 ? SEVERITIES.length : i;
}

export function plural(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}
