// lexkb's page: a thin client of the JSON API at /api. Text from documents and answers is only
// ever set with textContent (never parsed as HTML), so a paragraph cannot inject markup.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "lexkb.key";
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

class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
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
    throw new ApiError(response.status, wait ? `${reason}` : reason);
  }
  return payload;
}

function say(id, text, isError = false) {
  const node = $(id);
  node.textContent = text;
  node.classList.toggle("error", isError);
}

function docLink(hit) {
  return `#documents/${encodeURIComponent(hit.document_key)}/${encodeURIComponent(hit.chunk_id)}`;
}

function citationOf(hit) {
  return hit.citation || [hit.document_title || hit.document_key, hit.ref, hit.page != null ? `p. ${hit.page}` : null].filter(Boolean).join(", ");
}

// ---- tabs and routing ---------------------------------------------------------------

const TABS = ["search", "ask", "documents", "check", "snapshots", "admin"];

function route() {
  const [tab, ...rest] = (location.hash.slice(1) || "search").split("/");
  const shown = TABS.includes(tab) ? tab : "search";
  for (const name of TABS) $(`view-${name}`).hidden = name !== shown;
  for (const link of document.querySelectorAll("[data-tab]")) {
    if (link.dataset.tab === shown) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  if (shown === "documents") openDocument(rest.map(decodeURIComponent));
  if (shown === "snapshots") loadSnapshots();
  if (shown === "admin") loadAdmin();
  if (shown === "ask") loadConversations();
}

// ---- who I am, what is served -------------------------------------------------------

async function loadMe() {
  try {
    state.me = await api("/api/me");
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
  const found = await api("/api/documents");
  state.documents = found.documents;
  const types = new Set();
  for (const select of [$("f-document"), $("doc-select")]) {
    select.replaceChildren(select.id === "f-document" ? el("option", { value: "", text: "any" }) : el("option", { value: "", text: "Choose a document" }));
  }
  for (const d of found.documents) {
    const label = d.number && d.number !== d.document_key ? `${d.number}: ${d.title}` : d.title;
    $("f-document").append(el("option", { value: d.document_key, text: label }));
    $("doc-select").append(el("option", { value: d.document_key, text: label }));
    if (d.document_type) types.add(d.document_type);
  }
  $("f-type").replaceChildren(el("option", { value: "", text: "any" }), ...[...types].sort().map((t) => el("option", { value: t, text: t })));
}

// ---- search ------------------------------------------------------------------------

function searchFilters() {
  const filters = {};
  const pick = (id, name) => { const v = $(id).value.trim(); if (v) filters[name] = v; };
  pick("f-document", "document");
  pick("f-type", "document_type");
  pick("f-section", "section");
  pick("f-clause", "clause_type");
  const start = $("f-start").value, end = $("f-end").value;
  if (start || end) filters.date_range = { start: start || null, end: end || null };
  return Object.keys(filters).length ? filters : null;
}

function hitItem(hit) {
  const relevance = hit.relevance != null ? ` · relevance ${hit.relevance.toFixed(2)}` : "";
  return el("li", {},
    el("a", { class: "cite", href: docLink(hit), text: citationOf(hit) }),
    el("div", { class: "path", text: (hit.section_path || []).join(" › ") + relevance }),
    el("p", { class: "text", text: hit.text }));
}

async function runSearch(event) {
  event.preventDefault();
  say("search-status", "Searching…");
  $("search-results").replaceChildren();
  try {
    const found = await api("/api/search", { query: $("search-q").value, limit: 10, filters: searchFilters() });
    $("search-results").replaceChildren(...found.hits.map(hitItem));
    const warned = found.warnings && found.warnings.length ? ` · ${found.warnings.join("; ")}` : "";
    say("search-status", `${found.hits.length} results (${found.mode})${warned}`);
  } catch (error) {
    say("search-status", error.message, true);
  }
}

// ---- ask -----------------------------------------------------------------------------

function answerView(answer) {
  const sourceLinks = new Map(answer.sources.map((s) => [s.number, s]));
  const text = el("p", { class: "answer" });
  // "[n]" in the answer becomes a link to the cited paragraph.
  for (const part of (answer.answer || "").split(/(\[\d+\])/)) {
    const m = part.match(/^\[(\d+)\]$/);
    const source = m && sourceLinks.get(Number(m[1]));
    if (source) {
      text.append(el("a", { href: `#documents//${encodeURIComponent(source.chunk_id)}`, title: source.citation, text: part }));
    } else text.append(part);
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
      el("a", { href: `#documents//${encodeURIComponent(s.chunk_id)}`, text: s.citation }),
      el("span", { class: "muted", text: ` · ${s.authority_level || "authority unknown"}${s.version ? ` · version ${s.version}` : ""}${s.deprecated ? " · deprecated" : ""}${s.relevance != null ? ` · relevance ${s.relevance.toFixed(2)}` : ""}` })))));
  }
  if (answer.suggestions && answer.suggestions.length) {
    parts.push(el("p", { class: "muted", text: "Questions this index can answer:" }),
      el("ul", {}, ...answer.suggestions.map((q) => el("li", {}, el("button", { type: "button", class: "link", text: q, onclick: () => { $("ask-q").value = q; $("ask-q").focus(); } })))));
  }
  if (answer.answer_id) parts.push(feedbackForm(answer.answer_id));
  return parts;
}

