// memvault's web page: search as you type, a memory read, edited and linked, the review
// queues, the graph and the overview. Talks only to this server's /api (see server/web_api.py).
"use strict";

const { el, markdown, highlighted, decoded } = Render;
const $ = (selector) => document.querySelector(selector);
const POLL_MS = 1500;
const DEBOUNCE_MS = 120;

const state = {
  open: null,        // the memory shown: {memory, outgoing, backlinks, usage}
  editing: null,     // {base: version the edit started from} while the editor is open
  changes: null,     // the vault's change fingerprint last seen
  searchSeq: 0,
  page: "search",
};

// -- talking to the server ------------------------------------------------------------------

// The page's key, in this origin's storage (scheme, host and port: no other local server reads
// it, as every one would read a cookie of 127.0.0.1), sent as a header on every /api call.
const KEY = "memvault-key";

function takeKey() {
  // The key arrives in the URL's fragment (#key=...), which no server is sent: kept, then
  // taken out of the address bar and the history. True when one came.
  const given = location.hash.match(/^#key=([\w-]+)$/);
  if (!given) return false;
  localStorage.setItem(KEY, given[1]);
  history.replaceState(null, "", location.pathname + location.search);
  return true;
}

async function request(path, init) {
  const key = localStorage.getItem(KEY);
  const headers = { ...init.headers, ...(key ? { Authorization: "Bearer " + key } : {}) };
  const answer = await fetch(path, { ...init, headers });
  // Without a key, or with one of an earlier server, the page says which URL gives one.
  $("#locked").hidden = answer.status !== 401;
  const data = await answer.json();
  if (!answer.ok) throw Object.assign(new Error(data.error || answer.statusText), { data, status: answer.status });
  return data;
}

function get(path, params) {
  const query = new URLSearchParams(params || {}).toString();
  return request(path + (query ? "?" + query : ""), {});
}

function post(path, body) {
  return request(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Memvault": "1" },
    body: JSON.stringify(body),
  });
}

function say(text, kind) {
  const live = $("#live");
  live.textContent = text;
  live.className = kind || "";
}

function failed(error) {
  // Refused for want of a key: the page already says which URL to open.
  if (error.status !== 401) say(error.message, "error");
}

// -- small helpers --------------------------------------------------------------------------

function ago(iso) {
  if (!iso) return "never";
  const seconds = (Date.now() - Date.parse(iso)) / 1000;
  const units = [[86400 * 365, "y"], [86400 * 30, "mo"], [86400, "d"], [3600, "h"], [60, "min"]];
  for (const [size, unit] of units) if (seconds >= size) return Math.floor(seconds / size) + " " + unit + " ago";
  return "just now";
}

function memoryHref(id) {
  return "#/m/" + encodeURIComponent(id);
}

function button(text, onClick, attrs) {
  const node = el("button", { type: "button", ...(attrs || {}) }, text);
  node.addEventListener("click", onClick);
  return node;
}

function clear(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return node;
}

function confirmDialog(text, yes) {
  const dialog = $("#confirm");
  $("#confirm-text").textContent = text;
  $("#confirm-yes").textContent = yes;
  return new Promise((resolve) => {
    const done = (answer) => () => {
      dialog.close();
      resolve(answer);
    };
    $("#confirm-yes").onclick = done(true);
    $("#confirm-no").onclick = done(false);
    dialog.oncancel = done(false);
    dialog.showModal();
    $("#confirm-no").focus();
  });
}

// -- search -----------------------------------------------------------------------------------

function filters() {
  const where = {
    q: $("#q").value,
    category: $("#f-category").value.trim(),
    tags: $("#f-tags").value.trim(),
    scope: $("#f-scope").value.trim(),
    since: $("#f-since").value === "typed" ? $("#f-since-typed").value.trim() : $("#f-since").value,
    until: $("#f-until").value.trim(),
    where: $("#f-where").value.trim(),
    mode: $("#f-mode").value,
  };
  if ($("#f-archived").checked) where.archived = "true";
  return Object.fromEntries(Object.entries(where).filter(([, v]) => v));
}

