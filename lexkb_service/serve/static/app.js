// lexkb's page: a thin client of the JSON API at /api/v1. Text from documents and answers is
// only ever set with textContent (never parsed as HTML), so a paragraph cannot inject markup.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "lexkb.key";
const API = "/api/v1";
const state = { conversation: null, documents: [], tree: null, me: null };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") node.className = value;
    else if (name === "text") node.textContent = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value !== null && value !== undefined && value !== false) node.setAttribute(name, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

// A refusal: its status, its reason as the message, and the body it came with (a lookup that
// names nothing is a 404 whose body is the lookup).
class ApiError extends Error {
  constructor(status, message, payload) { super(message); this.status = status; this.payload = payload; }
}

async function api(path, body, method) {
  const headers = { Accept: "application/json" };
  const key = sessionStorage.getItem(KEY);
  if (key) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, {
    method: method || (body === undefined ? "GET" : "POST"),
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) {
    $("key-form").hidden = false;
    $("key-input").focus();
  }
  const type = response.headers.get("content-type") || "";
  const payload = type.includes("json") ? await response.json() : await response.text();
  if (!response.ok) {
    const reason = (payload && payload.error) || `HTTP ${response.status}`;
    const wait = response.headers.get("Retry-After");
    throw new ApiError(response.status, wait ? `${reason}` : reason, payload);
  }
  return payload;
}

function withCursor(path, cursor) {
  return cursor ? `${path}${path.includes("?") ? "&" : "?"}cursor=${encodeURIComponent(cursor)}` : path;
}

// Every item of a listing, page after page: what the page needs whole (the documents its
// filters offer, the snapshots to compare, a conversation's turns).
async function every(path) {
  const items = [];
  let cursor = null;
  do {
    const page = await api(withCursor(path, cursor));
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return items;
}

// Listings too long to read whole (conversations, feedback, traces) are shown a page at a time:
// list id -> its path, how an item is shown, what a failure shows, and the next page's cursor.
// Its "More" button (id LIST-more) asks for the next page while there is one.
const listings = {};

async function firstPage(id, path, row, failed) {
  listings[id] = { path, row, failed, cursor: null };
  await nextPage(id, true);
}

async function nextPage(id, first = false) {
  const listing = listings[id];
  try {
    const page = await api(withCursor(listing.path, first ? null : listing.cursor));
    const rows = page.items.map(listing.row);
    if (first) $(id).replaceChildren(...rows);
    else $(id).append(...rows);
    listing.cursor = page.next_cursor;
    $(`${id}-more`).hidden = !page.next_cursor;
  } catch (error) {
    listing.failed(error);
  }
}

// What `get` found for a reference: a unit, or (a 404) the lookup that says why not.
async function lookup(reference) {
  try {
    return await api(`${API}/get?reference=${encodeURIComponent(reference)}`);
  } catch (error) {
    if (error.status === 404 && error.payload && error.payload.match) return error.payload;
    throw error;
  }
}

function say(id, text, isError = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("error", isError);
}

function citationOf(hit) {
  return hit.citation || [hit.document_title || hit.document_key, hit.ref, hit.page != null ? `p. ${hit.page}` : null].filter(Boolean).join(", ");
}

// ---- tabs and routing ---------------------------------------------------------------

const TABS = ["search", "ask", "documents", "check", "snapshots", "admin"];

function route() {
  const [where, query] = (location.hash.slice(1) || "search").split("?");
  const [tab, ...rest] = where.split("/");
  const shown = TABS.includes(tab) ? tab : "search";
  for (const name of TABS) $(`view-${name}`).hidden = name !== shown;
  for (const link of document.querySelectorAll("[data-tab]")) {
    if (link.dataset.tab === shown) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (shown === "documents") openDocument(rest.map(decodeURIComponent), new URLSearchParams(query || ""));
  if (shown === "snapshots") loadSnapshots();
  if (shown === "admin") loadAdmin();
  if (shown === "ask") {
    loadConversations();
    const asked = rest[0] ? decodeURIComponent(rest[0]) : null;
    if (asked && asked !== state.conversation) openConversation(asked);
    else keepConversation();
  }
}

// ---- who I am, what is served -------------------------------------------------------

async function loadMe() {
  try {
    state.me = await api(`${API}/me`);
    $("served").textContent = `Snapshot ${state.me.snapshot_version} · ${state.me.key_name}` +
      ` · ${state.me.asks_remaining}/${state.me.asks_per_hour} asks left this hour`;
    $("admin-tab").hidden = !state.me.admin;
    $("key-form").hidden = true;
    return true;
  } catch (error) {
    $("served").textContent = error.message;
    return false;
  }
}

async function loadDocuments() {
  state.documents = await every(`${API}/documents`);
  const types = new Set(), authorities = new Set(), parties = new Set(), laws = new Set();
  for (const select of [$("f-document"), $("doc-select"), $("ask-document")]) {
    select.replaceChildren(select.id === "doc-select" ? el("option", { value: "", text: "Choose a document" }) : el("option", { value: "", text: "any" }));
  }
  for (const d of state.documents) {
    const label = d.number && d.number !== d.document_key ? `${d.number}: ${d.title}` : d.title;
    for (const id of ["f-document", "doc-select", "ask-document"]) $(id).append(el("option", { value: d.document_key, text: label }));
    if (d.document_type) types.add(d.document_type);
    if (d.authority_level) authorities.add(d.authority_level);
    for (const party of d.parties || []) parties.add(party);
    if (d.governing_law) laws.add(d.governing_law);
  }
  const options = (values) => [el("option", { value: "", text: "any" }), ...[...values].sort().map((t) => el("option", { value: t, text: t }))];
  $("f-type").replaceChildren(...options(types));
  $("f-authority").replaceChildren(...options(authorities));
  $("parties").replaceChildren(...[...parties].sort().map((party) => el("option", { value: party })));
  $("laws").replaceChildren(...[...laws].sort().map((law) => el("option", { value: law })));
  placeholders(state.documents);
}

// A document as a person names it in a question: its title without a subtitle ("Master
// Services Agreement", not "... — The Apollos Project"), else its short name, else its shortest
// alias; never its key or file name. null when none is fit to say.
function spokenName(d) {
  const keys = new Set([d.document_key, d.number, d.source_name].filter(Boolean));
  const fit = (name) => Boolean(name) && name.length <= 48 && !keys.has(name) &&
    !/^[a-z0-9]+(?:[-_.][a-z0-9]+)+$/i.test(name);  // a key's shape: apollos-msa, CELEX_3202...
  const article = (name) => /^(the\s|\d|§)/i.test(name) ? name : `the ${name}`;
  const title = (d.title || "").split(/\s*[—–]\s*|\s+-\s+|:\s+/)[0].trim();
  if (fit(title)) return article(title);
  if (fit(d.short_name)) return d.short_name;
  const alias = (d.aliases || []).filter(fit).sort((a, b) => a.length - b.length)[0];
  return alias ? article(alias) : null;
}

// What a question about a document with no tags asks, by its type.
const SUBJECT_OF_TYPE = { contract: "termination", agreement: "termination" };

// The ask box's example: a question a person would ask of the documents served, about a
// document named as spokenName names it and one of its subjects (a tag); a neutral line when no
// document has a name fit to say.
function askExample(documents) {
  const named = documents.map((d) => ({ d, name: spokenName(d) })).filter((c) => c.name);
  const tagged = named.find((c) => c.d.tags && c.d.tags.length);
  const chosen = tagged || named[0];
  if (!chosen) return "Ask a question about the documents served";
  const subject = tagged ? tagged.d.tags[0] : SUBJECT_OF_TYPE[chosen.d.document_type];
  return subject ? `e.g. What does ${chosen.name} say about ${subject}?` : `e.g. What does ${chosen.name} cover?`;
}

// Examples in the empty fields taken from the index served, never from another corpus: a
// document's subject, and one of its paragraphs (found by a keyword search, off the start's path).
async function placeholders(documents) {
  $("ask-q").placeholder = askExample(documents);
  const d = documents.find((doc) => doc.tags && doc.tags.length) || documents[0];
  if (!d) return;
  const subject = (d.tags && d.tags[0]) || (spokenName(d) || "").replace(/^the /, "");
  if (!subject) return;
  $("search-q").placeholder = `Words or a question, e.g. ${subject}`;
  try {
    const found = await api(`${API}/search`, { query: subject, limit: 1, mode: "keyword", filters: { document: d.document_key } });
    const hit = found.hits[0];
    if (!hit) return;
    const heading = (hit.section_path || []).slice(-1)[0];
    if (heading) $("f-section").placeholder = `e.g. ${heading}`;
    if (hit.ref) $("check-ref").placeholder = `e.g. ${referenceOf(hit.document_title || hit.document_key, hit.ref)}`;
    const sentence = hit.text.split(/(?<=[.;:])\s/)[0].slice(0, 160);
    $("check-claim").placeholder = `A sentence that cites a paragraph, e.g. ${sentence}`;
  } catch (error) { /* the fields keep their plain placeholders */ }
}

// ---- search ------------------------------------------------------------------------

function searchFilters() {
  const filters = {};
  const pick = (id, name) => { const v = $(id).value.trim(); if (v) filters[name] = v; };
  pick("f-document", "document");
  pick("f-type", "document_type");
  pick("f-authority", "authority_level");
  pick("f-party", "party");
  pick("f-law", "governing_law");
  pick("f-section", "section");
  pick("f-clause", "clause_type");
  const start = $("f-start").value, end = $("f-end").value;
  if (start || end) filters.date_range = { start: start || null, end: end || null };
  return Object.keys(filters).length ? filters : null;
}

// Words every question has, not worth marking in the results.
const PLAIN_WORDS = new Set(("the and for are was were what which who whom whose when where why how does did has have had " +
  "must shall should can could may might will would with from that this these those into about any all not our " +
  "their its they you your there been being under than then also").split(" "));
const RESULTS = 10, MAX_RESULTS = 100;  // a search's first results; the most the API gives

// The query's words as stems ("records" -> "record"), to mark wherever a word starts so.
function queryTerms(query) {
  const words = (query.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) || []).filter((w) => !PLAIN_WORDS.has(w));
  return [...new Set(words.map((w) => (w.length > 4 ? w.replace(/(?:ies|es|s|ed|ing)$/, "") : w)))];
}

function termRanges(text, terms) {
  if (!terms.length) return [];
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${terms.map(escaped).join("|")})[\\p{L}\\p{N}]*`, "giu");
  return [...text.matchAll(pattern)].map((m) => [m.index, m.index + m[0].length]);
}

function hitItem(hit, terms) {
  const relevance = hit.relevance != null ? ` · relevance ${hit.relevance.toFixed(2)}` : "";
  return el("li", {},
    el("a", { class: "cite", href: hitLink(hit), text: citationOf(hit) }),
    el("div", { class: "path", text: (hit.section_path || []).join(" › ") + relevance }),
    marked("p", { class: "text" }, hit.text, termRanges(hit.text, terms)));
}

async function runSearch(event) {
  event.preventDefault();
  state.searchLimit = RESULTS;
  $("search-results").replaceChildren();
  await search();
}

async function moreResults() {
  const shown = $("search-results").children.length;
  state.searchLimit = Math.min(MAX_RESULTS, state.searchLimit * 3);
  await search();
  const next = $("search-results").children[shown];
  if (next) next.querySelector("a").focus();
}

async function search() {
  say("search-status", "Searching…");
  const query = $("search-q").value;
  const body = { query, limit: state.searchLimit, filters: searchFilters() };
  if ($("search-mode").value) body.mode = $("search-mode").value;
  try {
    const found = await api(`${API}/search`, body);
    const terms = queryTerms(query);
    $("search-results").replaceChildren(...found.hits.map((hit) => hitItem(hit, terms)));
    $("search-more").hidden = found.hits.length < state.searchLimit || state.searchLimit >= MAX_RESULTS;
    const warned = found.warnings && found.warnings.length ? ` · ${found.warnings.join("; ")}` : "";
    say("search-status", `${found.hits.length} results (${found.mode})${warned}`);
  } catch (error) {
    $("search-results").replaceChildren();
    $("search-more").hidden = true;
    say("search-status", error.message, true);
  }
}

// ---- ask -----------------------------------------------------------------------------

function answerView(answer) {
  const sourceLinks = new Map(answer.sources.map((s) => [s.number, s]));
  const text = el("p", { class: "answer" });
  // "[n]" in the answer becomes a link to the cited paragraph, opened at the words before it,
  // whose passage shows while the pointer or focus is on it.
  let said = "";
  for (const part of (answer.answer || "").split(/(\[\d+\])/)) {
    const m = part.match(/^\[(\d+)\]$/);
    const source = m && sourceLinks.get(Number(m[1]));
    if (source) {
      const quote = said.trim().replace(/[.;:,]+$/, "");
      text.append(peekable(el("a", { href: sourceLink(source, quote), text: part }), source, quote));
    } else {
      text.append(part);
      if (part.trim()) said = part;
    }
  }
  const head = el("p", {},
    el("span", { class: `badge ${answer.mode}`, text: answer.mode }),
    ` confidence ${Number(answer.confidence).toFixed(2)}`,
    answer.from_cache ? " · from cache" : "");
  const parts = [head];
  if (answer.read_as && answer.read_as !== "read alone") {
    parts.push(el("p", { class: "muted read-as", text: `Read as ${answer.read_as}` }));
  }
  if (answer.mode === "ABSTAIN") {
    parts.push(el("p", { class: "error", text: `No answer: ${answer.explanation || answer.abstention_reason || "abstained"}` }));
  } else {
    parts.push(text);
    if (answer.mode === "QUALIFIED") parts.push(el("p", { class: "muted", text: answer.explanation }));
  }
  if (answer.details && Object.keys(answer.details).length) {
    parts.push(el("details", {}, el("summary", { text: "The figures behind this" }),
      el("pre", { class: "muted", text: JSON.stringify(answer.details, null, 2) })));
  }
  if (answer.sentences && answer.sentences.length) {
    parts.push(el("details", {}, el("summary", { text: "Verification of each sentence" }),
      el("ul", { class: "verify" }, ...answer.sentences.map((s) => el("li", {},
        el("span", { class: `badge ${s.verdict}`, text: s.verdict }), ` ${s.text} `,
        el("span", { class: "muted", text: s.reason }))))));
  }
  if (answer.sources.length) {
    parts.push(el("ol", { class: "sources" }, ...answer.sources.map((s) => el("li", { value: s.number },
      el("a", { href: sourceLink(s), text: s.citation }),
      el("span", { class: "muted", text: ` · ${s.authority_level || "authority unknown"}${s.version ? ` · version ${s.version}` : ""}${s.deprecated ? " · deprecated" : ""}${s.relevance != null ? ` · relevance ${s.relevance.toFixed(2)}` : ""}` })))));
  }
  if (answer.suggestions && answer.suggestions.length) {
    parts.push(el("p", { class: "muted", text: "Questions this index can answer:" }),
      el("ul", { class: "suggestions" }, ...answer.suggestions.map((q) => el("li", {}, el("button", { type: "button", class: "link", text: q, onclick: () => { $("ask-q").value = q; $("ask-q").focus(); } })))));
  }
  if (answer.answer_id) parts.push(feedbackForm(answer.answer_id));
  return parts;
}

function feedbackForm(answerId) {
  const comment = el("input", { type: "text", maxlength: "2000", placeholder: "Comment (optional)", "aria-label": "Comment on this answer" });
  const status = el("span", { class: "muted", role: "status" });
  const send = async (rating) => {
    try {
      await api(`${API}/feedback`, { answer_id: answerId, rating, comment: comment.value });
      status.textContent = "Thank you: feedback saved.";
    } catch (error) { status.textContent = error.message; }
  };
  return el("div", { class: "feedback" },
    el("button", { type: "button", class: "secondary", "aria-label": "Helpful", text: "Helpful", onclick: () => send("positive") }),
    el("button", { type: "button", class: "secondary", "aria-label": "Not helpful", text: "Not helpful", onclick: () => send("negative") }),
    comment, status);
}

function showTurn(question, answer) {
  $("conversation").append(el("div", { class: "turn" }, el("p", { class: "question", text: question }), ...answerView(answer)));
}

async function runAsk(event) {
  event.preventDefault();
  const question = $("ask-q").value.trim();
  if (!question) return;
  say("ask-status", "Answering…");
  try {
    if (!state.conversation) {
      state.conversation = (await api(`${API}/conversations`, { title: question.slice(0, 200) })).id;
      keepConversation();
    }
    const only = $("ask-document").value;
    const turn = await api(`${API}/conversations/${encodeURIComponent(state.conversation)}/ask`, { question, filters: only ? { document: only } : null });
    showTurn(turn.question, { ...turn.answer, answer_id: turn.answer_id });
    $("ask-q").value = "";
    say("ask-status", "");
    loadMe();
  } catch (error) {
    say("ask-status", error.message, true);
  }
}

async function loadConversations() {
  await firstPage("conversations", `${API}/conversations`, (c) => el("li", {},
    el("button", { type: "button", class: "link", text: `${c.title} (${c.turn_count})`, onclick: () => openConversation(c.id) }), " ",
    el("button", { type: "button", class: "link", text: "delete", "aria-label": `Delete ${c.title}`, onclick: () => deleteConversation(c.id) })),
  () => { /* the key form is shown on 401 */ });
}

async function openConversation(id) {
  state.conversation = id;
  keepConversation();
  $("conversation").replaceChildren();
  try {
    const turns = await every(`${API}/conversations/${encodeURIComponent(id)}/turns`);
    for (const turn of turns) showTurn(turn.question, { ...turn.answer, answer_id: turn.answer_id });
  } catch (error) {
    state.conversation = null;
    keepConversation();
    say("ask-status", error.message, true);
  }
}

// The open conversation is in the address (#ask/ID), so that a reload or a bookmark reopens it;
// replaced, not pushed, so that Back leaves the tab rather than stepping through turns.
function keepConversation() {
  const where = state.conversation ? `#ask/${encodeURIComponent(state.conversation)}` : "#ask";
  if (location.hash !== where) history.replaceState(null, "", where);
}

async function deleteConversation(id) {
  await api(`${API}/conversations/${encodeURIComponent(id)}`, undefined, "DELETE");
  if (state.conversation === id) newConversation();
  loadConversations();
}

function newConversation() {
  state.conversation = null;
  keepConversation();
  $("conversation").replaceChildren();
  $("ask-q").focus();
}

// ---- documents -----------------------------------------------------------------------

async function openDocument([key, chunk], params) {
  // A citation from an answer names its paragraph only: its document comes from the lookup.
  const found = chunk ? await showParagraph(chunk, params, key) : null;
  key = key || (found && found.hit && found.hit.document_key);
  if (!key) return;
  if (!chunk) showDocument(key);
  $("doc-select").value = key;
  if (!state.tree || state.tree.document.document_key !== key) {
    try {
      state.tree = await api(`${API}/documents/${encodeURIComponent(key)}/tree`);
    } catch (error) {
      state.tree = null;
      $("doc-tree").replaceChildren(el("p", { class: "error", text: error.message }));
      return;
    }
    $("doc-tree").replaceChildren(treeList(state.tree));
  }
  markCurrent(found && found.hit ? found.hit.chunk_id : null);
}

// The unit shown is marked in the tree, which scrolls itself (not the page) to bring it to its
// middle; on a phone, where the unit comes first, the page scrolls to the unit.
function markCurrent(chunk) {
  const tree = $("doc-tree");
  for (const a of tree.querySelectorAll("a[aria-current]")) a.removeAttribute("aria-current");
  const mine = chunk && tree.querySelector(`a[data-chunk="${CSS.escape(chunk)}"]`);
  if (!mine) return;
  mine.setAttribute("aria-current", "true");
  tree.scrollTop = Math.max(0, mine.offsetTop - tree.clientHeight / 2);
  $("paragraph").scrollIntoView({ block: "nearest" });
}

function treeList(node) {
  const list = el("ul");
  for (const p of node.paragraphs || []) {
    const { document_key: key, title } = state.tree.document;
    list.append(el("li", {}, el("a", { href: passageLink({ key, chunk: p.chunk_id, reference: referenceOf(title, p.ref), contentHash: p.content_hash }),
      "data-chunk": p.chunk_id, text: p.ref || p.text.slice(0, 60), title: p.text.slice(0, 200) })));
  }
  for (const s of node.sections || []) {
    list.append(el("li", {}, el("details", { open: "" }, el("summary", { text: s.heading || "(untitled)" }), treeList(s))));
  }
  return list;
}

function linkList(title, hits) {
  if (!hits || !hits.length) return el("p", { class: "muted", text: `${title}: none` });
  return el("div", {}, el("h4", { text: title }), el("ul", {}, ...hits.map((h) => el("li", {}, el("a", { href: hitLink(h), text: citationOf(h) })))));
}

async function showParagraph(chunk, params, key) {
  const target = $("paragraph");
  try {
    const found = await lookup(chunk);
    // The link names a unit this snapshot does not hold: said so, and offered by its reference.
    if (!found.hit) target.replaceChildren(...await goneView(found, params, key));
    else target.replaceChildren(...passageView(found, params));
    target.focus({ preventScroll: true });
    return found;
  } catch (error) {
    target.replaceChildren(el("p", { class: "error", text: error.message }));
    return null;
  }
}

// ---- check a claim -------------------------------------------------------------------

async function runCheck(event) {
  event.preventDefault();
  const out = $("check-result");
  out.replaceChildren(el("p", { class: "status", text: "Checking…" }));
  try {
    const found = await api(`${API}/verify/citations`, { citations: [{ claim: $("check-claim").value, ref: $("check-ref").value }] });
    const r = found.citations[0];
    const parts = [el("p", {}, el("span", { class: `badge ${r.verdict}`, text: r.verdict }), ` decided by ${r.decided_by || "—"} · reference matched ${r.lookup_match}`)];
    if (r.reason) parts.push(el("p", { text: r.reason }));
    if (r.best_sentence) parts.push(el("p", { class: "muted", text: "The sentence it rests on:" }), el("blockquote", { class: "text", text: r.best_sentence }));
    if (r.citation) parts.push(el("p", { class: "muted" }, `Cited paragraph: ${r.citation} · `,
      el("a", { href: passageLink({ chunk: r.chunk_id, reference: r.cited, at: r.best_sentence ? [r.sentence_start, r.sentence_end] : null }), text: "open it at this sentence" })));
    // An ambiguous reference fits units of several documents: each is offered, to pick one.
    const pick = (c) => el("button", { type: "button", class: "link", text: c, onclick: () => { $("check-ref").value = c; $("check-form").requestSubmit(); } });
    if (r.lookup_match === "ambiguous") parts.push(el("p", {}, "Which one? ", ...r.closest.map(pick)));
    else if (r.closest && r.closest.length) parts.push(el("p", { class: "muted", text: `Closest references: ${r.closest.join(", ")}` }));
    out.replaceChildren(...parts);
  } catch (error) {
    out.replaceChildren(el("p", { class: "error", text: error.message }));
  }
}

// ---- snapshots -----------------------------------------------------------------------

async function loadSnapshots() {
  try {
    const [snapshots, me] = await Promise.all([every(`${API}/snapshots`), api(`${API}/me`)]);
    const rows = snapshots.map((s) => el("tr", {},
      el("td", { text: s.version }), el("td", { text: s.created_at || "" }),
      el("td", { text: s.version === me.snapshot_version ? "served" : "" })));
    $("snapshot-rows").replaceChildren(...rows);
    for (const [id, pick] of [["diff-old", 1], ["diff-new", 0]]) {
      const versions = snapshots.map((s) => s.version);  // newest first, as the API lists them
      $(id).replaceChildren(...versions.map((v) => el("option", { value: v, text: v })));
      if (versions.length) $(id).value = versions[Math.min(pick, versions.length - 1)];
    }
  } catch (error) {
    $("snapshot-rows").replaceChildren(el("tr", {}, el("td", { colspan: "3", class: "error", text: error.message })));
  }
}

// The documents a diff names, by title (and key), under `label`; nothing when there are none.
function diffDocuments(label, documents) {
  if (!documents.length) return [];
  return [el("h4", { text: `${label} (${documents.length})` }),
    el("ul", {}, ...documents.map((d) => el("li", {}, d.title || d.document_key,
      el("span", { class: "muted", text: ` · ${d.document_key}` }))))];
}

async function runDiff(event) {
  event.preventDefault();
  const out = $("diff-result");
  try {
    const change = await api(`${API}/snapshots/diff?old=${encodeURIComponent($("diff-old").value)}&new=${encodeURIComponent($("diff-new").value)}`);
    const summary = change.summary || {};
    out.replaceChildren(el("p", { text: `${change.old} → ${change.new}` }),
      el("ul", {}, ...Object.entries(summary).map(([k, v]) => el("li", { text: `${k.replaceAll("_", " ")}: ${v}` }))),
      ...diffDocuments("Documents added", change.documents_added),
      ...diffDocuments("Documents removed", change.documents_removed),
      ...diffDocuments("Documents changed", change.documents_changed));
  } catch (error) {
    out.replaceChildren(el("p", { class: "error", text: error.message }));
  }
}

// ---- admin ---------------------------------------------------------------------------

const TRACES = 50;  // traces a page of the admin's shows: each holds its candidates

function figure(value) {
  return value == null ? "—" : Number(value).toFixed(2);
}

function feedbackRow(f) {
  return el("tr", {},
    el("td", { text: f.updated_at.slice(0, 19) }),
    el("td", { class: f.rating === "positive" ? "supported" : "contradicted", text: f.rating }),
    el("td", { text: f.question }), el("td", { text: f.comment }),
    el("td", { text: figure(f.confidence) }), el("td", { text: String(f.source_count) }));
}

// How an ask was answered: who asked and when, the text searched (a follow-up's includes the
// question before it), each candidate retrieved with its scores, then the answer's evidence.
function traceView(t) {
  const a = t.answer;
  const took = t.seconds != null ? ` · ${figure(t.seconds)} s` : "";
  const searched = t.searched
    ? el("p", {}, "Searched: ", el("q", { class: "searched", text: t.searched }))
    : el("p", { class: "muted", text: "Nothing searched (answered from the cache, or refused first)." });
  const heads = ["Candidate", "Score", "Relevance", "Answers"].map((h) => el("th", { scope: "col", text: h }));
  const candidates = t.candidates.length
    ? el("div", { class: "table-box" }, el("table", { class: "table candidates" }, el("thead", {}, el("tr", {}, ...heads)),
      el("tbody", {}, ...t.candidates.map((c) => el("tr", {},
        el("td", {}, el("a", { href: passageLink({ chunk: c.chunk_id, reference: c.citation }), text: c.citation || c.chunk_id })),
        el("td", { class: "number", text: Number(c.score).toPrecision(3) }),
        el("td", { class: "number", text: figure(c.relevance) }), el("td", { class: "number", text: figure(c.answers) }))))))
    : null;
  return el("details", { class: "turn" },
    el("summary", { text: `${a.mode} · ${t.question}` }),
    el("p", { class: "muted", text: `${t.at.slice(0, 19)} · ${t.owner_name}${took}` }),
    searched, candidates,
    el("p", { class: "muted", text: `evidence: ${a.mode}${a.abstention_reason ? ` (${a.abstention_reason})` : ""} · ${a.explanation}` }),
    el("ol", {}, ...a.sources.map((s) => el("li", { text: `${s.citation} · relevance ${figure(s.relevance)}` }))),
    el("ul", { class: "verify" }, ...(a.sentences || []).map((s) => el("li", {}, el("span", { class: `badge ${s.verdict}`, text: s.verdict }), ` ${s.text}`))));
}

async function loadAdmin() {
  const failed = (error) => $("traces").replaceChildren(el("p", { class: "error", text: error.message }));
  await Promise.all([
    firstPage("feedback-rows", `${API}/admin/feedback`, feedbackRow, failed),
    firstPage("traces", `${API}/admin/answers?limit=${TRACES}`, traceView, failed),
  ]);
}

// ---- start ---------------------------------------------------------------------------

async function start() {
  if (await loadMe()) {
    await loadDocuments();
    route();
    document.body.dataset.ready = "true";  // what the browser tests wait for
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("search-form").addEventListener("submit", runSearch);
  $("search-more").addEventListener("click", moreResults);
  $("ask-form").addEventListener("submit", runAsk);
  $("ask-new").addEventListener("click", newConversation);
  $("check-form").addEventListener("submit", runCheck);
  $("diff-form").addEventListener("submit", runDiff);
  for (const id of ["conversations", "feedback-rows", "traces"]) $(`${id}-more`).addEventListener("click", () => nextPage(id));
  $("doc-select").addEventListener("change", () => { if ($("doc-select").value) location.hash = `documents/${encodeURIComponent($("doc-select").value)}`; });
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("key-input").value.trim());
    $("key-input").value = "";
    start();
  });
  window.addEventListener("hashchange", route);
  start();
});
