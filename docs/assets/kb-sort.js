/* masrl-kb: sortable result tables (table[data-kb-sortable]). No framework, no network.
 *
 * Progressive enhancement: the table arrives ranked and reads in full without this
 * script. The script turns each header that names a data-sort-key into a button;
 * a click sorts by that column (numbers as numbers, empty cells last in either
 * direction), a second click reverses, and aria-sort says which column and way.
 */
(function () {
  "use strict";

  function key(cell) {
    var raw = cell.getAttribute("data-sort");
    return raw === null ? cell.textContent.trim().toLowerCase() : raw;
  }

  function compare(x, y) {
    if (x === "" || y === "") return (x === "") - (y === "");
    var nx = Number(x), ny = Number(y);
    return !isNaN(nx) && !isNaN(ny) ? nx - ny : x.localeCompare(y);
  }

  function sort(table, index, dir) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = key(a.cells[index]), y = key(b.cells[index]);
      if (x === "" || y === "") return compare(x, y);  // empty last, whichever way
      return compare(x, y) * dir || a.getAttribute("data-order") - b.getAttribute("data-order");
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      if (th.hasAttribute("data-sort-key")) {
        th.setAttribute("aria-sort", i === index ? (dir > 0 ? "ascending" : "descending") : "none");
      }
    });
  }

  function enhance(table) {
    if (table.hasAttribute("data-kb-sort-ready")) return;
    table.setAttribute("data-kb-sort-ready", "");
    Array.prototype.forEach.call(table.tBodies[0].rows, function (row, i) {
      row.setAttribute("data-order", i);
    });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, index) {
      if (!th.hasAttribute("data-sort-key")) return;
      var button = document.createElement("button");
      button.type = "button";
      button.className = "kb-sort";
      while (th.firstChild) button.appendChild(th.firstChild);
      th.appendChild(button);
      button.addEventListener("click", function () {
        // A new column sorts the way its data-sort-first says (values best first, dates
        // newest first), else A to Z / lowest first; a second click reverses.
        var now = th.getAttribute("aria-sort");
        var first = th.getAttribute("data-sort-first") === "descending" ? -1 : 1;
        sort(table, index, now === "ascending" ? -1 : now === "descending" ? 1 : first);
      });
    });
  }

  function setup() {
    document.querySelectorAll("table[data-kb-sortable]").forEach(enhance);
  }

  if (typeof document$ !== "undefined") {
    document$.subscribe(setup);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setup);
  } else {
    setup();
  }
})();