let searchTimer = null;
function searchSoon() {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(search, DEBOUNCE_MS);
}

async function search() {
  const seq = ++state.searchSeq;
  const began = performance.now();
  try {
    const page = await get("/api/search", filters());
    if (seq !== state.searchSeq) return;
    showResults(page);
    // What `make bench` reads: the first results shown, and each search's answer shown.
    if (!performance.getEntriesByName("memvault-interactive").length) performance.mark("memvault-interactive");
    performance.measure("memvault-search", { start: began });
  } catch (error) {
    if (seq === state.searchSeq) failed(error);
  }
}

// How a search ranked (its answer's `mode`): without a mode asked, the server's default ran.
const RANKED = { keyword: "by words", hybrid: "by words and meaning", semantic: "by meaning" };

function showResults(page) {
  const count = page.total === 0 ? "No memories match." :
    page.listed ? `${page.total} ${page.total === 1 ? "memory" : "memories"}, newest first` : `${page.total_capped ? "more than " : ""}${page.total} found ${RANKED[page.mode]}`;
  $("#count").textContent = count;
  clear($("#results"), page.results.map((hit) => {
    const meta = [hit.category, hit.scope && "scope " + hit.scope, hit.age].filter(Boolean).join(" · ");
    const relevance = page.listed ? null : el("meter", { min: "0", max: "1", value: String(hit.relevance), title: `relevance ${Math.round(hit.relevance * 100)}%`, "aria-label": "relevance" });
    return el("li", { class: state.open && state.open.memory.id === hit.id ? "current" : "" },
      el("a", { href: memoryHref(hit.id), class: "hit", "data-id": hit.id },
        el("span", { class: "title" }, hit.title), relevance,
        el("span", { class: "meta" }, meta),
        hit.snippet ? el("span", { class: "snippet" }, highlighted(hit.snippet)) : null,
        hit.tags.length ? el("span", { class: "tags" }, hit.tags.map((t) => "#" + t).join(" ")) : null));
  }));
}

// -- one memory -------------------------------------------------------------------------------

async function openMemory(id, quiet) {
  try {
    state.open = await get("/api/memory", { id });
    state.editing = null;
    showMemory();
    if (!quiet) $("#memory h2").focus();
  } catch (error) {
    state.open = null;
    clear($("#memory"), el("p", { class: "error" }, error.message));
  }
}

function row(label, value) {
  return [el("dt", {}, label), el("dd", {}, value ?? "—")];
}

function when(iso, by) {
  // "3 d ago (2026-...) by claude-code": when, and who, where known.
  return [iso && `${ago(iso)} (${iso})`, by && "by " + by].filter(Boolean).join(" ") || null;
}

function memoryLinks(ends) {
  // Memories a property names (supersedes, superseded_by): linked, or as written if none.
  return ends.length ? ends.flatMap((end, n) => [n ? ", " : "", end.id ? el("a", { href: memoryHref(end.id) }, end.title) : end.title]) : null;
}

