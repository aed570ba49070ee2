/* diagqa report.html: sortable and filterable tables, and the sample explorer with its drill-down.
   Everything is in this page: the samples are a gzip-compressed JSON value in
   <script id="diagqa-data">, opened with the browser's DecompressionStream. */
"use strict";

var CLASS_COLORS = {
  grounded: "#009E73", lucky_guess: "#E69F00", misread: "#CC79A7", retrieval_miss: "#999999",
  extraction_error: "#56B4E9", abstained_appropriate: "#0072B2", abstained_miss: "#F0E442", error: "#000000"
};
var PAGE = 50;

function el(tag, attrs, children) {
  var e = document.createElement(tag);
  if (attrs) {
    Object.keys(attrs).forEach(function (k) {
      if (k === "text") e.textContent = attrs[k];
      else if (k === "cls") e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    });
  }
  (children || []).forEach(function (c) { if (c != null) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
  return e;
}

function fmt(v, decimals) {
  if (v === null || v === undefined || v === "") return "–";
  if (v === true) return "yes";
  if (v === false) return "no";
  if (typeof v === "number") return Number.isInteger(v) && !decimals ? String(v) : v.toFixed(2);
  return String(v);
}

/* Whether a column holds fractions (JSON writes 1.0 as 1: such a column shows every value with decimals). */
var fractional = {};
function isFractional(name) {
  if (!(name in fractional)) {
    fractional[name] = (D.columns[name] || []).some(function (v) { return typeof v === "number" && !Number.isInteger(v); });
  }
  return fractional[name];
}

/* A cell's sort key: the leading number of its text when it has one (so "0.50 [0.40, 0.61]" sorts as 0.5). */
function sortKey(text) {
  var t = text.trim();
  if (t === "–" || t === "") return { empty: true };
  var m = /^-?\d+(\.\d+)?(e-?\d+)?/.exec(t);
  if (m) return { num: parseFloat(m[0]) };
  if (t === "yes") return { num: 1 };
  if (t === "no") return { num: 0 };
  return { str: t.toLowerCase() };
}

/* A sample field's sort key, from its value (not its rounded text). */
function valueKey(v) {
  if (v === null || v === undefined || v === "") return { empty: true };
  if (typeof v === "number") return { num: v };
  if (typeof v === "boolean") return { num: v ? 1 : 0 };
  return { str: String(v).toLowerCase() };
}

function compareKeys(a, b) {
  if (a.empty || b.empty) return a.empty && b.empty ? 0 : a.empty ? 1 : -1; // unmeasured last
  if (a.num !== undefined && b.num !== undefined) return a.num - b.num;
  if (a.num !== undefined) return -1;
  if (b.num !== undefined) return 1;
  return a.str < b.str ? -1 : a.str > b.str ? 1 : 0;
}

/* Every table of the report: click a header to sort (again to reverse), type to filter rows. */
function enhanceTable(table, index) {
  var body = table.tBodies[0];
  if (!body || body.rows.length < 2) return;
  var rows = Array.prototype.slice.call(body.rows);
  var input = el("input", { type: "search", placeholder: "filter rows…", cls: "tfilter", "aria-label": "filter rows",
    "data-table": String(index) });
  var count = el("span", { cls: "tcount", text: rows.length + " rows" });
  table.parentNode.insertBefore(el("div", { cls: "tools" }, [input, count]), table);
  input.addEventListener("input", function () {
    var q = input.value.trim().toLowerCase(), shown = 0;
    rows.forEach(function (r) {
      var hit = !q || r.textContent.toLowerCase().indexOf(q) >= 0;
      r.style.display = hit ? "" : "none";
      if (hit) shown++;
    });
    count.textContent = shown + " of " + rows.length + " rows";
  });
  var heads = table.tHead ? table.tHead.rows[0].cells : [];
  Array.prototype.forEach.call(heads, function (th, col) {
    th.classList.add("sortable");
    th.title = "sort by " + th.textContent;
    th.addEventListener("click", function () {
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      Array.prototype.forEach.call(heads, function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var keyed = rows.map(function (r, i) { return [sortKey(r.cells[col] ? r.cells[col].textContent : ""), i, r]; });
      keyed.sort(function (a, b) { return dir * compareKeys(a[0], b[0]) || a[1] - b[1]; });
      keyed.forEach(function (k) { body.appendChild(k[2]); });
    });
  });
}

/* -- the sample explorer --------------------------------------------------------------------------- */

var D = null, state = { sort: null, dir: 1, page: 0, order: [] };

function field(i, name) {
  if (name === "question") return D.columns.question[i];
  return D.columns[name] ? D.columns[name][i] : undefined;
}

function classBadge(c) {
  if (!c) return el("span", { text: "–" });
  var b = el("span", { cls: "badge", text: c.replace(/_/g, " ") });
  b.style.borderColor = CLASS_COLORS[c] || "#666";
  b.style.background = (CLASS_COLORS[c] || "#666") + "33";
  return b;
}

function distinct(name) {
  var seen = {};
  (D.columns[name] || []).forEach(function (v) { if (v !== null && v !== undefined) seen[v] = (seen[v] || 0) + 1; });
  return Object.keys(seen).sort();
}

function buildFilters(box) {
  var make = function (name, label) {
    var s = el("select", { id: "f-" + name, "aria-label": label, "data-field": name });
    s.appendChild(el("option", { value: "", text: "all " + label }));
    distinct(name).forEach(function (v) { s.appendChild(el("option", { value: v, text: v.replace(/_/g, " ") })); });
    s.addEventListener("change", refresh);
    return s;
  };
  var search = el("input", { id: "f-text", type: "search", placeholder: "question, answer or id…", "aria-label": "search samples" });
  search.addEventListener("input", refresh);
  box.appendChild(make("variant", "variants"));
  box.appendChild(make("answerer", "answerers"));
  if (D.columns.guess_class) box.appendChild(make("guess_class", "classes"));
  box.appendChild(search);
}

function matches(i, filters, text) {
  for (var k = 0; k < filters.length; k++) {
    if (String(field(i, filters[k][0])) !== filters[k][1]) return false;
  }
  if (text) {
    var q = D.questions[D.q[i]];
    var hay = (q.text + " " + q.id + " " + q.gold_text + " " + fmt(field(i, "answer"))).toLowerCase();
    if (hay.indexOf(text) < 0) return false;
  }
  return true;
}

function refresh() {
  var filters = [];
  document.querySelectorAll("#explorer select[data-field]").forEach(function (s) {
    if (s.value) filters.push([s.getAttribute("data-field"), s.value]);
  });
  var text = document.getElementById("f-text").value.trim().toLowerCase();
  var n = D.q.length, order = [];
  for (var i = 0; i < n; i++) if (matches(i, filters, text)) order.push(i);
  if (state.sort) {
    var name = state.sort, dir = state.dir;
    var keys = order.map(function (i) { return [valueKey(field(i, name)), i]; });
    keys.sort(function (a, b) { return dir * compareKeys(a[0], b[0]) || a[1] - b[1]; });
    order = keys.map(function (k) { return k[1]; });
  }
  state.order = order;
  state.page = 0;
  draw();
}

function draw() {
  var body = document.querySelector("#samples tbody");
  body.textContent = "";
  var start = state.page * PAGE, end = Math.min(state.order.length, start + PAGE);
  for (var r = start; r < end; r++) {
    var i = state.order[r];
    var tr = el("tr", { "data-sample": String(i), tabindex: "0" });
    D.grid.forEach(function (name) {
      var v = field(i, name), td;
      if (name === "guess_class") td = el("td", null, [classBadge(v)]);
      else td = el("td", { cls: typeof v === "number" ? "num" : "txt", text: fmt(v, isFractional(name)) });
      if (name === "question") td.title = D.questions[D.q[i]].text;
      tr.appendChild(td);
    });
    tr.addEventListener("click", openSample.bind(null, i));
    tr.addEventListener("keydown", function (ev) { if (ev.key === "Enter") openSample(+this.getAttribute("data-sample")); });
    body.appendChild(tr);
  }
  var pages = Math.max(1, Math.ceil(state.order.length / PAGE));
  document.getElementById("count").textContent = state.order.length + " of " + D.q.length + " samples · page " +
    (state.page + 1) + " of " + pages;
  document.getElementById("prev").disabled = state.page === 0;
  document.getElementById("next").disabled = state.page >= pages - 1;
}

function buildExplorer(root) {
  var filters = el("div", { cls: "tools" });
  root.appendChild(filters);
  buildFilters(filters);
  var head = el("tr");
  D.grid.forEach(function (name) {
    var th = el("th", { cls: "sortable", "data-field": name, text: name.replace(/_/g, " "), title: "sort by " + name });
    th.addEventListener("click", function () {
      state.dir = state.sort === name ? -state.dir : 1;
      state.sort = name;
      root.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", state.dir === 1 ? "ascending" : "descending");
      refresh();
    });
    head.appendChild(th);
  });
  root.appendChild(el("table", { id: "samples" }, [el("thead", null, [head]), el("tbody")]));
  var prev = el("button", { id: "prev", text: "‹ previous" }), next = el("button", { id: "next", text: "next ›" });
  prev.addEventListener("click", function () { state.page--; draw(); });
  next.addEventListener("click", function () { state.page++; draw(); });
  root.appendChild(el("div", { cls: "tools" }, [prev, next, el("span", { id: "count", cls: "tcount" })]));
  refresh();
}

/* -- the drill-down -------------------------------------------------------------------------------- */

function setOf(list) { var s = {}; (list || []).forEach(function (x) { s[x] = true; }); return s; }

function paint(box, diagram, gold, got) {
  box.innerHTML = diagram.svg;
  var svg = box.querySelector("svg");
  if (svg) { svg.removeAttribute("width"); svg.removeAttribute("height"); svg.classList.add("diagram"); }
  var mark = function (cls, kind) {
    if (!cls) return;
    // the class is the first of the group's classes: d2 adds the names of its D2 classes after it
    var g = box.querySelector('g[class~="' + cls + '"]');
    if (g) g.classList.add(kind);
  };
  var goldE = setOf(gold.e), gotE = setOf(got.e), goldN = setOf(gold.n), gotN = setOf(got.n);
  var counts = { "hl-hit": [0, 0], "hl-missed": [0, 0], "hl-extra": [0, 0] }; // [edges, nodes]
  diagram.edges.forEach(function (e, i) {
    var kind = goldE[i] ? (gotE[i] ? "hl-hit" : "hl-missed") : gotE[i] ? "hl-extra" : null;
    if (kind) { mark(e[4], kind); counts[kind][0]++; }
  });
  // a certificate's nodes include its edges' ends; so does what was retrieved
  diagram.edges.forEach(function (e, i) {
    if (goldE[i]) { goldN[e[0]] = true; goldN[e[1]] = true; }
    if (gotE[i]) { gotN[e[0]] = true; gotN[e[1]] = true; }
  });
  Object.keys(diagram.nodes).forEach(function (n) {
    var kind = goldN[n] ? (gotN[n] ? "hl-hit" : "hl-missed") : gotN[n] ? "hl-extra" : null;
    if (kind) { mark(diagram.nodes[n], kind); counts[kind][1]++; }
  });
  return counts;
}

function kv(dl, k, v) {
  dl.appendChild(el("dt", { text: k }));
  dl.appendChild(el("dd", null, [v instanceof Node ? v : el("span", { text: fmt(v) })]));
}

function openSample(i) {
  var dlg = document.getElementById("drill"), body = document.getElementById("drill-body");
  body.textContent = "";
  var q = D.questions[D.q[i]], c = D.c[i] === null ? null : D.contexts[D.c[i]];
  body.appendChild(el("h3", { text: q.text }));
  var dl = el("dl", { cls: "facts" });
  kv(dl, "sample", field(i, "sample_id"));
  kv(dl, "question", q.id + " (" + q.type + (q.counter_prior ? ", counter-prior" : "") + ")" + (q.where ? " — " + q.where : ""));
  kv(dl, "gold answer", el("strong", { text: q.gold_text }));
  kv(dl, "answer", el("strong", { text: fmt(field(i, "answer")) }));
  kv(dl, "class", classBadge(field(i, "guess_class")));
  kv(dl, "variant × answerer", field(i, "variant") + " × " + field(i, "answerer"));
  if (field(i, "explanation")) kv(dl, "explanation", field(i, "explanation"));
  body.appendChild(dl);

  var drawn = D.diagrams[q.diagram];
  if (drawn) {
    var fig = el("figure", { cls: "drill-diagram", id: "drill-diagram" });
    var box = el("div", { cls: "svgbox overlay" });
    fig.appendChild(box);
    var got = c ? c.map : { n: [], e: [], u: [] };
    var counts = paint(box, drawn, q.gold_map, got);
    var n = function (k) { return " (" + counts[k][0] + " edges, " + counts[k][1] + " nodes)"; };
    var legend = el("figcaption", null, [
      el("span", { cls: "key hl-hit-key", text: "gold, in the context" + n("hl-hit") }),
      el("span", { cls: "key hl-missed-key", text: "gold, missed" + n("hl-missed") }),
      el("span", { cls: "key hl-extra-key", text: "in the context, not gold" + n("hl-extra") })]);
    fig.appendChild(legend);
    if (c && c.retrieved) fig.appendChild(el("p", { cls: "note", text: "The selector retrieved " + c.retrieved.edges +
      " edges and " + c.retrieved.nodes + " nodes; this answerer received " +
      (c.map.e.length || c.map.n.length ? "only what is drawn here." : "none of them.") }));
    if (c && c.other_diagram) fig.appendChild(el("p", { cls: "note", text: "The finder returned diagram " + c.other_diagram +
      ": nothing of this diagram reached the answerer." }));
    var off = (q.gold_map.u || []).map(function (u) { return "gold: " + u; })
      .concat(((c && c.map.u) || []).map(function (u) { return "retrieved: " + u; }));
    if (off.length) fig.appendChild(el("p", { cls: "note", text: "Not on the drawn diagram: " + off.join("; ") }));
    body.appendChild(el("h4", { text: "Diagram " + q.diagram }));
    body.appendChild(fig);
  } else {
    var why = D.missing_diagrams[q.diagram];
    body.appendChild(el("p", { cls: "note", text: "Diagram " + q.diagram + " is not drawn in this report" +
      (why ? " (" + why + ")" : " (diagrams are drawn for the samples classed " + D.drawn.join(", ").replace(/_/g, " ") + ")") + "." }));
  }

  body.appendChild(el("h4", { text: "Context as the answerer saw it" }));
  body.appendChild(el("pre", { cls: "context", text: c ? (c.text || "(empty)") : "(no context: an earlier stage failed)" }));

  body.appendChild(el("h4", { text: "Every field of the sample" }));
  var t = el("table", { cls: "fields" }), tb = el("tbody");
  D.fields.forEach(function (name) {
    if (name === "explanation") return;
    var v = field(i, name);
    tb.appendChild(el("tr", null, [el("th", { text: name }),
      el("td", { text: typeof v === "number" && isFractional(name) ? String(Math.round(v * 10000) / 10000) : fmt(v) })]));
  });
  t.appendChild(tb);
  body.appendChild(t);
  if (typeof dlg.showModal === "function") dlg.showModal(); else dlg.setAttribute("open", "");
  dlg.scrollTop = 0;
}

async function loadData() {
  var node = document.getElementById("diagqa-data");
  if (!node) return null;
  var bin = atob(node.textContent.trim()), bytes = new Uint8Array(bin.length);
  for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("main table").forEach(enhanceTable);
  var root = document.getElementById("explorer");
  var dlg = document.getElementById("drill");
  document.getElementById("drill-close").addEventListener("click", function () { dlg.close(); });
  if (!root) return;
  if (typeof DecompressionStream === "undefined") {
    root.appendChild(el("p", { cls: "note", text: "This browser cannot open the embedded samples (no DecompressionStream); " +
      "samples.jsonl holds them." }));
    return;
  }
  loadData().then(function (data) {
    D = data;
    root.querySelector(".loading").remove();
    buildExplorer(root);
    document.body.setAttribute("data-ready", "1");
  }).catch(function (err) {
    root.appendChild(el("p", { cls: "note", text: "The embedded samples could not be read: " + err }));
    throw err;
  });
});
