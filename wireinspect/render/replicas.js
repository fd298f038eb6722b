/* wireinspect replicas --view: per partition one strip per copy on a shared offset axis (ops/replview.py
   writes the data, "replicas" in #wi-data). Added after view.js only on such a page; view.js has drawn
   the page's frame. Every piece of data reaches the DOM through textContent or a property, never as markup. */
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("wi-data").textContent);
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  var RSTATES = ["same", "epoch", "only", "bytes", "corrupt"];
  function replicaText(P, C, b) {
    var term = P.term || "term";
    var what = {same: "the same on every copy", epoch: "another " + term + " on a copy at these offsets",
      only: "only on this copy (another lacks these offsets)", bytes: "bytes differ (this copy's CRC holds)",
      corrupt: "bytes differ, this copy's CRC fails (corrupt)"}[b[2]];
    return C.name + ": offsets " + b[0] + ".." + b[1] + (b[3] !== null ? ", " + term + " " + b[3] +
      (b[4] !== b[3] ? ".." + b[4] : "") : "") + ", " + b[5] + " record(s)" +
      (C.highWatermark !== null && b[1] >= C.highWatermark ? " (past the high watermark " + C.highWatermark + ")" : "") +
      ": " + what + "; " + b[6];
  }
  function replicaBox(P, pi) {
    var box = el("div", "partition"); box.dataset.partition = pi;
    box.appendChild(el("div", "input-name", "partition " + P.partition + ": " + P.copies.length +
      " copies; they " + P.verdict + " (shortest high watermark " + P.shortestHighWatermark + ")"));
    P.headline.forEach(function (h) { box.appendChild(el("div", "headline", "HEADLINE: " + h)); });
    var lo = P.axis[0], span = Math.max(P.axis[1] - P.axis[0], 1);
    function x(o) { return (100 * (o - lo) / span) + "%"; }
    function w(a, b) { return (100 * Math.max(b - a, 0) / span) + "%"; }
    var detail = el("div", "replica-detail", "hover or click a band: its offsets and why");
    var picked = null;
    P.copies.forEach(function (C, ci) {
      var row = el("div", "copy-row");
      var name = el("div", "copy-name", C.name); name.title = C.path;
      row.appendChild(name);
      var strip = el("div", "strip rstrip"); strip.dataset.copy = ci;
      C.bands.forEach(function (b, bi) {
        var band = el("div", "band rs-" + b[2]);
        band.style.left = x(b[0]); band.style.width = w(b[0], b[1] + 1);
        var text = replicaText(P, C, b);
        band.title = text; band.dataset.band = bi;
        band.addEventListener("mouseenter", function () { if (!picked) detail.textContent = text; });
        band.addEventListener("click", function () {
          if (picked) picked.classList.remove("sel");
          picked = band; band.classList.add("sel"); detail.textContent = text;
        });
        strip.appendChild(band);
      });
      var hw = C.highWatermark;
      if (hw !== null && C.logEnd !== null && hw < C.logEnd) {
        var past = el("div", "past-hw"); past.style.left = x(hw); past.style.width = w(hw, C.logEnd);
        strip.appendChild(past);
      }
      if (hw !== null) {
        var m = el("div", "hw"); m.style.left = x(hw); m.title = "high watermark " + hw; strip.appendChild(m);
      }
      C.truncations.forEach(function (t) {
        var tm = el("div", "trunc"); tm.style.left = x(t.to);
        tm.title = P.family + " truncates " + C.name + " to " + t.to + " following " + t.leader + " (" + t.rule + "): " +
          t.dropped + " record(s) dropped, " + t.lost + " lost, " + t.committedLost + " committed lost";
        strip.appendChild(tm);
      });
      row.appendChild(strip);
      var tr = C.truncations.map(function (t) { return "truncates to " + t.to + " following " + t.leader; });
      row.appendChild(el("div", "copy-span", (C.logEnd !== null ? "offsets " + C.logStart + ".." + (C.logEnd - 1) : "empty") +
        (hw !== null ? "; high watermark " + hw : "") + (tr.length ? "; " + tr.join(", ") : "") +
        (C.damage ? "; " + C.damage + " problem(s)" : "") + (C.binned ? "; drawn in bins" : "")));
      box.appendChild(row);
    });
    box.appendChild(el("div", "axis", "offsets " + P.axis[0] + ".." + (P.axis[1] - 1) + ", one axis for every copy" +
      (P.term ? "" : " (no term: compared by offset)")));
    var legend = el("div", "legend");
    RSTATES.forEach(function (s) {
      legend.appendChild(el("span", "key rs-" + s, {same: "same on all copies", epoch: "differs in " + (P.term || "term"),
        only: "only on this copy", bytes: "bytes differ", corrupt: "corrupt (CRC fails)"}[s]));
    });
    legend.appendChild(el("span", "key past rs-same", "past the high watermark (hatched)"));
    legend.appendChild(el("span", "key key-hw", "| high watermark"));
    legend.appendChild(el("span", "key key-trunc", "| " + P.family + " truncates to"));
    box.appendChild(legend);
    P.divergences.forEach(function (d) {
      box.appendChild(el("div", "divergence", d.copies.join(" / ") + " part at offset " + d.offset + ": " + d.reason +
        " (" + d.holder + ")"));
    });
    box.appendChild(detail);
    return box;
  }
  document.body.classList.add("replicas-page");
  document.querySelector(".top h1").textContent = "wireinspect replicas";
  document.querySelector(".top .summary").textContent = D.replicas.length + " partition(s) compared";
  var strips = document.getElementById("strips");
  D.replicas.forEach(function (P, pi) { strips.appendChild(replicaBox(P, pi)); });

})();