function showMemory() {
  const { memory, outgoing, backlinks, usage, supersedes, superseded_by } = state.open;
  const properties = Object.entries(memory.properties);
  const banner = superseded_by.length
    ? el("p", { class: "banner", role: "note", id: "superseded" }, "Superseded: this memory was replaced by ", memoryLinks(superseded_by), ". Read that instead.")
    : null;
  const secrets = memory.secrets
    ? el("p", { class: "notice", id: "secrets" }, `Holds a secret, shown here as [redacted: …] (${memory.secrets}).`)
    : null;
  const facts = el("dl", { class: "facts" },
    row("path", memory.path),
    row("category", memory.category),
    row("scope", memory.scope || "global"),
    row("tags", memory.tags.length ? memory.tags.map((t) => "#" + t).join(" ") : null),
    row("created", when(memory.created_at, memory.created_by)),
    row("updated", when(memory.updated_at, memory.updated_by)),
    row("reviewed", memory.last_reviewed ? `${ago(memory.last_reviewed)} (${memory.last_reviewed})` : "never"),
    row("used", `${usage.access_count} times, last ${ago(usage.last_access)}`),
    memory.expires_at ? row("expires", memory.expires_at) : null,
    row("version", memory.version),
    memory.problem ? row("problem", memory.problem) : null,
    supersedes.length ? row("supersedes", memoryLinks(supersedes)) : null,
    superseded_by.length ? row("superseded by", memoryLinks(superseded_by)) : null,
    properties.map(([key, value]) => row(key, propertyValue(value))));
  const actions = el("p", { class: "actions" },
    button("Edit", startEdit, { accesskey: "e" }),
    button("Verify", verify, { title: "Mark as reviewed now: still true" }),
    button("Link…", startLink),
    button("Archive", archive),
    button("Delete", remove, { class: "danger" }),
    el("a", { href: "#/graph/" + encodeURIComponent(memory.id) }, "Graph"));
  clear($("#memory"),
    el("h2", { tabindex: "-1" }, memory.title),
    banner,
    secrets,
    actions,
    el("div", { id: "link-form" }),
    el("div", { class: "body" }, markdown(memory.content)),
    facts,
    linkList("Links", outgoing, "target", true),
    linkList("Backlinks", backlinks, "source", false));
  document.querySelectorAll("#results li").forEach((li) => {
    li.classList.toggle("current", li.querySelector("a").dataset.id === memory.id);
  });
}

function propertyValue(value) {
  // A property as a person reads it: a list's items joined.
  const items = Array.isArray(value) ? value : [value];
  return items.map((v) => (v !== null && typeof v === "object" ? JSON.stringify(v) : String(v))).join(", ");
}

function distinctLinks(rows, side) {
  // One entry per memory at the `side` end (a broken link per name written): a link in the
  // text and a Related item naming the same memory are one entry, noting both kinds.
  const entries = new Map();
  for (const link of rows) {
    const key = link[side + "_id"] || "name:" + link.raw.toLowerCase();
    const entry = entries.get(key) || { ...link, related: false, inText: false };
    entry.related ||= link.related;
    entry.inText ||= !link.related;
    entries.set(key, entry);
  }
  return [...entries.values()];
}

function linkList(heading, rows, side, unlinkable) {
  const links = distinctLinks(rows, side);
  const items = links.map((link) => {
    const id = link[side + "_id"];
    const title = link[side + "_title"] || link.raw;
    const node = id ? el("a", { href: memoryHref(id) }, title) : el("span", { class: "broken", title: "nothing by this name" }, link.raw);
    const other = link.source_id === state.open.memory.id ? link.target_id : link.source_id;
    const drop = unlinkable && link.related && other
      ? button("Unlink", () => unlink(other, title), { class: "small", "aria-label": "Unlink " + title })
      : null;
    const kinds = link.related ? (link.inText ? " related, in text" : " related") : null;
    return el("li", {}, node, kinds ? el("span", { class: "muted" }, kinds) : null, " ", drop);
  });
  return el("section", { class: "links" },
    el("h3", {}, `${heading} (${links.length})`),
    items.length ? el("ul", {}, items) : el("p", { class: "muted" }, "none"));
}

async function act(call, done) {
  try {
    const answer = await call();
    say(done, "ok");
    return answer;
  } catch (error) {
    failed(error);
    return null;
  }
}

async function reopen() {
  await openMemory(state.open.memory.id, true);
  await refreshChanges();
  search();
}

async function verify() {
  if (await act(() => post("/api/verify", { id: state.open.memory.id }), "Marked as reviewed.")) await reopen();
}

async function archive() {
  if (await act(() => post("/api/archive", { id: state.open.memory.id }), "Moved to the archive.")) await reopen();
}

async function remove() {
  const { memory } = state.open;
  if (!(await confirmDialog(`Delete “${memory.title}”? Links to it are taken out of other memories.`, "Delete"))) return;
  if (await act(() => post("/api/delete", { id: memory.id }), `Deleted ${memory.path}.`)) {
    state.open = null;
    clear($("#memory"));
    location.hash = "#/";
    await refreshChanges();
    search();
  }
}

