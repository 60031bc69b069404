// lexkb's document viewer (the Documents tab): a paragraph opened at the passage a link cites,
// the words it quoted marked, its neighbours and the unit around it one click away, a PDF's page
// as printed, and a link the served snapshot no longer matches said so. It uses app.js's helpers
// ($, el, api, lookup, API, state); text is only ever set with textContent, as there.
"use strict";

const HASH_CHARS = 12;  // the first characters of a content hash that a link carries
const QUOTE_CHARS = 400;  // the most of a quoted sentence a link carries

// A link to one unit: #documents/KEY/CHUNK?ref=...&hash=...&at=S-E (or &quote=text). `ref` finds
// the unit again when its id is gone; `hash` says which text the link was made for; `at` (offsets
// into the text, as verify/citations gives them) or `quote` (words to find) mark what it quoted.
function passageLink({ key, chunk, reference, contentHash, at, quote }) {
  const params = new URLSearchParams();
  if (reference) params.set("ref", reference);
  if (contentHash) params.set("hash", contentHash.slice(0, HASH_CHARS));
  if (at) params.set("at", `${at[0]}-${at[1]}`);
  else if (quote) params.set("quote", quote.slice(0, QUOTE_CHARS));
  const query = params.toString();
  return `#documents/${encodeURIComponent(key || "")}/${encodeURIComponent(chunk)}${query ? `?${query}` : ""}`;
}

// The reference a unit is cited by ("Records Retention Act, § 103(b)"): what finds it again.
function referenceOf(documentName, ref) {
  return ref ? `${documentName}, ${ref}` : null;
}

function hitLink(hit) {
  return passageLink({ key: hit.document_key, chunk: hit.chunk_id, contentHash: hit.content_hash,
    reference: referenceOf(hit.document_title || hit.document_key, hit.ref) });
}

// An answer's source: its document is found by the lookup (the source names its title only).
function sourceLink(source, quote) {
  return passageLink({ chunk: source.chunk_id, reference: referenceOf(source.document, source.ref),
    contentHash: source.content_hash, quote });
}

