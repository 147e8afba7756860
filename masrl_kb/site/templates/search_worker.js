/* masrl-kb's search worker: the theme's own worker (imported below, unchanged), with
 * three additions (masrl_kb/site/search.py writes this file into the site).
 *
 * 1. The documents load when a reader first types, not with every page: the page hands
 *    the worker only the index's settings (search/search_index.json holds no documents);
 *    the documents (search/search_docs.json) are fetched on the first query that is not
 *    blank, and every query waits for them.
 * 2. Researchers' words: each plain word also searches its English stem as a prefix
 *    (lunr's Porter stemmer: "stopping" finds "stop", "stops", "stopped"), and stop words
 *    are dropped when the query has other words ("when to stop" searches "stop"; the
 *    theme's own query would look for words starting with "to"). A quoted phrase
 *    requires each of its words (as a stem prefix).
 * 3. Phrases: results whose text holds the query's words in order, as typed (a quoted
 *    phrase, or the whole query of several words), come first. A paper's search tags
 *    (its tags, decisions and benchmarks) are shown only when they matched.
 */
"use strict";

var MATERIAL = "__MATERIAL_WORKER__";
var DOCS = "../../../search/search_docs.json"; // from assets/javascripts/workers/
var SETUP = 0, READY = 1, QUERY = 2, RESULT = 3; // the theme's message types

var realAdd = self.addEventListener.bind(self);
var realPost = self.postMessage.bind(self);
var material = null; // the theme's message listener
self.addEventListener = function (type, listener) {
  if (type === "message") material = listener;
  else realAdd.apply(self, arguments);
};
importScripts(MATERIAL);
self.addEventListener = realAdd;

var setup = null; // the theme's SETUP data, documents still to come
var loading = null; // the documents' promise, once a query asked for them
var chain = Promise.resolve(); // queries answered one after another, in order
var phrases = []; // the phrases of the query being answered
var words = []; // its words, lower case, stop words out

self.postMessage = function (message) {
  if (message && message.type === READY) return; // READY went out on SETUP already
  if (message && message.type === RESULT && message.data) order(message.data);
  realPost(message);
};

function stem(word) {
  return lunr.stemmer(new lunr.Token(word)).toString();
}

function isStopWord(word) {
  return !lunr.stopWordFilter(word);
}

function plain(word) {
  return /^[a-z]{3,}$/i.test(word);
}

/* The query as the theme's search reads it: stop words out (unless nothing else is
 * left), each plain word with its stem as a second prefix, a phrase's words required. */
function rewrite(query) {
  var parts = query.split(/"([^"]*)"/);
  var words = [];
  var kept = [];
  parts.forEach(function (part, i) {
    part.split(/\s+/).forEach(function (word) {
      if (word) words.push({ word: word, phrase: i % 2 === 1 });
    });
  });
  var content = words.filter(function (w) { return !isStopWord(w.word.toLowerCase()); });
  if (!content.length) content = words;
  content.forEach(function (w) {
    var word = w.word;
    if (!plain(word)) {
      kept.push(w.phrase && /^[\w.]+$/.test(word) ? "+" + word + "*" : word);
      return;
    }
    var root = stem(word.toLowerCase());
    if (w.phrase) {
      kept.push("+" + (root.length >= 3 ? root : word.toLowerCase()) + "*");
    } else {
      kept.push(word);
      if (root !== word.toLowerCase() && root.length >= 3) kept.push(root);
    }
  });
  return kept.join(" ");
}

function phrasesOf(query) {
  var quoted = [];
  query.replace(/"([^"]+)"/g, function (_, phrase) {
    quoted.push(phrase);
    return "";
  });
  if (!quoted.length && /\S\s+\S/.test(query.trim())) quoted.push(query.replace(/"/g, ""));
  return quoted
    .map(function (p) { return p.toLowerCase().replace(/\s+/g, " ").trim(); })
    .filter(function (p) { return p.indexOf(" ") >= 0; });
}

function textOf(item) {
  return ((item.title || "") + " " + (item.text || ""))
    .replace(/<[^>]*>/g, "")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .toLowerCase();
}

/* Result groups holding a phrase first (stable); unmatched tags dropped; a word not
 * "missing" from a result when its stem matched. */
function order(result) {
  if (!result.items) return;
  result.items.forEach(function (group) {
    group.forEach(function (item) {
      var terms = item.terms || {};
      Object.keys(terms).forEach(function (term) {
        var stemmed = Object.keys(terms).some(function (other) {
          return terms[other] && other !== term && term.indexOf(other) === 0;
        });
        if (!terms[term] && stemmed) delete terms[term];
      });
      if (!item.tags) return;
      var matched = item.tags.filter(function (t) { return t.indexOf("<mark") >= 0; });
      if (matched.length) item.tags = matched;
      else delete item.tags;
    });
  });
  // A title holding a query word or its stem whole ("Torr, Philip"; "stop" for
  // "stopping") before one that only starts with it ("Torrielli"): its score counts ten
  // times (three times for a whole word in the text), and the results are re-ranked.
  result.items.forEach(function (group) {
    group.forEach(function (item) {
      var title = " " + (item.title || "").replace(/<[^>]*>/g, "").toLowerCase()
        .replace(/[^a-z0-9\u00c0-\uffff]+/g, " ") + " ";
      var text = " " + textOf({ text: item.text }).replace(/[^a-z0-9\u00c0-\uffff]+/g, " ") + " ";
      var whole = function (where) {
        return words.some(function (w) { return where.indexOf(" " + w + " ") >= 0; });
      };
      if (whole(title)) item.score *= 10;
      else if (whole(text)) item.score *= 3;
    });
    group.sort(function (a, b) { return b.score - a.score; });
  });
  var best = function (group) {
    return Math.max.apply(null, group.map(function (item) { return item.score; }));
  };
  result.items.sort(function (a, b) { return best(b) - best(a); });
  if (!phrases.length) return;
  var hits = [], rest = [];
  result.items.forEach(function (group) {
    var found = group.some(function (item) {
      var text = textOf(item);
      return phrases.some(function (p) { return text.indexOf(p) >= 0; });
    });
    (found ? hits : rest).push(group);
  });
  result.items = hits.concat(rest);
}

function load() {
  return fetch(DOCS)
    .then(function (response) {
      if (!response.ok) throw new Error("search documents: HTTP " + response.status);
      return response.json();
    })
    .then(function (docs) {
      setup.docs = docs;
      return material({ data: { type: SETUP, data: setup } });
    });
}

realAdd("message", function (event) {
  var message = event.data || {};
  if (message.type === SETUP) {
    setup = message.data;
    realPost({ type: READY });
    return;
  }
  if (message.type !== QUERY) return material(event);
  var query = String(message.data || "");
  chain = chain.then(function () {
    if (!loading && !/\S/.test(query)) {
      realPost({ type: RESULT, data: { items: [] } });
      return;
    }
    loading = loading || load();
    return loading.then(
      function () {
        phrases = phrasesOf(query);
        words = [];
        query.toLowerCase().replace(/"/g, " ").split(/\s+/).forEach(function (w) {
          if (w && !isStopWord(w)) words.push(w, plain(w) ? stem(w) : w);
        });
        return material({ data: { type: QUERY, data: rewrite(query) } });
      },
      function (error) {
        loading = null; // the next query tries again
        console.warn(String(error));
        realPost({ type: RESULT, data: { items: [] } });
      }
    );
  });
});