async function unlink(other, title) {
  if (await act(() => post("/api/unlink", { source: state.open.memory.id, target: other }), `Unlinked ${title}.`)) await reopen();
}

function startLink() {
  const input = el("input", { id: "link-target", placeholder: "title, file name or id", "aria-label": "Memory to link to" });
  const go = async () => {
    if (!input.value.trim()) return;
    if (await act(() => post("/api/link", { source: state.open.memory.id, target: input.value.trim() }), "Linked.")) await reopen();
  };
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter") go();
    if (event.key === "Escape") clear($("#link-form"));
  });
  clear($("#link-form"), el("p", { class: "inline-form" }, input, button("Link", go), button("Cancel", () => clear($("#link-form")))));
  input.focus();
}

// -- editing, with conflicts shown, never lost ------------------------------------------------

function startEdit() {
  const { memory } = state.open;
  state.editing = { base: memory.version };
  const title = el("input", { id: "edit-title", value: memory.title, "aria-label": "Title" });
  const tags = el("input", { id: "edit-tags", value: memory.tags.join(", "), "aria-label": "Tags" });
  const text = el("textarea", { id: "editor", rows: "18", "aria-label": "Markdown" });
  text.value = memory.content;
  text.addEventListener("keydown", (event) => {
    if ((event.ctrlKey || event.metaKey) && event.key === "s") {
      event.preventDefault();
      save();
    }
  });
  clear($("#memory"),
    el("h2", { tabindex: "-1" }, "Editing: " + memory.title),
    el("label", {}, "Title ", title), " ",
    el("label", {}, "Tags ", tags),
    memory.secrets ? el("p", { class: "notice", id: "secrets" }, "This memory holds a secret, shown as [redacted: …]: a save that keeps the marker is refused (it would overwrite the secret). Edit the file itself, or take the marker out to remove the secret.") : null,
    el("div", { id: "conflict" }),
    text,
    el("p", { class: "actions" },
      button("Save", save, { id: "save" }),
      button("Cancel", () => { state.editing = null; showMemory(); }),
      el("span", { class: "muted" }, " Ctrl+S saves; a file changed meanwhile is never overwritten.")));
  text.focus();
}

async function save() {
  const { memory } = state.open;
  const body = {
    id: memory.id,
    version: state.editing.base,
    content: $("#editor").value,
    title: $("#edit-title").value,
    tags: $("#edit-tags").value.split(/[,\s]+/).filter(Boolean),
  };
  try {
    const answer = await post("/api/save", body);
    if (answer.conflict) {
      showConflict(answer.memory, answer.conflict);
      return;
    }
    state.open.memory = answer.memory;
    say("Saved.", "ok");
    await reopen();
  } catch (error) {
    failed(error);
  }
}

function showConflict(theirs, message) {
  // The file changed since the edit began: keep the person's text in the editor, show the
  // file's text beside it, and let them choose. Nothing is written until they do.
  state.open.memory = theirs;
  say("Not saved: the memory changed on disk.", "error");
  clear($("#conflict"), el("div", { class: "conflict", role: "alert" },
    el("p", {}, el("strong", {}, "Not saved: this memory changed since you began editing. "), message),
    el("p", {}, "Your text is still in the editor below. The file as it is now:"),
    el("pre", { id: "theirs" }, theirs.content),
    el("p", { class: "actions" },
      button("Keep my text (save over the new version)", () => { state.editing.base = theirs.version; save(); }, { id: "keep-mine" }),
      button("Take theirs (discard my text)", () => { state.editing = null; showMemory(); }, { id: "take-theirs" }))));
}

// -- review -----------------------------------------------------------------------------------

