// Charts of kbq answers in plain SVG (no library, nothing fetched). Each draws the chart spec the
// server computed (answer.extra.chart, see kbq/lang/chartspec.py): the words (which figure decides,
// labels, units, verdicts) come from the KB through that spec, never from this file.
// Every chart carries a text alternative (<title>, <desc>, a visually hidden summary) and its
// numbers, units and sources in a <details> below it. Unknown figures are marked, never drawn as zero.
"use strict";

const KbqCharts = (() => {
  const NS = "http://www.w3.org/2000/svg";
  const COLORS = 6; // .c0 ... .c5 in kbq.css

  function svgEl(tag, attrs, text) {
    const node = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function htmlEl(tag, text, attrs) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    return node;
  }

  // Numbers as the terminal writes them (6 significant digits, like Python's "%g").
  function fmt(value) {
    if (value === null || value === undefined) return "unknown";
    if (Math.abs(value) >= 1e7) return Math.round(value).toLocaleString("en-US");
    return String(Number(Number(value).toPrecision(6)));
  }

  function withUnit(value, unit) {
    return value === null || value === undefined ? "unknown" : fmt(value) + (unit ? " " + unit : "");
  }

  function clip(text, chars) {
    return text.length <= chars ? text : text.slice(0, chars - 1) + "…";
  }

  function seriesTitle(s) {
    return (s.rank ? s.rank + ". " : "") + s.label;
  }

  function seriesNote(s) {
    return [s.unit, s.better ? s.better + " is better" : ""].filter(Boolean).join(", ");
  }

  // A name drawn as a link that asks `describe NAME` (each figure with its source, one click away).
  function describeLink(name, attrs, text) {
    const a = svgEl("a", { href: "?q=" + encodeURIComponent("describe " + name), class: "describe" });
    a.dataset.q = "describe " + name;
    a.append(svgEl("text", attrs, text === undefined ? name : text));
    return a;
  }

  function hatch(svg) {
    const defs = svgEl("defs");
    const pattern = svgEl("pattern", { id: "kbq-hatch", width: 6, height: 6, patternUnits: "userSpaceOnUse", patternTransform: "rotate(45)" });
    pattern.append(svgEl("line", { x1: 0, y1: 0, x2: 0, y2: 6, class: "hatch-line" }));
    defs.append(pattern);
    svg.append(defs);
  }

  function frame(width, height, title, summary) {
    const svg = svgEl("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-labelledby": "chart-title chart-desc" });
    svg.append(svgEl("title", { id: "chart-title" }, title));
    svg.append(svgEl("desc", { id: "chart-desc" }, summary));
    hatch(svg);
    return svg;
  }

  function dataTable(head, rows) {
    const table = htmlEl("table", null, { class: "chart-table" });
    const tr = htmlEl("tr");
    for (const h of head) tr.append(htmlEl("th", h));
    table.append(htmlEl("thead"));
    table.tHead.append(tr);
    const body = htmlEl("tbody");
    for (const row of rows) {
      const r = htmlEl("tr");
      for (const cell of row) {
        const td = htmlEl("td", typeof cell === "number" ? fmt(cell) : cell === null ? "unknown" : String(cell));
        if (typeof cell === "number") td.className = "num";
        r.append(td);
      }
      body.append(r);
    }
    table.append(body);
    return table;
  }

  function sourceList(items) {
    const list = htmlEl("ul", null, { class: "chart-sources" });
    for (const item of items) {
      const li = htmlEl("li");
      if (item.describe) {
        const a = htmlEl("a", item.text, { href: "?q=" + encodeURIComponent("describe " + item.describe), class: "describe" });
        a.dataset.q = "describe " + item.describe;
        li.append(a);
      } else if (/^https?:\/\//.test(item.text)) {
        li.append(htmlEl("a", item.text, { href: item.text, rel: "noreferrer noopener", target: "_blank" }));
      } else {
        li.textContent = item.text;
      }
      list.append(li);
    }
    return list;
  }

  function figure(kind, svg, caption, summary, table, sources) {
    const fig = htmlEl("figure", null, { class: "chart", "data-kind": kind });
    const wrap = htmlEl("div", null, { class: "chart-wrap" });
    wrap.append(svg);
    fig.append(wrap);
    const cap = htmlEl("figcaption");
    for (const line of caption.filter(Boolean)) cap.append(htmlEl("span", line));
    fig.append(cap);
    fig.append(htmlEl("p", summary, { class: "visually-hidden" }));
    const details = htmlEl("details", null, { class: "chart-data" });
    details.append(htmlEl("summary", "Numbers, units and sources"));
    const tableWrap = htmlEl("div", null, { class: "chart-wrap" });
    tableWrap.append(table);
    details.append(tableWrap);
    if (sources.length) details.append(sourceList(sources));
    fig.append(details);
    return fig;
  }

  // --- memory breakdown: stacked parts, the GPU's capacity line, the usable share, the verdict ---

  function breakdown(spec) {
    const unit = spec.unit || "";
    const parts = spec.lines.map(([part, value]) => ({ part, value }));
    const total = parts.reduce((sum, p) => sum + p.value, 0);
    const capacity = spec.capacity || null;
    const usable = capacity ? capacity * (spec.usable_share || 1) : null;
    const scale = (Math.max(total, capacity || 0) || 1) * 1.1; // room for the labels at the end
    const W = 860, left = 20, track = 800, barY = 56, barH = 40;
    const legendRows = Math.ceil(parts.length / 3);
    const H = barY + barH + 50 + legendRows * 20;
    const per = spec.per_gpu > 1 ? ` per GPU (${spec.per_gpu} GPUs)` : "";
    const title = `memory${per}: ${withUnit(Number(total.toFixed(3)), unit)}` + (capacity ? ` on ${spec.gpu} of ${withUnit(capacity, unit)}: ${spec.verdict}` : "");
    const summary = title + ". Parts: " + parts.map((p) => `${p.part} ${withUnit(p.value, unit)}`).join(", ") + ".";
    const svg = frame(W, H, title, summary);
    svg.append(svgEl("text", { x: left, y: 22, class: "chart-title" }, clip(title, 120)));
    if (capacity) svg.append(svgEl("text", { x: left, y: 42, class: `verdict verdict-${spec.verdict.replace(/\s+/g, "-")}` }, spec.verdict));
    let x = left;
    parts.forEach((p, i) => {
      const w = (p.value / scale) * track;
      const rect = svgEl("rect", { x, y: barY, width: Math.max(w, 0), height: barH, class: `part c${i % COLORS}`, "data-part": p.part, "data-value": p.value });
      rect.append(svgEl("title", null, `${p.part}: ${withUnit(p.value, unit)}`));
      svg.append(rect);
      x += w;
    });
    svg.append(svgEl("text", { x: Math.min(x + 6, left + track - 4), y: barY + barH / 2 + 4, class: "total", "text-anchor": x + 6 > left + track - 60 ? "end" : "start" }, withUnit(Number(total.toFixed(3)), unit)));
    const marker = (value, cls, label, anchorY) => {
      const mx = left + (value / scale) * track;
      svg.append(svgEl("line", { x1: mx, x2: mx, y1: barY - 10, y2: barY + barH + 10, class: cls, "data-value": value }));
      svg.append(svgEl("text", { x: mx, y: anchorY, class: cls + "-label", "text-anchor": "end" }, label));
    };
    if (usable && usable !== capacity) marker(usable, "usable", `usable ${withUnit(Number(usable.toFixed(3)), unit)} (${Math.round((spec.usable_share || 1) * 100)}%)`, barY + barH + 24);
    if (capacity) marker(capacity, "capacity", `capacity ${withUnit(capacity, unit)}`, barY - 14);
    parts.forEach((p, i) => {
      const lx = left + (i % 3) * 280, ly = barY + barH + 44 + Math.floor(i / 3) * 20;
      svg.append(svgEl("rect", { x: lx, y: ly - 10, width: 12, height: 12, class: `swatch c${i % COLORS}` }));
      svg.append(svgEl("text", { x: lx + 18, y: ly, class: "legend" }, clip(`${p.part}: ${withUnit(p.value, unit)}`, 40)));
    });
    const sources = Object.fromEntries((spec.sources || []).map(([part, source]) => [part, source]));
    const rows = parts.map((p) => [p.part, p.value, unit, sources[p.part] || ""]);
    rows.push(["total", Number(total.toFixed(3)), unit, ""]);
    if (capacity) rows.push([`capacity of ${spec.gpu}`, capacity, unit, ""]);
    const caption = capacity ? `Parts stacked against the memory of ${spec.gpu}: capacity (solid line), usable share (dashed line).` : "Parts stacked.";
    return figure("breakdown", svg, [caption], summary, dataTable(["part", "value", "unit", "source"], rows), []);
  }

  // --- ranking: a row per GPU, a column per deciding figure (rank order), the first highlighted ---

  function bars(spec, explanation) {
    const names = spec.names;
    const series = spec.series;
    const nameW = 245, colW = 160, track = 84, rowH = 20, headH = 44;
    const W = nameW + series.length * colW + 10, H = headH + names.length * rowH + 8;
    const first = names[spec.recommended || 0];
    const unknowns = [];
    series.forEach((s) => s.values.forEach((v, i) => { if (v === null) unknowns.push(`${names[i]} (${s.label})`); }));
    const summary = `${spec.title}. ${names.length} GPUs ranked; first: ${first}. ` +
      series.map((s) => `${seriesTitle(s)}: ${names.map((n, i) => `${n} ${withUnit(s.values[i], s.unit)}`).join(", ")}`).join(". ") +
      (unknowns.length ? `. Unknown figures: ${unknowns.join("; ")}.` : ".");
    const svg = frame(W, H, spec.title, summary);
    names.forEach((name, i) => {
      const y = headH + i * rowH;
      const row = svgEl("g", { class: "row" + (i === (spec.recommended || 0) ? " recommended" : ""), "data-name": name });
      if (i % 2 === 0) row.append(svgEl("rect", { x: 0, y, width: W, height: rowH, class: "stripe" }));
      row.append(describeLink(name, { x: 6, y: y + 14, class: "name" }, clip((i === (spec.recommended || 0) ? "▶ " : "") + name, 33)));
      svg.append(row);
    });
    series.forEach((s, c) => {
      const x0 = nameW + c * colW;
      const g = svgEl("g", { class: "series", "data-column": s.column });
      const head = svgEl("text", { x: x0, y: 16, class: "series-title" }, clip(seriesTitle(s), 21));
      head.append(svgEl("title", null, `${seriesTitle(s)} (${seriesNote(s)})`));
      g.append(head);
      g.append(svgEl("text", { x: x0, y: 32, class: "series-note" }, clip(seriesNote(s), 26)));
      const known = s.values.filter((v) => v !== null).map(Math.abs);
      const top = Math.max(0, ...known) || 1;
      s.values.forEach((v, i) => {
        const y = headH + i * rowH + 3;
        if (v === null) {
          const u = svgEl("g", { class: "unknown", "data-name": names[i] });
          u.append(svgEl("rect", { x: x0, y, width: track, height: rowH - 6, class: "unknown-box", fill: "url(#kbq-hatch)" }));
          u.append(svgEl("text", { x: x0 + track / 2, y: y + 11, "text-anchor": "middle", class: "unknown-label" }, "unknown"));
          u.append(svgEl("title", null, `${names[i]}: ${s.label} unknown (no source in the KB)`));
          g.append(u);
          return;
        }
        const rect = svgEl("rect", { x: x0, y, width: Math.max((Math.abs(v) / top) * track, v === 0 ? 0 : 1), height: rowH - 6,
          class: "bar" + (i === (spec.recommended || 0) ? " first" : ""), "data-name": names[i], "data-value": v });
        rect.append(svgEl("title", null, `${names[i]}: ${withUnit(v, s.unit)}`));
        g.append(rect);
        g.append(svgEl("text", { x: x0 + track + 4, y: y + 11, class: "value" }, fmt(v)));
      });
      svg.append(g);
    });
    const caption = [spec.title, spec.profile];
    if (names.length > spec.shown) caption.push(`The answer is the first ${spec.shown}; drawn with the next ${names.length - spec.shown} of ${spec.candidates} candidates.`);
    else if (names.length < spec.candidates) caption.push(`The first ${names.length} of ${spec.candidates}; the table lists every row.`);
    if (unknowns.length) caption.push(`Hatched: unknown figures (no source in the KB; counted as the candidates' mean, never as zero).`);
    const head = ["GPU", ...series.map((s) => seriesTitle(s) + (s.unit ? ` (${s.unit})` : ""))];
    const rows = names.map((n, i) => [n, ...series.map((s) => s.values[i])]);
    return figure("bars", svg, caption, summary, dataTable(head, rows), rankingSources(names, explanation));
  }

  function rankingSources(names, explanation) {
    const lines = (explanation || []).filter((l) => /^sources?\b/.test(l)).map((text) => ({ text }));
    return lines.concat(names.map((n) => ({ text: `${n}: every figure with its source`, describe: n })));
  }

  // --- value: performance against cost, the Pareto front, the recommended card ---

  function scale(values, lo, hi, log) {
    const f = log ? Math.log10 : (v) => v;
    let a = f(Math.min(...values)), b = f(Math.max(...values));
    if (a === b) { a -= 1; b += 1; }
    const pad = (b - a) * 0.05;
    a -= pad; b += pad;
    const map = (v) => lo + ((f(v) - a) / (b - a)) * (hi - lo);
    return { map, a, b, log };
  }

  function ticks(s) {
    const out = [];
    if (s.log) {
      for (let e = Math.floor(s.a); e <= Math.ceil(s.b); e++) {
        for (const m of [1, 2, 5]) {
          const v = m * 10 ** e;
          if (Math.log10(v) >= s.a && Math.log10(v) <= s.b) out.push(v);
        }
      }
      return out;
    }
    const step = 10 ** Math.floor(Math.log10((s.b - s.a) / 4));
    const nice = [1, 2, 5, 10].map((m) => m * step).find((st) => (s.b - s.a) / st <= 6) || step * 10;
    for (let v = Math.ceil(s.a / nice) * nice; v <= s.b; v += nice) out.push(Number(v.toPrecision(10)));
    return out;
  }

  function scatter(spec, explanation) {
    const W = 860, H = 520, L = 84, R = 170, T = 44, B = 60;
    const pts = spec.points;
    const xs = scale(pts.map((p) => p.x), L, W - R, spec.x.log);
    const ys = scale(pts.map((p) => p.y), H - B, T, spec.y.log);
    const front = new Set(spec.front);
    const axisWords = (a) => `${a.label}${a.unit ? " (" + a.unit + ")" : ""}`;
    const axisNote = (a) => `${a.better} is better${a.log ? ", log scale" : ""}`;
    const axisName = (a) => `${axisWords(a)}, ${axisNote(a)}`;
    const summary = `${spec.title}. ${pts.length} GPUs: ${axisName(spec.y)} against ${axisName(spec.x)}. ` +
      `Recommended: ${spec.recommended}. Pareto front: ` +
      spec.front.map((n) => { const p = pts.find((q) => q.name === n); return `${n} (${withUnit(p.x, spec.x.unit)}, ${withUnit(p.y, spec.y.unit)})`; }).join(", ") +
      (spec.unknown.length ? `. Not drawn (unknown figure): ${spec.unknown.join(", ")}.` : ".");
    const svg = frame(W, H, spec.title, summary);
    const axes = svgEl("g", { class: "axes" });
    axes.append(svgEl("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis x-axis" }));
    axes.append(svgEl("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis y-axis" }));
    for (const v of ticks(xs)) {
      const x = xs.map(v);
      axes.append(svgEl("line", { x1: x, x2: x, y1: T, y2: H - B, class: "grid" }));
      axes.append(svgEl("text", { x, y: H - B + 16, "text-anchor": "middle", class: "tick" }, fmt(v)));
    }
    for (const v of ticks(ys)) {
      const y = ys.map(v);
      axes.append(svgEl("line", { x1: L, x2: W - R, y1: y, y2: y, class: "grid" }));
      axes.append(svgEl("text", { x: L - 6, y: y + 4, "text-anchor": "end", class: "tick" }, fmt(v)));
    }
    axes.append(svgEl("text", { x: (L + W - R) / 2, y: H - 16, "text-anchor": "middle", class: "axis-label" }, axisName(spec.x)));
    const mid = (T + H - B) / 2;
    axes.append(svgEl("text", { x: 14, y: mid, "text-anchor": "middle", class: "axis-label", transform: `rotate(-90 14 ${mid})` }, clip(axisWords(spec.y), 70)));
    axes.append(svgEl("text", { x: 28, y: mid, "text-anchor": "middle", class: "axis-label", transform: `rotate(-90 28 ${mid})` }, axisNote(spec.y)));
    svg.append(axes);
    const frontPts = spec.front.map((n) => pts.find((p) => p.name === n));
    const path = frontPts.map((p, i) => `${i ? "L" : "M"}${xs.map(p.x).toFixed(1)},${ys.map(p.y).toFixed(1)}`).join(" ");
    const frontPath = svgEl("path", { d: path, class: "front", "data-count": frontPts.length });
    frontPath.append(svgEl("title", null, "Pareto front: no other card is better on both axes"));
    svg.append(frontPath);
    const ordered = pts.slice().sort((a, b) => (a.name === spec.recommended) - (b.name === spec.recommended));
    for (const p of ordered) {
      const isBest = p.name === spec.recommended;
      const cls = ["point", front.has(p.name) ? "on-front" : "", isBest ? "recommended" : ""].filter(Boolean).join(" ");
      const dot = svgEl("circle", { cx: xs.map(p.x), cy: ys.map(p.y), r: isBest ? 7 : 4, class: cls, "data-name": p.name, "data-x": p.x, "data-y": p.y });
      dot.append(svgEl("title", null, `${p.name}: ${withUnit(p.x, spec.x.unit)}, ${withUnit(p.y, spec.y.unit)}`));
      svg.append(dot);
    }
    const labelled = frontPts.slice();
    const best = pts.find((p) => p.name === spec.recommended);
    if (best && !front.has(best.name)) labelled.push(best);
    labelled.forEach((p) => {
      const isBest = p.name === spec.recommended;
      svg.append(describeLink(p.name, { x: xs.map(p.x) + 9, y: ys.map(p.y) - 6, class: isBest ? "point-label recommended-label" : "point-label" },
        clip((isBest ? "★ " : "") + p.name, 30)));
    });
    [["recommended", "★ recommended (ranked first)"], ["on-front", "on the Pareto front (dashed line)"], ["", "other candidates"]].forEach(([cls, text], i) => {
      const lx = L + i * 230;
      svg.append(svgEl("circle", { cx: lx, cy: 16, r: 5, class: "point legend-dot " + cls }));
      svg.append(svgEl("text", { x: lx + 10, y: 20, class: "legend" }, text));
    });
    const caption = [spec.title, spec.profile, `Dashed line: the Pareto front (${spec.front.length} cards no other card beats on both axes).`];
    if (spec.unknown.length) caption.push(`Not drawn (unknown ${spec.x.label} or ${spec.y.label}): ${spec.unknown.join(", ")}.`);
    const head = ["GPU", `${spec.x.label}${spec.x.unit ? " (" + spec.x.unit + ")" : ""}`, `${spec.y.label}${spec.y.unit ? " (" + spec.y.unit + ")" : ""}`, "Pareto front"];
    const rows = pts.map((p) => [p.name, p.x, p.y, front.has(p.name) ? "yes" : ""]);
    return figure("scatter", svg, caption, summary, dataTable(head, rows), rankingSources(spec.front, explanation));
  }

  // --- comparison: for every numeric attribute one bar per GPU, normalised to the attribute's largest ---

  function paired(spec) {
    const names = spec.names, attrs = spec.attributes;
    const W = 900, cols = 3, panelW = W / cols, barH = 12, gap = 3;
    const panelH = 30 + names.length * (barH + gap) + 8;
    const legendH = 14 + names.length * 18;
    const H = legendH + Math.ceil(attrs.length / cols) * panelH;
    const summary = `${spec.title}. ` + attrs.map((a) => `${a.label}${a.unit ? " (" + a.unit + ")" : ""}: ` +
      names.map((n, i) => `${n} ${withUnit(a.values[i], a.unit)}`).join(", ")).join(". ") + ".";
    const svg = frame(W, H, spec.title, summary);
    names.forEach((n, i) => {
      svg.append(svgEl("rect", { x: 6, y: 6 + i * 18, width: 12, height: 12, class: `swatch c${i % COLORS}` }));
      svg.append(describeLink(n, { x: 24, y: 16 + i * 18, class: "legend" }));
    });
    attrs.forEach((a, k) => {
      const x0 = (k % cols) * panelW + 6, y0 = legendH + Math.floor(k / cols) * panelH;
      const g = svgEl("g", { class: "attribute", "data-column": a.column });
      const title = svgEl("text", { x: x0, y: y0 + 14, class: "series-title" }, clip(`${a.label}${a.unit ? " (" + a.unit + ")" : ""}`, 40));
      title.append(svgEl("title", null, `${a.label}${a.unit ? " (" + a.unit + ")" : ""}${a.better ? ", " + a.better + " is better" : ""}`));
      g.append(title);
      const top = Math.max(0, ...a.values.filter((v) => v !== null).map(Math.abs)) || 1;
      const track = panelW - 90;
      a.values.forEach((v, i) => {
        const y = y0 + 22 + i * (barH + gap);
        if (v === null) {
          const u = svgEl("g", { class: "unknown", "data-name": names[i] });
          u.append(svgEl("rect", { x: x0, y, width: track, height: barH, class: "unknown-box", fill: "url(#kbq-hatch)" }));
          u.append(svgEl("text", { x: x0 + track / 2, y: y + barH - 2, "text-anchor": "middle", class: "unknown-label" }, "unknown"));
          g.append(u);
          return;
        }
        const rect = svgEl("rect", { x: x0, y, width: Math.max((Math.abs(v) / top) * track, v === 0 ? 0 : 1), height: barH, class: `bar c${i % COLORS}`, "data-name": names[i], "data-value": v });
        rect.append(svgEl("title", null, `${names[i]}: ${withUnit(v, a.unit)}`));
        g.append(rect);
        g.append(svgEl("text", { x: x0 + (Math.abs(v) / top) * track + 4, y: y + barH - 2, class: "value" }, fmt(v)));
      });
      svg.append(g);
    });
    const head = ["attribute", ...names];
    const rows = attrs.map((a) => [`${a.label}${a.unit ? " (" + a.unit + ")" : ""}`, ...a.values]);
    const sources = [];
    for (const n of names) {
      sources.push({ text: `${n}: every figure with its source`, describe: n });
      for (const url of (spec.sources || {})[n] || []) sources.push({ text: url });
    }
    return figure("paired", svg, [spec.title, "Each attribute's bars are scaled to its largest value."], summary, dataTable(head, rows), sources);
  }

  const DRAW = { breakdown, bars, scatter, paired };

  // The figure for an answer, or null when the answer has no chart.
  function draw(answer) {
    const spec = answer && answer.extra && answer.extra.chart;
    if (!spec || !DRAW[spec.type]) return null;
    return DRAW[spec.type](spec, answer.explanation || []);
  }

  return { draw, fmt };
})();
