/* wireinspect view: draws the page from the JSON in #wi-data (see render/html.py).
   Every piece of data reaches the DOM through textContent or a property, never as markup. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("wi-data").textContent);
  var units = D.units, inputs = D.inputs;
  var S = {u: -1, n: -1, expanded: {}, problem: -1, note: -1, match: null};
  var problems = [], notes = [];  // notes: findings that are not damage (never counted as problems)
  var KEYS = ["u", "n", "p", "l", "s", "v", "d", "x", "o", "pr"];  // render/html.py NODE_KEYS
  units.forEach(function (u, ui) {
    u.nodes = u.nodes.map(function (a) {
      var r = {};
      for (var k = 0; k < a.length; k++) if (a[k] !== null) r[KEYS[k]] = a[k];
      return r;
    });
    u.pr.forEach(function (p) { problems.push({u: ui, n: p[0], code: p[1], pos: p[2], msg: p[3]}); });
    u.nk = (u.nt || []).map(function (p) {
      notes.push({u: ui, code: p[0], pos: p[1], msg: p[2], file: p[3]});
      return notes.length - 1;
    });
    var kids = u.nodes.map(function () { return []; });
    var depth = [];
    u.nodes.forEach(function (r, i) {
      if (r.u >= 0) kids[r.u].push(i);
      depth.push(r.u >= 0 ? depth[r.u] + 1 : 0);
    });
    u.kids = kids; u.depth = depth;
  });

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function hex(n, w) { var s = n.toString(16); while (s.length < (w || 8)) s = "0" + s; return s; }
  function iso(ms) { try { return new Date(ms).toISOString(); } catch (e) { return String(ms); } }
  function bytesOf(sp) {
    if (sp.bytes) return sp.bytes;
    if (sp.b === null || sp.b === undefined) return null;
    var s = atob(sp.b), a = new Uint8Array(s.length);
    for (var i = 0; i < s.length; i++) a[i] = s.charCodeAt(i);
    sp.bytes = a;
    return a;
  }

  /* ---------- layout ---------- */
  var body = document.body;
  var head = el("header", "top");
  var title = el("h1", null, "wireinspect view");
  head.appendChild(title);
  var summary = el("div", "summary");
  var nmore = units.reduce(function (t, u) { return t + (u.prMore || 0); }, 0);  // problems counted, not listed
  var nprob = problems.length + nmore;
  // nothing shown: why (a selection that matched nothing says so under its input, ops/view.py)
  var emptyWhy = "";
  inputs.forEach(function (inp) {
    inp.leftOut.forEach(function (t) { if (!emptyWhy && t.indexOf("no unit matched the selection") === 0) emptyWhy = t; });
  });
  var emptyText = "No unit shown" + (emptyWhy ? ": " + emptyWhy : " (see what was left out, above)");
  summary.textContent = units.length + " unit(s) shown from " + inputs.length + " input(s); " +
    nprob + " problem(s)" + (notes.length ? ", " + notes.length + " note(s) (not damage)" : "") + (D.given.length ? "; selected by " + D.given.join(" ") : "");
  head.appendChild(summary);
  // files of a walk that were not read: a page that covers less than was asked says so
  var notRead = D.notRead || [];
  if (notRead.length || D.notReadMore) {
    var nr = el("div", "not-read");
    var nu = notRead.filter(function (x) { return x.kind === "unreadable"; }).length;
    nr.appendChild(el("div", "not-read-head", (notRead.length + (D.notReadMore || 0)) + " file(s) not read" +
      (nu ? " (" + nu + " could not be read)" : "") + ":"));
    notRead.forEach(function (x) {
      nr.appendChild(el("div", "not-read-" + x.kind, (x.kind === "unreadable" ? "could not be read: " : "skipped: ") +
        x.name + ": " + x.why));
    });
    if (D.notReadMore) nr.appendChild(el("div", null, "and " + D.notReadMore + " more"));
    head.appendChild(nr);
  }
  var search = el("input", "search");
  search.id = "search"; search.type = "search";
  search.placeholder = "search: offset N, pos 0x1f, cid 7, or text (Enter: next)";
  head.appendChild(search);
  var searchStatus = el("span", "search-status"); searchStatus.id = "search-status";
  head.appendChild(searchStatus);
  head.appendChild(el("div", "keys", "keys: \u2191\u2193 field  \u2190\u2192 fold  j/k unit  n/p problem  / search"));
  body.appendChild(head);

  var strips = el("section", "strips"); strips.id = "strips";
  body.appendChild(strips);
  var main = el("main", "panes");
  var unitList = el("nav", "units"); unitList.id = "units";
  var treeBox = el("section", "tree"); treeBox.id = "tree"; treeBox.tabIndex = 0;
  var hexBox = el("section", "hex"); hexBox.id = "hex";
  main.appendChild(unitList); main.appendChild(treeBox); main.appendChild(hexBox);
  body.appendChild(main);
  var probBox = el("section", "problems"); probBox.id = "problems";
  body.appendChild(probBox);

  /* ---------- overview strips ---------- */
  function unitAt(ii, pos) {
    var best = -1;
    units.forEach(function (u, k) {
      if (u.i !== ii) return;
      if (best < 0 && u.p + Math.max(u.l, 1) > pos) best = k;
    });
    if (best < 0) units.forEach(function (u, k) { if (u.i === ii) best = k; });
    return best;
  }
  inputs.forEach(function (inp, ii) {
    var box = el("div", "input");
    box.appendChild(el("div", "input-name", inp.name + "  (" + inp.format + ", " + inp.size + " bytes)"));
    inp.leftOut.forEach(function (t) { box.appendChild(el("div", "left-out", "left out: " + t)); });
    var st = inp.strip;
    if (st && st.kind === "bytes" && st.size > 0) {
      var strip = el("div", "strip"); strip.dataset.input = ii;
      st.bands.forEach(function (b) {
        var band = el("div", "band st-" + b[2]);
        band.style.left = (100 * b[0] / st.size) + "%";
        band.style.width = (100 * (b[1] - b[0]) / st.size) + "%";
        band.title = b[2] + ": bytes " + b[0] + ".." + b[1] + (b[3] !== null ? ", offsets " + b[3] + ".." + b[4] : "");
        band.addEventListener("click", function () { var k = unitAt(ii, b[0]); if (k >= 0) selectUnit(k); });
        strip.appendChild(band);
      });
      units.forEach(function (u, k) {
        if (u.i !== ii) return;
        var m = el("div", "shown"); m.style.left = (100 * u.p / st.size) + "%";
        m.title = "shown: unit at byte " + u.p;
        m.addEventListener("click", function () { selectUnit(k); });
        strip.appendChild(m);
      });
      if (st.cut !== null) {
        var cut = el("div", "cut"); cut.style.left = (100 * st.cut / st.size) + "%";
        cut.title = "recover cuts here (byte " + st.cut + ")";
        strip.appendChild(cut);
      }
      box.appendChild(strip);
      var axis = el("div", "axis");
      var lost = st.cut !== null ? "; recover keeps bytes 0.." + st.cut + " (" +
        (100 * st.cut / st.size).toFixed(1) + "%)" : "";
      axis.textContent = "bytes 0.." + st.size + ", " + st.units + " entries" +
        (st.offsets[0] !== null ? "; offsets " + st.offsets[0] + ".." + st.offsets[1] : "") +
        (st.times[0] !== null ? "; times " + iso(st.times[0]) + " .. " + iso(st.times[1]) : "") + lost;
      box.appendChild(axis);
      var legend = el("div", "legend");
      ["valid", "problem", "gap", "zero", "salvage"].forEach(function (s) {
        var k = el("span", "key st-" + s, {valid: "valid", problem: "problem", gap: "skipped / unparsed",
          zero: "zero tail", salvage: "kept by --salvage only"}[s]);
        legend.appendChild(k);
      });
      box.appendChild(legend);
    } else if (st && st.kind === "timeline") {
      box.appendChild(timeline(ii));
    } else if (!units.some(function (u) { return u.i === ii; })) {
      box.appendChild(el("div", "axis", "no unit of this input is shown"));
    }
    strips.appendChild(box);
  });

  function timeline(ii) {
    // one lane per connection, each drawn to its own time scale (connections of a capture are often
    // seconds apart while their frames are microseconds apart); its start and span are in its name
    var wrap = el("div", "timeline");
    var lanes = {}, order = [];
    units.forEach(function (u, k) {
      if (u.i !== ii || u.ts === undefined || !u.lane) return;
      var L = lanes[u.lane[0]];
      if (!L) { L = lanes[u.lane[0]] = {name: u.lane[1], ks: [], t0: Infinity, t1: -Infinity}; order.push(u.lane[0]); }
      L.ks.push(k);
      L.t0 = Math.min(L.t0, u.lat !== undefined ? u.ts - u.lat / 1000 : u.ts);
      L.t1 = Math.max(L.t1, u.ts);
    });
    if (!order.length) return el("div", "axis", "no captured frames with times");
    order.forEach(function (li) {
      var L = lanes[li], span = Math.max(L.t1 - L.t0, 1e-6);
      var lane = el("div", "lane");
      var name = el("div", "lane-name", "[" + li + "] " + L.name);
      name.title = L.name + ": " + new Date(L.t0 * 1000).toISOString() + " + " + (span * 1000).toFixed(3) + " ms";
      lane.appendChild(name);
      var track = el("div", "track");
      var x = function (t) { return (100 * 0.98 * (t - L.t0) / span) + "%"; };
      L.ks.forEach(function (k) {
        var u = units[k];
        if (u.dir === "response" && u.lat !== undefined) {
          var j = el("div", "join" + (u.st === "problem" ? " st-problem" : ""));
          j.style.left = x(u.ts - u.lat / 1000);
          j.style.width = (100 * 0.98 * (u.lat / 1000) / span) + "%";
          j.title = "request -> response: " + u.lat + " ms";
          track.appendChild(j);
        }
        var f = el("div", "frame " + (u.dir === "response" ? "resp" : "req") + " st-" + u.st);
        f.style.left = x(u.ts);
        f.title = u.label;
        f.dataset.unit = k;
        f.addEventListener("click", function () { selectUnit(k); });
        track.appendChild(f);
      });
      lane.appendChild(track);
      lane.appendChild(el("div", "lane-span", (span * 1000).toFixed(3) + " ms"));
      wrap.appendChild(lane);
    });
    wrap.appendChild(el("div", "axis", order.length + " connection(s), each to its own time scale (start and " +
      "span on hover, span at the right); requests above, responses below, a bar joins a response to its " +
      "request (its latency); red: problems"));
    return wrap;
  }

  /* ---------- unit list ---------- */
  var unitRows = units.map(function (u, k) {
    if (inputs.length > 1 && (k === 0 || units[k - 1].i !== u.i)) {  // units grouped under their file
      var inp = inputs[u.i], g = el("div", "unit-group", inp.name + "  (" + inp.format + ")");
      g.title = inp.name;
      unitList.appendChild(g);
    }
    var row = el("div", "unit st-" + u.st); row.dataset.u = k;
    var pos = el("span", "pos", (u.fp !== undefined ? "stream " : "") + "0x" + hex(u.p) + " +" + u.l);
    row.appendChild(pos);
    if (u.bo !== undefined) row.appendChild(el("span", "offs", "offsets " + u.bo + ".." + u.lo));
    row.appendChild(el("span", "label", u.label));
    if (u.pr.length) row.appendChild(el("span", "pcount", "\u2717 " + (u.pr.length + (u.prMore || 0))));
    if (u.nk.length) {
      var nc = el("span", "ncount", "\u2139 " + u.nk.length);
      nc.title = u.nk.length + " note(s): findings that are not damage";
      row.appendChild(nc);
    }
    row.addEventListener("click", function () { selectUnit(k); });
    unitList.appendChild(row);
    return row;
  });

  /* ---------- problems ---------- */
  probBox.appendChild(el("h2", null, !units.length ? emptyText : nprob ? "Problems (" + nprob + ")" +
    (nmore ? ": " + nmore + " not listed (the page lists " + problems.length + "; dump lists them all)" : "")
    : "No problems in the units shown"));
  var probRows = problems.map(function (p, k) {
    var row = el("div", "prob-item"); row.dataset.k = k;
    row.appendChild(el("span", "pcode", p.code));
    row.appendChild(el("span", "pos", "unit " + k2unit(p.u) + " byte 0x" + hex(p.pos) + " (" + p.pos + ")"));
    row.appendChild(el("span", "msg", p.msg));
    row.addEventListener("click", function () { gotoProblem(k); });
    probBox.appendChild(row);
    return row;
  });
  function k2unit(k) { return "#" + k + " @" + units[k].p; }
  function noteWhere(p) {
    return "unit " + k2unit(p.u) + (p.file ? " file " + p.file : "") + " byte 0x" + hex(p.pos) + " (" + p.pos + ")";
  }
  var noteBox = el("div", "notes"); noteBox.id = "notes";
  if (notes.length) {
    noteBox.appendChild(el("h2", null, "Notes (" + notes.length + "): findings that are not damage"));
    probBox.appendChild(noteBox);
  }
  var noteRows = notes.map(function (p, k) {
    var row = el("div", "note-item"); row.dataset.k = k;
    row.appendChild(el("span", "ncode", p.code));
    row.appendChild(el("span", "pos", noteWhere(p)));
    row.appendChild(el("span", "msg", p.msg));
    row.addEventListener("click", function () { gotoNote(k); });
    noteBox.appendChild(row);
    return row;
  });

  /* ---------- tree ---------- */
  function ensureVisible(u, i) {
    var e = S.expanded[S.u] || (S.expanded[S.u] = {});
    for (var p = units[u].nodes[i].u; p >= 0; p = units[u].nodes[p].u) e[p] = true;
  }
  function defaultExpanded(u) {
    // the whole tree, or, past 3,000 fields, its first 3,000 in preorder (the header and the first records)
    var e = {};
    units[u].nodes.forEach(function (r, i) { if (i < 3000) e[i] = true; });
    return e;
  }
  var rowEls = {}, visible = [];
  function renderTree() {
    treeBox.textContent = "";
    rowEls = {}; visible = [];
    var u = units[S.u]; if (!u) return;
    if (u.nk.length) {  // the unit's notes, above its fields (info, not problems)
      var box = el("div", "unit-notes");
      u.nk.forEach(function (k) {
        var p = notes[k], row = el("div", "unit-note" + (k === S.note ? " sel" : ""));
        row.dataset.k = k;
        row.appendChild(el("span", "ntag", "note"));
        row.appendChild(el("span", "ncode", p.code));
        row.appendChild(el("span", "pos", (p.file ? p.file + " " : "") + "byte 0x" + hex(p.pos)));
        row.appendChild(el("span", "nmsg", p.msg));
        row.addEventListener("click", function () { gotoNote(k); });
        box.appendChild(row);
      });
      treeBox.appendChild(box);
    }
    if (u.cut || u.prMore) {  // what the page left out of this unit (its limits, ops/view.py)
      var cut = el("div", "unit-cut");
      if (u.cut) cut.appendChild(el("div", null, u.cut + " more fields not in the page (its size limit; dump shows them)"));
      if (u.prMore) cut.appendChild(el("div", null, u.prMore + " more problems not listed (dump lists them)"));
      treeBox.appendChild(cut);
    }
    var e = S.expanded[S.u];
    var stack = [0];
    while (stack.length) {
      var i = stack.pop(), r = u.nodes[i];
      visible.push(i);
      var row = el("div", "node" + (r.x ? " derived" : "") + (r.pr ? " has-problem" : "") + (i === S.n ? " sel" : ""));
      row.dataset.i = i;
      row.style.paddingLeft = (u.depth[i] * 1.1 + 0.3) + "em";
      var kids = u.kids[i];
      row.appendChild(el("span", "tog", kids.length ? (e[i] ? "\u25be" : "\u25b8") : " "));
      row.appendChild(el("span", "pos", (r.s ? "~" : "") + hex(r.p) + " +" + r.l));
      row.appendChild(el("span", "name", r.n));
      if (r.v !== undefined) row.appendChild(el("span", "val", "= " + r.v));
      if (r.d !== undefined && r.d !== r.v) row.appendChild(el("span", "disp", r.d));
      if (r.x) row.appendChild(el("span", "tag", "derived"));
      if (r.o !== undefined) row.appendChild(el("span", "tag dec", "decompressed"));
      (r.pr || []).forEach(function (p) {
        row.appendChild(el("span", "pcode", "\u2717 " + p[0]));
        row.appendChild(el("span", "pmsg", p[2]));
      });
      treeBox.appendChild(row);
      rowEls[i] = row;
      if (kids.length && e[i]) for (var k = kids.length - 1; k >= 0; k--) stack.push(kids[k]);
    }
  }
  treeBox.addEventListener("click", function (ev) {
    var row = ev.target.closest ? ev.target.closest(".node") : null;
    if (!row) return;
    var i = +row.dataset.i;
    if (ev.target.classList.contains("tog")) { toggle(i); return; }
    selectNode(i);
  });
  function toggle(i, open) {
    var e = S.expanded[S.u];
    e[i] = open === undefined ? !e[i] : open;
    renderTree(); scrollRow();
  }
  function scrollRow() { var r = rowEls[S.n]; if (r && r.scrollIntoView) r.scrollIntoView({block: "nearest"}); }

  /* ---------- hex panes ----------
     A pane's rows are built lazily, BLOCK rows (1 KiB) at a time: an empty block is a placeholder of
     its rows' height (ROW_H, fixed in view.css), filled when it comes near the view (scroll, resize)
     or when a selection lights or scrolls to a byte in it. Highlights are kept per pane as ranges
     (pane.marks) and painted on the cells drawn, now and when later blocks are filled. */
  var panes = [];
  var BLOCK = 64, ROW_H = 16, MARGIN = 600, MAX_SYNC = 2;  // rows per block, px per row (.hrow), px drawn past the view, blocks filled at once for one field
  var HX = el("span", "hx"), HXP = el("span", "hx pb"), HXN = el("span", "hx nb");
  var AS = el("span", "as"), ASP = el("span", "as pb"), ASN = el("span", "as nb");
  var HEX2 = [], ASC = [];
  for (var b = 0; b < 256; b++) { HEX2.push(hex(b, 2)); ASC.push(b >= 32 && b < 127 ? String.fromCharCode(b) : "."); }
  function paneSpaces(u) {
    var out = [0], r = u.nodes[S.n] || u.nodes[0], ds = -1;
    if (r.s) ds = r.s; else if (r.o !== undefined) ds = r.o;
    else for (var k = 1; k < u.spaces.length; k++) if (u.spaces[k].b) { ds = k; break; }
    if (ds > 0) {
      var chain = [];
      for (var s = ds; s > 0; s = u.spaces[s].parent) chain.unshift(s);
      out = out.concat(chain);
    }
    return out;
  }
  function renderPanes() {
    var u = units[S.u];
    var want = paneSpaces(u);
    var same = panes.length === want.length && panes.every(function (p, k) { return p.u === S.u && p.s === want[k]; });
    if (!same) {
      hexBox.textContent = ""; panes = [];
      want.forEach(function (s) { panes.push(drawPane(u, s)); });
    }
    highlight();
  }
  function drawPane(u, s) {
    var sp = u.spaces[s], data = bytesOf(sp);
    var box = el("div", "pane"); box.id = "pane-" + s; box.dataset.space = s;
    var h = el("div", "pane-title");
    if (s === 0) {
      h.textContent = "bytes of the unit at " + sp.start + " (" + u.l + " bytes)";
    } else {
      var c = u.nodes[sp.node];
      h.textContent = "decompressed: " + sp.name + "; positions count from its first byte (~); from the compressed " +
        "bytes 0x" + hex(c.p) + " +" + c.l + " ";
      var link = el("button", "link", "select the compressed bytes");
      link.addEventListener("click", function () { selectNode(sp.node); });
      h.appendChild(link);
    }
    box.appendChild(h);
    var pane = {hex: [], asc: [], start: sp.start, s: s, u: S.u, box: box, data: data, marks: [], blocks: []};
    hexBox.appendChild(box);
    if (!data) {
      box.appendChild(el("div", "none", s === 0 ? "no bytes: " + (u.why || "not at hand") :
        "the decompressed bytes were not kept"));
      return pane;
    }
    var probAt = {}, noteAt = {};
    u.nodes.forEach(function (r) { if (r.s === s && r.pr) r.pr.forEach(function (p) { probAt[p[1]] = 1; }); });
    if (s === 0) {
      u.pr.forEach(function (p) { if (!u.nodes[p[0]].s) probAt[p[2]] = 1; });
      u.nk.forEach(function (k) { if (!notes[k].file) noteAt[notes[k].pos] = 1; });
    }
    pane.probAt = probAt; pane.noteAt = noteAt;
    pane.first = sp.start - (sp.start % 16);
    var rows = Math.ceil((sp.start + data.length - pane.first) / 16);
    var grid = el("div", "grid");
    for (var k = 0; k * BLOCK < rows; k++) {
      var blk = el("div", "hblock");
      blk.style.height = (Math.min(BLOCK, rows - k * BLOCK) * ROW_H) + "px";
      pane.blocks.push(blk);
      grid.appendChild(blk);
    }
    pane.grid = grid;
    grid.addEventListener("click", function (ev) {
      var t = ev.target;
      if (!t.dataset || t.dataset.p === undefined) return;
      selectByte(s, +t.dataset.p);
    });
    box.appendChild(grid);
    var more = s === 0 ? (u.more || 0) : sp.length - data.length;
    if (more > 0) box.appendChild(el("div", "none", "\u2026 " + more + " more bytes not in the page"));
    return pane;
  }
  function fillBlock(pane, k) {
    // build the rows of block k of a pane (once), painting the marks that fall in it
    var blk = pane.blocks[k];
    if (!blk || blk.dataset.filled) return;
    blk.dataset.filled = "1";
    var data = pane.data, base = pane.start, s = pane.s, probAt = pane.probAt, noteAt = pane.noteAt;
    var from = pane.first + k * BLOCK * 16, to = Math.min(from + BLOCK * 16, base + data.length);
    var frag = document.createDocumentFragment();
    for (var line = from; line < to; line += 16) {
      var row = el("div", "hrow");
      row.appendChild(el("span", "off", (s ? "~" : "") + hex(line)));
      var hx = el("span", "hexs"), as = el("span", "ascs");
      for (var p = line; p < line + 16; p++) {
        var i = p - base;
        if (i < 0 || i >= data.length) {
          hx.appendChild(el("span", "hx pad", "  ")); as.appendChild(el("span", "as pad", " "));
          continue;
        }
        var b = data[i], pb = probAt[p], nb = !pb && noteAt[p];
        var c1 = (pb ? HXP : nb ? HXN : HX).cloneNode(false), c2 = (pb ? ASP : nb ? ASN : AS).cloneNode(false);
        c1.textContent = HEX2[b]; c2.textContent = ASC[b];
        c1.setAttribute("data-p", p); c2.setAttribute("data-p", p);
        hx.appendChild(c1); as.appendChild(c2);
        pane.hex[i] = c1; pane.asc[i] = c2;
      }
      row.appendChild(hx); row.appendChild(as);
      frag.appendChild(row);
    }
    blk.appendChild(frag);
    blk.style.height = "";
    pane.marks.forEach(function (m) { paint(pane, Math.max(m[0], from), Math.min(m[1], to), m[2]); });
  }
  function blockOf(pane, pos) { return Math.floor((pos - pane.first) / (BLOCK * 16)); }
  function fillRange(pane, lo, hi, most) {
    // fill the blocks holding bytes lo..hi (at most ``most`` blocks from lo's)
    if (!pane.data || hi <= lo) return;
    lo = Math.max(lo, pane.start); hi = Math.min(hi, pane.start + pane.data.length);
    if (hi <= lo) return;
    var k0 = blockOf(pane, lo), k1 = Math.min(blockOf(pane, hi - 1), k0 + most - 1);
    for (var k = k0; k <= k1; k++) fillBlock(pane, k);
  }
  function fillVisible() {
    // fill the blocks in the hex pane's view, and MARGIN px above and below it
    if (!panes.length) return;
    var view = hexBox.getBoundingClientRect(), top = view.top - MARGIN, bottom = view.bottom + MARGIN;
    panes.forEach(function (pane) {
      if (!pane.grid) return;
      var g = pane.grid.getBoundingClientRect();
      if (g.bottom < top || g.top > bottom) return;
      var k0 = Math.max(0, Math.floor((top - g.top) / (BLOCK * ROW_H)));
      var k1 = Math.min(pane.blocks.length - 1, Math.floor((bottom - g.top) / (BLOCK * ROW_H)));
      for (var k = k0; k <= k1; k++) fillBlock(pane, k);
    });
  }
  hexBox.addEventListener("scroll", fillVisible, {passive: true});
  window.addEventListener("resize", fillVisible);
  var lit = [];
  function paint(pane, lo, hi, cls) {
    for (var p = Math.max(lo, pane.start); p < hi && p - pane.start < pane.data.length; p++) {
      var i = p - pane.start;
      if (!pane.hex[i]) continue;
      pane.hex[i].classList.add(cls); pane.asc[i].classList.add(cls);
      lit.push([pane.hex[i], cls], [pane.asc[i], cls]);
    }
  }
  function mark(pane, lo, hi, cls) {
    if (!pane.data || hi <= lo) return;
    pane.marks.push([lo, hi, cls]);
    fillRange(pane, lo, hi, MAX_SYNC);
    paint(pane, lo, hi, cls);
  }
  function highlight() {
    lit.forEach(function (x) { x[0].classList.remove(x[1]); }); lit = [];
    panes.forEach(function (pane) { pane.marks = []; });
    var u = units[S.u], r = u.nodes[S.n];
    if (!r) return;
    var firstCell = null;
    panes.forEach(function (pane) {
      if (pane.s === r.s) {
        mark(pane, r.p, r.p + r.l, "hl");
        firstCell = pane.hex[r.p - pane.start] || firstCell;
      }
    });
    // the bytes a decompressed space came from, in each pane above it
    for (var s = r.s; s > 0; s = u.spaces[s].parent) {
      var c = u.nodes[u.spaces[s].node];
      panes.forEach(function (pane) { if (pane.s === c.s) mark(pane, c.p, c.p + c.l, "link"); });
    }
    var at = null;  // the problem or note chosen in its list: its byte, outlined
    if (S.problem >= 0 && problems[S.problem].u === S.u) {
      var pb = problems[S.problem];
      at = [u.nodes[pb.n].s, pb.pos, "pcur"];
    } else if (S.note >= 0 && notes[S.note].u === S.u && !notes[S.note].file) {
      at = [0, notes[S.note].pos, "ncur"];
    }
    if (at) {
      panes.forEach(function (pane) {
        if (pane.s === at[0]) { mark(pane, at[1], at[1] + 1, at[2]); firstCell = pane.hex[at[1] - pane.start] || firstCell; }
      });
    }
    if (firstCell && firstCell.scrollIntoView) firstCell.scrollIntoView({block: "nearest"});
    fillVisible();
    var where = [];
    for (var k = S.n; k >= 0; k = u.nodes[k].u) where.unshift(u.nodes[k].n);
    searchStatus.title = where.join(" > ");
  }

  /* ---------- selection ---------- */
  function selectUnit(k, n) {
    if (k < 0 || k >= units.length) return;
    if (S.u >= 0) unitRows[S.u].classList.remove("sel");
    S.u = k;
    unitRows[k].classList.add("sel");
    if (unitRows[k].scrollIntoView) unitRows[k].scrollIntoView({block: "nearest"});
    if (!S.expanded[k]) S.expanded[k] = defaultExpanded(k);
    S.n = n === undefined ? 0 : n;
    ensureVisible(k, S.n);
    panes = [];
    renderTree(); renderPanes(); scrollRow();
  }
  function selectNode(i) {
    ensureVisible(S.u, i);
    S.n = i;
    if (!rowEls[i]) renderTree();
    Object.keys(rowEls).forEach(function (k) { rowEls[k].classList.toggle("sel", +k === i); });
    renderPanes(); scrollRow();
  }
  function innermost(u, s, pos) {
    var best = -1, bd = -1, bderived = true;
    u.nodes.forEach(function (r, i) {
      if (r.s !== s || r.l <= 0 || pos < r.p || pos >= r.p + r.l) return;
      var d = u.depth[i], der = !!r.x;
      if (best < 0 || (bderived && !der) || (der === bderived && d >= bd)) { best = i; bd = d; bderived = der; }
    });
    return best;
  }
  function selectByte(s, pos) {
    var i = innermost(units[S.u], s, pos);
    if (i >= 0) { chooseFinding(-1, -1); selectNode(i); }
  }
  function chooseFinding(pk, nk) {
    // the problem (pk) or note (nk) chosen in its list, -1 for none: its row marked, its byte outlined
    if (S.problem >= 0) probRows[S.problem].classList.remove("sel");
    if (S.note >= 0) noteRows[S.note].classList.remove("sel");
    S.problem = pk; S.note = nk;
    if (pk >= 0) probRows[pk].classList.add("sel");
    if (nk >= 0) noteRows[nk].classList.add("sel");
    var ns = treeBox.querySelectorAll(".unit-note");
    for (var j = 0; j < ns.length; j++) ns[j].classList.toggle("sel", +ns[j].dataset.k === nk);
  }
  function gotoNote(k) {
    if (k < 0 || k >= notes.length) return;
    chooseFinding(-1, k);
    var p = notes[k], u = units[p.u], n = p.file ? -1 : innermost(u, 0, p.pos);
    if (n < 0) n = 0;  // a note about no byte of the unit (a directory's file, a zero-length unit): its root
    if (S.u !== p.u) selectUnit(p.u, n); else selectNode(n);
    if (noteRows[k].scrollIntoView) noteRows[k].scrollIntoView({block: "nearest"});
  }
  function gotoProblem(k) {
    if (k < 0 || k >= problems.length) return;
    chooseFinding(k, -1);
    var p = problems[k], u = units[p.u], n = innermost(u, u.nodes[p.n].s, p.pos);
    for (var a = n; a >= 0 && a !== p.n; a = u.nodes[a].u) {}
    if (n < 0 || a !== p.n) n = p.n;  // the innermost field at the problem's byte, inside the node holding it
    if (S.u !== p.u) selectUnit(p.u, n); else selectNode(n);
    if (probRows[k].scrollIntoView) probRows[k].scrollIntoView({block: "nearest"});
  }

  /* ---------- search ---------- */
  function matchesFor(q) {
    var m, out = [];
    var num = function (t) { return /^0x/i.test(t) ? parseInt(t, 16) : parseInt(t, 10); };
    if ((m = /^(?:offset|off|o)\s*[:=]?\s*(\d+)$/i.exec(q)) || /^\d+$/.test(q)) {
      var n = num(m ? m[1] : q);
      units.forEach(function (u, k) {
        if (u.bo === undefined || n < u.bo || n > u.lo) return;
        var hit = 0;
        u.nodes.forEach(function (r, i) { if (r.n === "offset" && r.x && r.v === String(n)) hit = hit || i; });
        out.push([k, hit]);
      });
      if (out.length || m) return out;
    }
    if ((m = /^(?:pos|position|p|@|byte)?\s*[:=]?\s*(0x[0-9a-f]+|\d+)$/i.exec(q))) {
      var pos = num(m[1]);
      units.forEach(function (u, k) {
        if (pos >= u.p && pos < u.p + Math.max(u.l, 1)) { var i = innermost(u, 0, pos); out.push([k, i < 0 ? 0 : i]); }
      });
      return out;
    }
    if ((m = /^(?:cid|corr|correlation\s*id|correlationid|opaque)\s*[:=]?\s*(\d+)$/i.exec(q))) {
      units.forEach(function (u, k) {
        u.nodes.forEach(function (r, i) {
          if (/^(correlation_?id|opaque)$/i.test(r.n) && r.v === m[1]) out.push([k, i]);
        });
      });
      return out;
    }
    var low = q.toLowerCase();
    units.forEach(function (u, k) {
      u.nodes.forEach(function (r, i) {
        if ((r.v && r.v.toLowerCase().indexOf(low) >= 0) || (r.d && r.d.toLowerCase().indexOf(low) >= 0) ||
            r.n.toLowerCase() === low) out.push([k, i]);
      });
    });
    return out;
  }
  function runSearch() {
    var q = search.value.trim();
    if (!q) { searchStatus.textContent = ""; return; }
    if (!S.match || S.match.q !== q) S.match = {q: q, hits: matchesFor(q), at: -1};
    var M = S.match;
    if (!M.hits.length) { searchStatus.textContent = "no match"; return; }
    M.at = (M.at + 1) % M.hits.length;
    var h = M.hits[M.at];
    chooseFinding(-1, -1);
    if (S.u !== h[0]) selectUnit(h[0], h[1]); else selectNode(h[1]);
    searchStatus.textContent = (M.at + 1) + " of " + M.hits.length + " (Enter: next)";
  }
  search.addEventListener("keydown", function (ev) {
    if (ev.key === "Enter") { ev.preventDefault(); runSearch(); }
    if (ev.key === "Escape") { search.blur(); }
  });

  /* ---------- keyboard ---------- */
  document.addEventListener("keydown", function (ev) {
    if (ev.target === search || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var u = units[S.u]; if (!u) return;
    var at = visible.indexOf(S.n);
    switch (ev.key) {
      case "ArrowDown": if (at < visible.length - 1) selectNode(visible[at + 1]); break;
      case "ArrowUp": if (at > 0) selectNode(visible[at - 1]); break;
      case "ArrowRight": if (u.kids[S.n].length) toggle(S.n, true); break;
      case "ArrowLeft":
        if (u.kids[S.n].length && S.expanded[S.u][S.n]) toggle(S.n, false);
        else if (u.nodes[S.n].u >= 0) selectNode(u.nodes[S.n].u);
        break;
      case "j": selectUnit(S.u + 1); break;
      case "k": selectUnit(S.u - 1); break;
      case "n": gotoProblem(S.problem + 1); break;
      case "p": case "N": gotoProblem(S.problem > 0 ? S.problem - 1 : problems.length - 1); break;
      case "/": search.focus(); break;
      default: return;
    }
    ev.preventDefault();
  });

  /* ---------- open ---------- */
  if (problems.length) gotoProblem(0); else if (units.length) selectUnit(0);
  else treeBox.appendChild(el("div", "none", emptyText));
  document.body.dataset.ready = "1";
})();