async function showReview() {
  const page = $("#page-review");
  clear(page, el("h2", {}, "Review"), el("p", { class: "muted" }, "Loading…"));
  let data;
  try {
    data = await get("/api/review");
  } catch (error) {
    clear(page, el("p", { class: "error" }, error.message));
    return;
  }
  const pairs = data.duplicates.map(([pair, a, b]) => el("div", { class: "pair" },
    el("p", {}, `${Math.round(pair.score * 100)}% alike`),
    el("div", { class: "sides" }, [a, b].map((note, n) => el("div", { class: "side" },
      el("a", { href: memoryHref(note.id) }, note.title),
      el("p", { class: "muted" }, note.path),
      button(`Merge the other into this one`, () => merge(note, n ? a : b), { class: "merge", "aria-label": `Merge into ${note.title}` }))))));
  clear(page,
    el("h2", {}, "Review"),
    queue("stale", `Not reviewed for ${data.days} days`, data.stale, (n) => "reviewed " + ago(n.last_reviewed)),
    queue("unused", "Never used", data.unused, (n) => "updated " + ago(n.updated_at)),
    queue("expiring", "Expiring soon", data.expiring, (n) => "expires " + n.expires_at),
    queue("superseded", "Superseded", data.superseded, (n) => {
      const name = n.superseded_by.replace(/^\[\[|\]\]$/g, "").split("|")[0];
      return ["replaced by ", el("a", { href: memoryHref(name) }, name)];
    }),
    el("section", { class: "queue", id: "duplicates" }, el("h3", {}, `Near duplicates (${data.duplicates.length})`),
      pairs.length ? pairs : el("p", { class: "muted" }, "none")),
    queue("problems", "Links and files", data.problems, null));
}

function queue(name, title, first, extra) {
  // A review queue: its count, its first page of rows, and a button that fetches the next
  // page until every row is shown (a queue of thousands, listed whole, held the page up).
  // `extra` says what to show beside a memory; without it the rows are lines of text.
  const row = (item) => (extra ? noteItem(item, extra(item)) : el("li", {}, item));
  const heading = el("h3", {}, `${title} (${first.count})`);
  if (!first.count) return el("section", { class: "queue", id: "queue-" + name }, heading, el("p", { class: "muted" }, "none"));
  const list = el("ul", {});
  const more = button("", async () => {
    more.disabled = true;
    try {
      show(await get("/api/review", { queue: name, offset: list.children.length }));
    } catch (error) {
      failed(error);
    }
    more.disabled = false;
  }, { class: "more" });
  const show = (page) => {
    const added = page.items.map(row);
    list.append(...added);
    const left = page.count - list.children.length;
    more.textContent = `Show ${Math.min(left, first.items.length)} more (${left} left)`;
    more.hidden = left <= 0 || !added.length;
    // The keyboard goes on from the first row it brought, once the button is gone.
    if (more.hidden && added.length && document.activeElement === more) added[0].querySelector("a, button")?.focus();
  };
  show(first);
  return el("section", { class: "queue", id: "queue-" + name }, heading, list, more);
}

function noteItem(note, extra) {
  // A memory waiting for review: its title, why it waits, and a button that verifies it.
  return el("li", {},
    el("a", { href: memoryHref(note.id) }, note.title), " ",
    el("span", { class: "muted" }, extra), " ",
    button("Verify", async () => {
      if (await act(() => post("/api/verify", { id: note.id }), `Marked “${note.title}” as reviewed.`)) showReview();
    }, { class: "small", "aria-label": "Verify " + note.title }));
}

async function merge(keep, other) {
  const question = `Merge “${other.title}” into “${keep.title}”? Its text is appended, its links move over, then it is deleted.`;
  if (!(await confirmDialog(question, "Merge"))) return;
  if (await act(() => post("/api/merge", { keep: keep.id, other: other.id }), `Merged into “${keep.title}”.`)) {
    await refreshChanges();
    showReview();
  }
}

// -- graph ------------------------------------------------------------------------------------

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  node.append(...children);
  return node;
}