function feedbackForm(answerId) {
  const comment = el("input", { type: "text", maxlength: "2000", placeholder: "Comment (optional)", "aria-label": "Comment on this answer" });
  const status = el("span", { class: "muted", role: "status" });
  const send = async (rating) => {
    try {
      await api("/api/feedback", { answer_id: answerId, rating, comment: comment.value });
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
      state.conversation = (await api("/api/conversations", { title: question.slice(0, 200) })).id;
    }
    const turn = await api(`/api/conversations/${state.conversation}/ask`, { question });
    showTurn(turn.question, { ...turn.answer, answer_id: turn.answer_id });
    $("ask-q").value = "";
    say("ask-status", "");
    loadMe();
  } catch (error) {
    say("ask-status", error.message, true);
  }
}

async function loadConversations() {
  try {
    const listed = await api("/api/conversations");
    $("conversations").replaceChildren(...listed.map((c) => el("li", {},
      el("button", { type: "button", class: "link", text: `${c.title} (${c.turns})`, onclick: () => openConversation(c.id) }), " ",
      el("button", { type: "button", class: "link", text: "delete", "aria-label": `Delete ${c.title}`, onclick: () => deleteConversation(c.id) }))));
  } catch (error) { /* the key form is shown on 401 */ }
}

async function openConversation(id) {
  const found = await api(`/api/conversations/${id}`);
  state.conversation = id;
  $("conversation").replaceChildren();
  for (const turn of found.turns) showTurn(turn.question, { ...turn.answer, answer_id: turn.answer_id });
}

async function deleteConversation(id) {
  await api(`/api/conversations/${id}`, undefined, "DELETE");
  if (state.conversation === id) newConversation();
  loadConversations();
}

function newConversation() {
  state.conversation = null;
  $("conversation").replaceChildren();
  $("ask-q").focus();
}

// ---- documents -----------------------------------------------------------------------

async function openDocument([key, chunk]) {
  // A citation from an answer names its paragraph only: its document comes from the lookup.
  const found = chunk ? await showParagraph(chunk) : null;
  key = key || (found && found.hit.document_key);
  if (!key) return;
  $("doc-select").value = key;
  if (!state.tree || state.tree.document.document_key !== key) {
    state.tree = await api(`/api/documents/${encodeURIComponent(key)}/tree`);
    $("doc-tree").replaceChildren(treeList(state.tree));
  }
  if (chunk) markCurrent(chunk);
}

function markCurrent(chunk) {
  const links = document.querySelectorAll("#doc-tree a");
  for (const a of links) a.removeAttribute("aria-current");
  const mine = [...links].find((a) => a.getAttribute("href").endsWith(`/${encodeURIComponent(chunk)}`));
  if (mine) mine.setAttribute("aria-current", "true");
}

function treeList(node) {
  const list = el("ul");
  for (const p of node.paragraphs || []) {
    list.append(el("li", {}, el("a", { href: `#documents/${encodeURIComponent(state.tree.document.document_key)}/${encodeURIComponent(p.chunk_id)}`, text: p.ref || p.text.slice(0, 60), title: p.text.slice(0, 200) })));
  }
  for (const s of node.sections || []) {
    list.append(el("li", {}, el("details", { open: "" }, el("summary", { text: s.heading || "(untitled)" }), treeList(s))));
  }
  return list;
}

function linkList(title, hits) {
  if (!hits || !hits.length) return el("p", { class: "muted", text: `${title}: none` });
  return el("div", {}, el("h4", { text: title }), el("ul", {}, ...hits.map((h) => el("li", {}, el("a", { href: docLink(h), text: citationOf(h) })))));
}