function escaped(word) {
  return word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// `text` with the [start, end) ranges in `ranges` (sorted, apart) each in a <mark>.
function marked(tag, attrs, text, ranges) {
  const node = el(tag, attrs);
  let at = 0;
  for (const [start, end] of ranges) {
    node.append(text.slice(at, start), el("mark", { text: text.slice(start, end) }));
    at = end;
  }
  node.append(text.slice(at));
  return node;
}

// Where the link's quote is in `text`: its offsets, or the words found (spaces compared loosely).
function quoteRange(text, params) {
  const at = (params.get("at") || "").match(/^(\d+)-(\d+)$/);
  if (at) {
    const [start, end] = [Number(at[1]), Number(at[2])];
    return start < end && end <= text.length ? [start, end] : null;
  }
  const quote = (params.get("quote") || "").trim();
  if (!quote) return null;
  const found = new RegExp(quote.split(/\s+/).map(escaped).join("\\s+")).exec(text);
  return found ? [found.index, found.index + found[0].length] : null;
}

// ---- one unit --------------------------------------------------------------------------------

// A document chosen without a unit: its particulars, and no paragraph of another one.
function showDocument(key) {
  const d = state.documents.find((doc) => doc.document_key === key);
  if (!d) return;
  const facts = [d.document_type, d.authority_level, d.page_count ? `${d.page_count} pages` : null,
    `${d.paragraph_count} paragraphs`].filter(Boolean).join(" · ");
  $("paragraph").replaceChildren(el("h3", { text: d.title }), el("p", { class: "muted", text: facts }),
    el("p", { class: "muted", text: "Choose a paragraph in the section tree." }));
}

// The unit found, opened at what the link quoted; a link made for other text says so first.
function passageView(found, params) {
  const hash = params.get("hash");
  if (hash && !(found.hit.content_hash || "").startsWith(hash)) return [changedNotice(found.hit, params), ...unitView(found, null)];
  return unitView(found, quoteRange(found.hit.text, params));
}

function unitView(found, quote) {
  const hit = found.hit;
  const citation = citationOf(hit);
  const copied = el("span", { class: "muted", role: "status" });
  const copy = async () => {
    try { await navigator.clipboard.writeText(citation); copied.textContent = "Copied."; }
    catch (error) { copied.textContent = `Copy this: ${citation}`; }
  };
  return [
    el("h3", { class: "cite", text: citation }),
    neighbours(found),
    el("div", { class: "path", text: (hit.section_path || []).join(" › ") }),
    marked("p", { class: "text" }, hit.text, quote ? [quote] : []),
    el("p", {}, el("button", { type: "button", class: "secondary", text: "Copy citation", onclick: copy }), " ", copied),
    ...sourcePage(hit),
    el("p", { class: "muted", text: `Content hash ${hit.content_hash} · snapshot ${hit.snapshot_version}` }),
    linkList("Cites", found.cites), linkList("Cited by", found.cited_by)];
}

// Previous and next in reading order, and up to the unit around this one (or the document).
function neighbours(found) {
  const hit = found.hit;
  const step = (other, label, rel) => other
    ? el("a", { href: hitLink(other), rel, text: `${label} ${other.ref || (other.section_path || []).slice(-1)[0] || ""}`.trim() })
    : el("span", { class: "muted", text: label });
  const up = found.section
    ? el("a", { href: hitLink(found.section), text: `↑ ${(found.section.section_path || []).slice(-1)[0] || "Enclosing unit"}` })
    : el("a", { href: `#documents/${encodeURIComponent(hit.document_key)}`, text: `↑ ${hit.document_title || hit.document_key}` });
  return el("nav", { class: "neighbours", "aria-label": "Nearby units" },
    step(found.previous, "← Previous", "prev"), up, step(found.next, "Next →", "next"));
}

// A PDF's page as printed, rendered by the service from the snapshot's copy of the file; fetched
// with the key (an <img> cannot send it) and shown as a data: URL, which the page's CSP allows.
function sourcePage(hit) {
  const d = state.documents.find((doc) => doc.document_key === hit.document_key);
  if (!d || d.format !== "pdf" || hit.page == null) return [];
  const box = el("details", { class: "source-page" }, el("summary", { text: `Page ${hit.page} as printed (PDF)` }));
  const load = async () => {
    if (!box.open || box.querySelector("img, .error")) return;
    state.showPages = true;
    try {
      const headers = {};
      const key = sessionStorage.getItem(KEY);
      if (key) headers.Authorization = `Bearer ${key}`;
      const response = await fetch(`${API}/documents/${encodeURIComponent(hit.document_key)}/pages/${hit.page}`, { headers });
      if (!response.ok) throw new Error((await response.json()).error || `HTTP ${response.status}`);
      const url = await new Promise((resolve, reject) => {
        const reader = new FileReader();
        reader.onload = () => resolve(reader.result);
        reader.onerror = () => reject(reader.error);
        response.blob().then((blob) => reader.readAsDataURL(blob), reject);
      });
      box.append(el("img", { src: url, alt: `Page ${hit.page} of ${hit.document_title} as printed` }));
    } catch (error) {
      box.append(el("p", { class: "error", text: error.message }));
    }
  };
  box.addEventListener("toggle", () => { if (!box.open) state.showPages = false; load(); });
  if (state.showPages) box.open = true;  // once opened, each unit opens at its page
  return [box];
}

// ---- links the served snapshot no longer matches ----------------------------------------------

function changedNotice(hit, params) {
  const snapshot = hit.snapshot_version;
  return el("div", { class: "notice", role: "alert" },
    el("p", { text: `The text of ${citationOf(hit)} has changed since this link was made: the link cites text ${params.get("hash")}…, snapshot ${snapshot} holds ${(hit.content_hash || "").slice(0, HASH_CHARS)}…. It is shown below as it reads now.` }),
    el("p", {}, el("a", { href: hitLink(hit), text: `Open ${params.get("ref") || citationOf(hit)} as it reads now` })));
}

// The unit a link names is not in the served snapshot: say so, and offer it by its reference.
async function goneView(found, params, key) {
  const parts = [el("div", { class: "notice", role: "alert" },
    el("p", { text: `This link names a unit (${found.asked}) that the served snapshot does not hold: ${found.reason}.` }))];
  const reference = params.get("ref");
  if (reference) {
    const again = await lookup(reference);
    if (again.hit && (!key || again.hit.document_key === key)) {
      parts.push(el("p", {}, `The unit it cited, ${reference}, is in this snapshot: `,
        el("a", { href: hitLink(again.hit), text: `open ${citationOf(again.hit)}` })));
    } else {
      parts.push(el("p", { class: "muted", text: `No unit is cited as ${reference} in this snapshot: ${again.reason}.` }));
    }
  }
  if (found.closest && found.closest.length) parts.push(el("p", { class: "muted", text: `Closest: ${found.closest.join(", ")}` }));
  return parts;
}

// ---- an answer's [n]: the passage it cites, while the pointer or focus is on it ---------------

const passages = new Map();  // chunk id -> the lookup's promise, once per page
let peeks = 0;

function peekable(link, source, quote) {
  const tip = el("span", { class: "peek", role: "tooltip", id: `peek-${++peeks}` });
  tip.hidden = true;
  link.setAttribute("aria-describedby", tip.id);
  const show = async () => {
    tip.hidden = false;
    if (tip.childNodes.length) return;
    tip.textContent = `${source.citation} …`;
    try {
      if (!passages.has(source.chunk_id)) passages.set(source.chunk_id, lookup(source.chunk_id));
      const hit = (await passages.get(source.chunk_id)).hit;
      const range = hit && quoteRange(hit.text, new URLSearchParams({ quote }));
      tip.replaceChildren(el("strong", { text: source.citation }), " ",
        hit ? marked("span", { class: "text" }, hit.text, range ? [range] : []) : "not in this snapshot");
    } catch (error) {
      passages.delete(source.chunk_id);
      tip.textContent = error.message;
    }
  };
  const hide = () => { tip.hidden = true; };
  link.addEventListener("mouseenter", show);
  link.addEventListener("focus", show);
  link.addEventListener("mouseleave", hide);
  link.addEventListener("blur", hide);
  link.addEventListener("keydown", (event) => { if (event.key === "Escape") hide(); });
  return el("span", {}, link, tip);
}