async function showGraph(id) {
  const page = $("#page-graph");
  const depth = new URLSearchParams(location.hash.split("?")[1] || "").get("depth") || "1";
  let data;
  try {
    data = await get("/api/graph", id ? { id, depth } : {});
  } catch (error) {
    clear(page, el("p", { class: "error" }, error.message));
    return;
  }
  const width = 1100, height = 620, cx = width / 2, cy = height / 2;
  const rings = [0, 1, 2].map((d) => data.nodes.filter((n) => (id ? n.depth === d : true)));
  const place = new Map();
  rings.forEach((ring, d) => ring.forEach((node, n) => {
    const radius = id ? d * 140 + (d && ring.length > 40 ? (n % 2) * 50 : 0) : 250;
    const angle = (2 * Math.PI * n) / Math.max(ring.length, 1);
    place.set(node.id, [cx + radius * Math.cos(angle), cy + radius * Math.sin(angle)]);
  }));
  if (!id) rings.length = 1;
  const heaviest = Math.max(1, ...data.edges.map((e) => e[2]));
  const biggest = Math.max(1, ...data.nodes.map((n) => n.size));
  const edges = data.edges.filter(([a, b]) => place.has(a) && place.has(b)).map(([a, b, n]) => {
    const [x1, y1] = place.get(a), [x2, y2] = place.get(b);
    return svg("line", { x1, y1, x2, y2, class: "edge", "stroke-width": String(1 + (3 * n) / heaviest) });
  });
  const nodes = data.nodes.map((node) => {
    const [x, y] = place.get(node.id);
    const r = id ? (node.depth === 0 ? 12 : 7) : 8 + 30 * Math.sqrt(node.size / biggest);
    const href = id ? "#/graph/" + encodeURIComponent(node.id) + "?depth=" + depth : "#/?category=" + encodeURIComponent(node.id);
    const label = id ? node.label : `${node.label} (${node.size})`;
    return svg("a", { href, class: "node depth" + node.depth, "aria-label": label },
      svg("circle", { cx: x, cy: y, r }), svg("text", { x, y: y - r - 4, "text-anchor": "middle" }, label));
  });
  const title = id ? `Links around “${data.nodes[0].label}”` : "The vault by category (links between categories)";
  clear(page,
    el("h2", {}, title),
    el("p", { class: "actions" },
      id ? el("a", { href: memoryHref(id) }, "Open the memory") : null, " ",
      id ? el("a", { href: `#/graph/${encodeURIComponent(id)}?depth=${depth === "1" ? 2 : 1}` }, `Depth ${depth === "1" ? 2 : 1}`) : null, " ",
      el("a", { href: "#/graph" }, "Whole vault"),
      data.capped ? el("span", { class: "muted" }, " (capped: not every node is shown)") : null),
    svg("svg", { viewBox: `0 0 ${width} ${height}`, class: "graph", role: "img", "aria-label": title }, ...edges, ...nodes));
}

// -- overview ---------------------------------------------------------------------------------

function bars(title, counts) {
  const entries = Object.entries(counts);
  const top = Math.max(1, ...entries.map(([, n]) => n));
  return el("section", { class: "chart" }, el("h3", {}, title),
    entries.length ? el("table", {}, entries.map(([label, n]) => {
      const bar = el("span", { class: "bar" });
      bar.style.width = (100 * n) / top + "%";
      return el("tr", {}, el("th", { scope: "row" }, label), el("td", { class: "num" }, String(n)), el("td", { class: "track" }, bar));
    })) : el("p", { class: "muted" }, "none"));
}

async function showOverview() {
  const page = $("#page-overview");
  let data;
  try {
    data = await get("/api/overview");
  } catch (error) {
    clear(page, el("p", { class: "error" }, error.message));
    return;
  }
  const { stats, semantic } = data;
  clear(page,
    el("h2", {}, "Overview"),
    el("dl", { class: "facts wide" },
      row("memories", String(stats.memories)),
      row("size", (stats.bytes / 1024).toFixed(1) + " KiB"),
      row("never used", String(stats.never_used.length)),
      row("malformed notes", String(data.malformed)),
      row("semantic search", semantic.enabled ? `${semantic.model}: ${semantic.embedded} embedded, ${semantic.pending} waiting` : semantic.reason || "off")),
    el("div", { class: "charts" },
      bars("By category", stats.by_category),
      bars("By scope", stats.by_scope),
      bars("Created per month", data.created_by_month),
      bars("Last used per month", data.used_by_month)));
}