async function showParagraph(chunk) {
  const target = $("paragraph");
  try {
    const found = await api(`/api/get?reference=${encodeURIComponent(chunk)}`);
    const hit = found.hit;
    const citation = citationOf(hit);
    const copied = el("span", { class: "muted", role: "status" });
    const copy = async () => {
      try { await navigator.clipboard.writeText(citation); copied.textContent = "Copied."; }
      catch (error) { copied.textContent = `Copy this: ${citation}`; }
    };
    target.replaceChildren(
      el("h3", { class: "cite", text: citation }),
      el("div", { class: "path", text: (hit.section_path || []).join(" › ") }),
      el("p", { class: "text", text: hit.text }),
      el("p", {}, el("button", { type: "button", class: "secondary", text: "Copy citation", onclick: copy }), " ", copied),
      el("p", { class: "muted", text: `Content hash ${hit.content_hash} · snapshot ${hit.snapshot_version}` }),
      linkList("Cites", found.cites), linkList("Cited by", found.cited_by));
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
    const found = await api("/api/verify/citations", { citations: [{ claim: $("check-claim").value, ref: $("check-ref").value }] });
    const r = found.citations[0];
    const parts = [el("p", {}, el("span", { class: `badge ${r.verdict}`, text: r.verdict }), ` decided by ${r.decided_by || "—"} · reference matched ${r.lookup_match}`)];
    if (r.reason) parts.push(el("p", { text: r.reason }));
    if (r.best_sentence) parts.push(el("p", { class: "muted", text: "The sentence it rests on:" }), el("blockquote", { class: "text", text: r.best_sentence }));
    if (r.citation) parts.push(el("p", { class: "muted", text: `Cited paragraph: ${r.citation}` }));
    if (r.closest && r.closest.length) parts.push(el("p", { class: "muted", text: `Closest references: ${r.closest.join(", ")}` }));
    out.replaceChildren(...parts);
  } catch (error) {
    out.replaceChildren(el("p", { class: "error", text: error.message }));
  }
}

// ---- snapshots -----------------------------------------------------------------------

async function loadSnapshots() {
  try {
    const found = await api("/api/snapshots");
    const rows = found.snapshots.map((s) => el("tr", {},
      el("td", { text: s.version }), el("td", { text: s.created_at || "" }),
      el("td", { text: s.version === found.served ? "served" : "" })));
    $("snapshot-rows").replaceChildren(...rows);
    for (const [id, pick] of [["diff-old", 1], ["diff-new", 0]]) {
      const versions = found.snapshots.map((s) => s.version).reverse();
      $(id).replaceChildren(...versions.map((v) => el("option", { value: v, text: v })));
      if (versions.length) $(id).value = versions[Math.min(pick, versions.length - 1)];
    }
  } catch (error) {
    $("snapshot-rows").replaceChildren(el("tr", {}, el("td", { colspan: "3", class: "error", text: error.message })));
  }
}

async function runDiff(event) {
  event.preventDefault();
  const out = $("diff-result");
  try {
    const change = await api(`/api/snapshots/diff?old=${encodeURIComponent($("diff-old").value)}&new=${encodeURIComponent($("diff-new").value)}`);
    const summary = change.summary || {};
    out.replaceChildren(el("p", { text: `${change.old} → ${change.new}` }),
      el("ul", {}, ...Object.entries(summary).map(([k, v]) => el("li", { text: `${k.replaceAll("_", " ")}: ${v}` }))));
  } catch (error) {
    out.replaceChildren(el("p", { class: "error", text: error.message }));
  }
}

// ---- admin ---------------------------------------------------------------------------

async function loadAdmin() {
  try {
    const [feedback, answers] = await Promise.all([api("/api/admin/feedback"), api("/api/admin/answers")]);
    $("feedback-rows").replaceChildren(...feedback.map((f) => el("tr", {},
      el("td", { text: new Date(f.created_at * 1000).toISOString().slice(0, 19) }),
      el("td", { class: f.rating === "positive" ? "supported" : "contradicted", text: f.rating }),
      el("td", { text: f.question }), el("td", { text: f.comment }),
      el("td", { text: Number(f.confidence).toFixed(2) }), el("td", { text: String(f.source_count) }))));
    $("traces").replaceChildren(...answers.map((a) => el("details", { class: "turn" },
      el("summary", { text: `${a.answer.mode} · ${a.answer.question}` }),
      el("p", { class: "muted", text: `evidence: ${a.answer.mode}${a.answer.abstention_reason ? ` (${a.answer.abstention_reason})` : ""} · ${a.answer.explanation}` }),
      el("ol", {}, ...a.answer.sources.map((s) => el("li", { text: `${s.citation} · relevance ${s.relevance != null ? s.relevance.toFixed(2) : "—"}` }))),
      el("ul", { class: "verify" }, ...(a.answer.sentences || []).map((s) => el("li", {}, el("span", { class: `badge ${s.verdict}`, text: s.verdict }), ` ${s.text}`))))));
  } catch (error) {
    $("traces").replaceChildren(el("p", { class: "error", text: error.message }));
  }
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
  $("ask-form").addEventListener("submit", runAsk);
  $("ask-new").addEventListener("click", newConversation);
  $("check-form").addEventListener("submit", runCheck);
  $("diff-form").addEventListener("submit", runDiff);
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
