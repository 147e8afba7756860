/* masrl-kb: the papers table's filters and sorting. No framework, no network.
 *
 * Filter state lives in the query string so a view can be shared:
 *   ?category=rl_method,framework&-topology=debate&year=2025&text=credit&sort=-year
 * A parameter lists included values (any of them matches); the same name with
 * a leading "-" lists excluded values. Across parameters every condition holds.
 * Free text is "text", not "q": Material's own search reads "q" from the URL.
 * "list" names a list of papers the site links a number to (masrl_kb/site/lists.py):
 *   ?list=claim-o5-never-learned keeps the rows of downloads/lists/<name>.csv.
 */
(function () {
  "use strict";

  // A list's name, as masrl_kb/site/lists.py NAME allows: never a path.
  var LIST_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

  // Only the table's own parameters filter: a shared link's tracking tags
  // (utm_source, fbclid, ...) or a stale parameter must never empty the table.
  function readState(known) {
    var state = { include: {}, exclude: {}, q: "", sort: "", list: "" };
    new URLSearchParams(window.location.search).forEach(function (value, name) {
      if (name === "text") { state.q = value; return; }
      if (name === "list") { if (LIST_NAME.test(value)) state.list = value; return; }
      if (name === "sort") { state.sort = value; return; }
      var bucket = name.charAt(0) === "-" ? state.exclude : state.include;
      var key = name.replace(/^-/, "");
      if (!known[key]) return;
      value.split(",").filter(Boolean).forEach(function (v) {
        (bucket[key] = bucket[key] || []).push(v);
      });
    });
    return state;
  }

  function writeState(state) {
    var params = new URLSearchParams();
    Object.keys(state.include).sort().forEach(function (k) {
      if (state.include[k].length) params.set(k, state.include[k].join(","));
    });
    Object.keys(state.exclude).sort().forEach(function (k) {
      if (state.exclude[k].length) params.set("-" + k, state.exclude[k].join(","));
    });
    if (state.list) params.set("list", state.list);
    if (state.q) params.set("text", state.q);
    if (state.sort) params.set("sort", state.sort);
    var query = params.toString().replace(/%2C/g, ",");
    var url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
    window.history.replaceState(window.history.state, "", url);
  }

  function values(row, param) {
    var raw = row.getAttribute("data-" + param);
    return raw ? raw.split(" ") : [];
  }

  function matches(row, state) {
    if (state.listKeys && !state.listKeys[row.getAttribute("data-key")]) return false;
    var ok = Object.keys(state.include).every(function (param) {
      var wanted = state.include[param];
      return !wanted.length || values(row, param).some(function (v) {
        return wanted.indexOf(v) >= 0;
      });
    });
    ok = ok && Object.keys(state.exclude).every(function (param) {
      return !values(row, param).some(function (v) {
        return state.exclude[param].indexOf(v) >= 0;
      });
    });
    if (ok && state.q) {
      // The row's visible text plus what it does not show (data-text), read once.
      if (row.kbText === undefined) {
        row.kbText = (row.textContent + " " + (row.getAttribute("data-text") || ""))
          .replace(/\s+/g, " ").toLowerCase();
      }
      var text = row.kbText;
      ok = state.q.toLowerCase().split(/\s+/).filter(Boolean).every(function (word) {
        return text.indexOf(word) >= 0;
      });
    }
    return ok;
  }

  function toggle(list, value, on) {
    var i = list.indexOf(value);
    if (on && i < 0) list.push(value);
    if (!on && i >= 0) list.splice(i, 1);
  }

  function chipState(state, param, value) {
    if ((state.include[param] || []).indexOf(value) >= 0) return "include";
    if ((state.exclude[param] || []).indexOf(value) >= 0) return "exclude";
    return "none";
  }

  // A cell sorts by its data-sort value when it has one (titles, counts), else by its text.
  function sortKey(cell) {
    var key = cell.getAttribute("data-sort");
    return key === null ? cell.textContent.trim().toLowerCase() : key;
  }

  function sortRows(table, sort) {
    var body = table.tBodies[0];
    var heads = table.tHead.rows[0].cells;
    var key = sort.replace(/^-/, "");
    var dir = sort.charAt(0) === "-" ? -1 : 1;
    var index = -1;
    for (var i = 0; i < heads.length; i++) {
      var match = heads[i].getAttribute("data-sort-key") === key;
      heads[i].setAttribute("aria-sort", match ? (dir > 0 ? "ascending" : "descending") : "none");
      if (match) index = i;
    }
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      if (index < 0) return a.getAttribute("data-order") - b.getAttribute("data-order");
      var x = sortKey(a.cells[index]), y = sortKey(b.cells[index]);
      var nx = parseFloat(x), ny = parseFloat(y);
      var cmp = !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
      return cmp * dir || a.getAttribute("data-order") - b.getAttribute("data-order");
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }

  // The filter parameters this table knows: one per chip group, plus its data-* columns.
  function knownParams(panel) {
    var known = {};
    panel.querySelectorAll(".kb-chip").forEach(function (chip) {
      known[chip.getAttribute("data-param")] = true;
    });
    (panel.getAttribute("data-kb-params") || "").split(" ").forEach(function (name) {
      if (name) known[name] = true;
    });
    return known;
  }

  // A minimal RFC 4180 reader: our own CSV, quoted cells may hold commas and newlines.
  function parseCsv(text) {
    var rows = [], row = [], cell = "", quoted = false;
    for (var i = 0; i < text.length; i++) {
      var c = text.charAt(i);
      if (quoted) {
        if (c === '"' && text.charAt(i + 1) === '"') { cell += '"'; i++; }
        else if (c === '"') quoted = false;
        else cell += c;
      } else if (c === '"') quoted = true;
      else if (c === ",") { row.push(cell); cell = ""; }
      else if (c === "\n" || c === "\r") {
        if (c === "\r" && text.charAt(i + 1) === "\n") i++;
        row.push(cell); rows.push(row); row = []; cell = "";
      } else cell += c;
    }
    if (cell || row.length) { row.push(cell); rows.push(row); }
    return rows;
  }

  function csvLine(cells) {
    return cells.map(function (v) {
      return /[",\r\n]/.test(v) ? '"' + v.replace(/"/g, '""') + '"' : v;
    }).join(",") + "\r\n";
  }

  function save(name, text, type) {
    var link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: type }));
    link.download = name;
    document.body.appendChild(link);
    link.click();
    window.setTimeout(function () { URL.revokeObjectURL(link.href); link.remove(); }, 0);
  }

  // The rows shown now, as the site's own CSV (same columns) or BibTeX (same entries).
  function download(link, rows) {
    var keys = {};
    rows.forEach(function (row) { if (!row.hidden) keys[row.getAttribute("data-key")] = true; });
    var kind = link.getAttribute("data-kb-download");
    var csvUrl = link.getAttribute("data-csv");
    fetch(csvUrl).then(function (r) { return r.text(); }).then(function (text) {
      var table = parseCsv(text);
      var head = table[0], at = head.indexOf("key"), bib = head.indexOf("bibtex_key");
      var kept = table.slice(1).filter(function (cells) { return keys[cells[at]]; });
      if (kind === "csv") {
        save("papers-view.csv", [head].concat(kept).map(csvLine).join(""), "text/csv");
        return;
      }
      var cites = {};
      kept.forEach(function (cells) { cites[cells[bib]] = true; });
      return fetch(link.getAttribute("href")).then(function (r) { return r.text(); })
        .then(function (bibtex) {
          var entries = bibtex.split(/\n(?=@)/).filter(function (entry) {
            var m = /^@\w+\{([^,]+),/.exec(entry.trim());
            return m && cites[m[1]];
          });
          save("papers-view.bib", entries.map(function (e) { return e.trim() + "\n"; })
            .join("\n"), "application/x-bibtex");
        });
    });
  }

  function init(panel, table) {
    var state = readState(knownParams(panel));
    var input = panel.querySelector("[data-kb-q]");
    var chips = panel.querySelectorAll(".kb-chip");
    var rows = Array.prototype.slice.call(table.tBodies[0].rows);
    rows.forEach(function (row, i) { row.setAttribute("data-order", i); });

    function apply() {
      var shown = 0;
      rows.forEach(function (row) {
        var visible = matches(row, state);
        row.hidden = !visible;
        if (visible) shown++;
      });
      chips.forEach(function (chip) {
        var param = chip.getAttribute("data-param"), value = chip.getAttribute("data-value");
        var n = rows.filter(function (row) {
          return !row.hidden && values(row, param).indexOf(value) >= 0;
        }).length;
        var st = chipState(state, param, value);
        chip.classList.toggle("is-include", st === "include");
        chip.classList.toggle("is-exclude", st === "exclude");
        chip.classList.toggle("is-empty", n === 0);
        // Three states: aria-pressed says "on" (keep) / "off"; an exclusion is not a press
        // but its own state, named in the label so a screen reader hears which.
        chip.setAttribute("aria-pressed", st === "include" ? "true" : "false");
        chip.setAttribute("data-state", st);
        var label = chip.getAttribute("data-label") || chip.firstChild.textContent.trim();
        chip.setAttribute("data-label", label);
        chip.setAttribute("aria-label", label + (st === "include" ? ", kept" :
          st === "exclude" ? ", excluded" : "") + ", " + n + " papers");
        chip.querySelector(".kb-n").textContent = n;
      });
      panel.querySelector("[data-kb-shown]").textContent = shown;
      var active = panel.querySelectorAll(".kb-chip.is-include, .kb-chip.is-exclude").length;
      var note = panel.querySelector("[data-kb-active]");
      if (note) note.textContent = active ? "(" + active + " active)" : "";
      sortRows(table, state.sort);
      writeState(state);
    }

    // A named list: its CSV says which rows to keep; until it arrives nothing is counted.
    var listNote = panel.querySelector("[data-kb-list-note]");
    function showList() {
      if (!listNote) return;
      listNote.hidden = !state.list;
      if (!state.list) return;
      var csv = panel.getAttribute("data-kb-lists") + state.list + ".csv";
      listNote.querySelector("[data-kb-list-name]").textContent = state.list;
      listNote.querySelector("[data-kb-list-csv]").href = csv;
      listNote.querySelector("[data-kb-list-missing]").hidden = !state.listMissing;
    }
    function loadList(done) {
      state.listKeys = null;
      state.listMissing = false;
      if (!state.list) { showList(); done(); return; }
      panel.querySelector("[data-kb-shown]").textContent = "…";
      fetch(panel.getAttribute("data-kb-lists") + state.list + ".csv").then(function (r) {
        if (!r.ok) throw new Error(r.status);
        return r.text();
      }).then(function (text) {
        var table = parseCsv(text), at = table[0].indexOf("key"), keys = {};
        table.slice(1).forEach(function (cells) { keys[cells[at]] = true; });
        state.listKeys = keys;
      }).catch(function () {
        state.listMissing = true;  // a stale or mistyped name: say so, filter nothing
      }).then(function () { showList(); done(); });
    }
    if (listNote) {
      listNote.querySelector("[data-kb-list-clear]").addEventListener("click", function () {
        state.list = "";
        loadList(apply);
      });
    }

    input.value = state.q;
    input.addEventListener("input", function () { state.q = input.value.trim(); apply(); });
    chips.forEach(function (chip) {
      chip.addEventListener("click", function () {
        var param = chip.getAttribute("data-param"), value = chip.getAttribute("data-value");
        var st = chipState(state, param, value);
        state.include[param] = state.include[param] || [];
        state.exclude[param] = state.exclude[param] || [];
        toggle(state.include[param], value, st === "none");
        toggle(state.exclude[param], value, st === "include");
        apply();
      });
    });
    table.tHead.querySelectorAll("th[data-sort-key] button").forEach(function (button) {
      button.addEventListener("click", function () {
        var key = button.parentNode.getAttribute("data-sort-key");
        state.sort = state.sort === key ? "-" + key : state.sort === "-" + key ? "" : key;
        apply();
      });
    });
    panel.querySelector("[data-kb-reset]").addEventListener("click", function () {
      state = { include: {}, exclude: {}, q: "", sort: "", list: "" };
      input.value = "";
      loadList(apply);
    });
    panel.querySelector("[data-kb-copy]").addEventListener("click", function (event) {
      var button = event.currentTarget;
      if (navigator.clipboard) navigator.clipboard.writeText(window.location.href);
      button.textContent = "Link copied";
      window.setTimeout(function () { button.textContent = "Copy link"; }, 1500);
    });
    panel.querySelectorAll("[data-kb-download]").forEach(function (link) {
      link.addEventListener("click", function (event) {
        event.preventDefault();
        download(link, rows);
      });
    });
    loadList(apply);
  }

  // Wide tables scroll inside their box: mark them so CSS shows a hint and pins column one.
  function markWide() {
    document.querySelectorAll(".kb-scroll").forEach(function (box) {
      box.classList.toggle("is-wide", box.scrollWidth > box.clientWidth + 1);
    });
  }

  // The theme's table wrappers scroll sideways on narrow screens: keyboard users must be
  // able to focus them to scroll (axe: scrollable-region-focusable).
  function focusableScrollers() {
    document.querySelectorAll(".md-typeset__scrollwrap, .kb-scroll").forEach(function (box) {
      if (!box.hasAttribute("tabindex")) box.setAttribute("tabindex", "0");
    });
  }

  function setup() {
    markWide();
    focusableScrollers();
    var facets = document.querySelector("[data-kb-facets]");
    // Phones: the tag filters fold behind their summary so the table comes first.
    if (facets && window.matchMedia("(max-width: 44.9375em)").matches &&
        !/[?&]-?[a-z_]+=/.test(window.location.search.replace(/[?&](text|sort|list)=[^&]*/g, ""))) {
      facets.open = false;
    }
    var panel = document.querySelector("[data-kb-filter]");
    var table = document.querySelector("[data-kb-table]");
    if (panel && table && !table.hasAttribute("data-kb-ready")) {
      table.setAttribute("data-kb-ready", "");
      init(panel, table);
    }
  }

  // Search: "arXiv:2508.03680" is how papers cite an id, but the search syntax reads
  // "arxiv:" as a field name. Drop the prefix before the theme's search sees the query
  // (a capturing listener runs before the theme's own).
  document.addEventListener("input", function (event) {
    var box = event.target;
    if (!box || !box.classList || !box.classList.contains("md-search__input")) return;
    var plain = box.value.replace(/^\s*arxiv\s*:\s*/i, "");
    if (plain !== box.value) box.value = plain;
  }, true);

  // Material's instant navigation swaps pages without a reload: re-run on
  // each page it shows; fall back to DOMContentLoaded without Material.
  window.addEventListener("resize", markWide);
  if (typeof document$ !== "undefined") {
    document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