// -- pages, live updates, keys ----------------------------------------------------------------

function route() {
  const [path, query] = location.hash.replace(/^#/, "").split("?");
  const parts = (path || "/").split("/").filter(Boolean).map(decoded);
  const page = parts[0] === "m" || !parts.length ? "search" : parts[0];
  state.page = page;
  for (const section of document.querySelectorAll(".page")) section.hidden = section.id !== "page-" + page;
  for (const link of document.querySelectorAll("nav a")) {
    if (link.dataset.page === page) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  const params = new URLSearchParams(query || "");
  if (page === "search") {
    if (params.has("tags")) $("#f-tags").value = params.get("tags");
    if (params.has("category")) $("#f-category").value = params.get("category");
    if (params.size) search();
    if (parts[0] === "m" && parts[1]) openMemory(parts[1]);
  } else if (page === "review") showReview();
  else if (page === "graph") showGraph(parts[1]);
  else if (page === "overview") showOverview();
}

async function refreshChanges() {
  try {
    state.changes = (await get("/api/changes")).changes;
  } catch (error) {
    failed(error);
  }
}

async function poll() {
  // Changes made by an assistant or in Obsidian: the page follows them without a reload.
  try {
    const { changes } = await get("/api/changes");
    if (state.changes !== null && changes !== state.changes) {
      state.changes = changes;
      say("Updated: the vault changed.", "ok");
      if (state.page === "search") {
        search();
        if (state.open && !state.editing) await openMemory(state.open.memory.id, true);
        else if (state.open && state.editing) notifyEdited();
      } else route();
    }
    state.changes = changes;
  } catch (error) {
    // Refused for want of a key: the page says which URL to open.
    if (error.status !== 401) say("Cannot reach memvault: " + error.message, "error");
  }
  setTimeout(poll, POLL_MS);
}

async function notifyEdited() {
  // While editing, a change on disk is announced at once (saving would then be refused).
  try {
    const fresh = await get("/api/memory", { id: state.open.memory.id });
    if (fresh.memory.version !== state.editing.base) say("This memory changed on disk while you edit it; saving will show both texts.", "error");
  } catch (error) {
    failed(error);
  }
}

function keys(event) {
  // Arrow keys move between the search box and the results; "/" goes to the search box.
  const results = [...document.querySelectorAll("#results a.hit")];
  const at = results.indexOf(document.activeElement);
  if (event.key === "/" && !/INPUT|TEXTAREA/.test(document.activeElement.tagName)) {
    event.preventDefault();
    location.hash = location.hash.startsWith("#/m/") ? location.hash : "#/";
    $("#q").focus();
  } else if (event.key === "ArrowDown" && (document.activeElement === $("#q") || at >= 0) && results.length) {
    event.preventDefault();
    results[Math.min(at + 1, results.length - 1)].focus();
  } else if (event.key === "ArrowUp" && at >= 0) {
    event.preventDefault();
    (at === 0 ? $("#q") : results[at - 1]).focus();
  }
}

function start() {
  for (const input of document.querySelectorAll("#search-form input, #search-form select")) {
    input.addEventListener(input.type === "checkbox" || input.tagName === "SELECT" ? "change" : "input", searchSoon);
  }
  $("#f-since").addEventListener("change", () => {
    $("#since-typed").hidden = $("#f-since").value !== "typed";
  });
  $("#search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    search();
  });
  document.addEventListener("keydown", keys);
  window.addEventListener("hashchange", () => {
    // The page's URL opened again while it is open: its key is taken, and searched with.
    if (takeKey()) search();
    route();
  });
  takeKey();
  route();
  if (!location.hash.includes("?")) search();
  refreshChanges().then(() => setTimeout(poll, POLL_MS));
}

start();
