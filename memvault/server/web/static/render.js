// Markdown to DOM nodes, built with textContent only: no note can inject HTML or script.
// Wikilinks ([[target|text]]) and links to .md files become links to the memory they name;
// embeds (![[file]]) are shown as links. Other links open only for http(s) and mailto.
// Obsidian's callouts (> [!kind] Title) are boxes, foldable ones (-, +) <details>; its block
// ids (" ^id" ending a line, or "^id" alone on a line after a block) are not shown.
"use strict";

const Render = (() => {
  const FENCE = /^\s{0,3}(`{3,}|~{3,})/;
  const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
  const ITEM = /^(\s*)([-*+]|\d+[.)])\s+(.*)$/;
  const QUOTE = /^\s{0,3}>\s?(.*)$/;
  const RULE = /^\s{0,3}([-*_])(\s*\1){2,}\s*$/;
  const BLOCK_ID = /\s+\^[A-Za-z0-9-]+\s*$/;
  const BLOCK_ID_LINE = /^\s*\^[A-Za-z0-9-]+\s*$/;
  const CALLOUT = /^\[!([^\]\s]+)\]([+-]?)\s*(.*)$/;
  // Obsidian's callout kinds, each alias under the kind whose look it takes (app.css styles
  // `callout-KIND`); any other kind is a generic callout.
  const CALLOUT_KINDS = {
    note: ["note"], abstract: ["abstract", "summary", "tldr"], info: ["info"], todo: ["todo"],
    tip: ["tip", "hint", "important"], success: ["success", "check", "done"],
    question: ["question", "help", "faq"], warning: ["warning", "caution", "attention"],
    failure: ["failure", "fail", "missing"], danger: ["danger", "error"], bug: ["bug"],
    example: ["example"], quote: ["quote", "cite"],
  };
  const CALLOUT_LOOK = new Map(Object.entries(CALLOUT_KINDS).flatMap(([look, names]) => names.map((name) => [name, look])));
  const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|(!?)\[\[([^\[\]\n]+?)\]\]|(!?)\[([^\]\n]*)\]\(\s*<?([^\s()<>]*)>?(?:\s+"[^"]*")?\s*\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|(?<![\w])_([^_\n]+)_(?![\w])|(?<![\w#])#([\p{L}\p{N}_\/-]*[\p{L}_\/-][\p{L}\p{N}_\/-]*)|(https?:\/\/[^\s<>()]+[^\s<>().,;:!?'"])/gu;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== null) node.setAttribute(key, value);
    }
    // Children nest to any depth (a row of a list of rows): each is a node or a text.
    for (const child of children.flat(Infinity)) {
      if (child !== null && child !== undefined && child !== false) {
        node.append(child instanceof Node ? child : String(child));
      }
    }
    return node;
  }

  function decoded(text) {
    // A link's percent escapes decoded, run by run: a bare % (promo-50%-off.md) or a run
    // that is no UTF-8 is kept as written, where decodeURIComponent throws on the whole.
    return text.replace(/(%[0-9A-Fa-f]{2})+/g, (run) => {
      try {
        return decodeURIComponent(run);
      } catch {
        return run;
      }
    });
  }

  function memoryLink(target, text, embed) {
    const name = target.split("#")[0].split("^")[0].trim();
    const link = el("a", { href: "#/m/" + encodeURIComponent(name), class: "wikilink", "data-target": name }, text || target);
    if (embed) link.classList.add("embed");
    return link;
  }

  function inline(text) {
    const out = [];
    let last = 0;
    for (const m of text.matchAll(INLINE)) {
      if (m.index > last) out.push(text.slice(last, m.index));
      last = m.index + m[0].length;
      if (m[1] !== undefined) out.push(el("code", {}, m[2]));
      else if (m[4] !== undefined) {
        const [target, shown] = m[4].split(/\\?\|/);
        out.push(memoryLink(target, shown || target, m[3] === "!"));
      } else if (m[7] !== undefined) {
        // A web address stays as written (decoding %26 or %2F would change where it goes).
        const href = decoded(m[7]);
        if (/^(https?:|mailto:)/i.test(m[7])) {
          out.push(el("a", { href: m[7], rel: "noopener noreferrer", target: "_blank" }, m[6] || m[7]));
        } else if (/\.md(#.*)?$/i.test(href)) {
          out.push(memoryLink(href.replace(/\.md(#.*)?$/i, ""), m[6], m[5] === "!"));
        } else {
          out.push(el("span", { class: "attachment", title: href }, m[6] || href));
        }
      } else if (m[8] !== undefined || m[9] !== undefined) out.push(el("strong", {}, inline(m[8] ?? m[9])));
      else if (m[10] !== undefined || m[11] !== undefined) out.push(el("em", {}, inline(m[10] ?? m[11])));
      else if (m[12] !== undefined) out.push(el("a", { href: "#/?tags=" + encodeURIComponent(m[12]), class: "tag" }, "#" + m[12]));
      else if (m[13] !== undefined) out.push(el("a", { href: m[13], rel: "noopener noreferrer", target: "_blank" }, m[13]));
    }
    if (last < text.length) out.push(text.slice(last));
    return out;
  }

  function list(lines, start) {
    // One list (and the lists nested in it) from lines[start]; returns [node, next index].
    const first = lines[start].match(ITEM);
    const indent = first[1].length;
    const ordered = /\d/.test(first[2]);
    const node = el(ordered ? "ol" : "ul");
    let i = start;
    while (i < lines.length) {
      const m = lines[i].match(ITEM);
      if (!m || m[1].length < indent) break;
      if (m[1].length > indent) {
        const [nested, next] = list(lines, i);
        (node.lastChild || node).append(nested);
        i = next;
        continue;
      }
      const task = m[3].match(/^\[([ xX])\]\s+(.*)$/);
      const item = el("li", {});
      if (task) item.append(el("input", { type: "checkbox", disabled: "", ...(task[1] !== " " ? { checked: "" } : {}) }), " ");
      item.append(...inline(task ? task[2] : m[3]));
      node.append(item);
      i += 1;
    }
    return [node, i];
  }

  function callout([, kind, fold, title], body) {
    // A callout: its title (else its kind, capitalised) as its label, the rest as its body;
    // `-` folds it shut, `+` open, as <details> (no script needed).
    const name = kind.toLowerCase();
    const look = CALLOUT_LOOK.get(name);
    const label = title.trim() ? inline(title.trim()) : name.charAt(0).toUpperCase() + name.slice(1);
    const attrs = { class: "callout" + (look ? " callout-" + look : ""), "data-callout": name };
    const content = el("div", { class: "callout-body" }, markdown(body.join("\n")));
    if (!fold) return el("div", attrs, el("p", { class: "callout-title" }, label), content);
    return el("details", { ...attrs, ...(fold === "+" ? { open: "" } : {}) }, el("summary", { class: "callout-title" }, label), content);
  }

  function withoutBlockIds(lines) {
    // The lines with Obsidian's block ids taken out, code blocks left as written: an id
    // ending a line is cut, a line holding only an id (after some block) is left out.
    const kept = [];
    let fence = null;
    let text = false;
    for (const line of lines) {
      const opens = line.match(FENCE);
      if (fence) {
        if (line.trimStart().startsWith(fence)) fence = null;
        kept.push(line);
      } else if (opens) {
        fence = opens[1];
        kept.push(line);
      } else if (BLOCK_ID_LINE.test(line)) {
        if (!text) kept.push(line);
      } else {
        kept.push(line.replace(BLOCK_ID, ""));
      }
      text ||= Boolean(line.trim());
    }
    return kept;
  }

  function markdown(body) {
    const lines = withoutBlockIds(body.replace(/\r\n?/g, "\n").split("\n"));
    const out = document.createDocumentFragment();
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      const fence = line.match(FENCE);
      if (fence) {
        const code = [];
        i += 1;
        while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) code.push(lines[i++]);
        i += 1;
        out.append(el("pre", {}, el("code", {}, code.join("\n"))));
      } else if (!line.trim()) {
        i += 1;
      } else if (line.trimStart().startsWith("<!--")) {
        // An HTML comment is not shown, as in Obsidian's reading view (a captured session's
        // marks): up to the line that closes it.
        while (i < lines.length && !lines[i].includes("-->")) i += 1;
        i += 1;
      } else if (HEADING.test(line)) {
        const m = line.match(HEADING);
        out.append(el("h" + Math.min(6, m[1].length + 1), {}, inline(m[2])));
        i += 1;
      } else if (RULE.test(line)) {
        out.append(el("hr"));
        i += 1;
      } else if (ITEM.test(line)) {
        const [node, next] = list(lines, i);
        out.append(node);
        i = next;
      } else if (QUOTE.test(line)) {
        const quoted = [];
        while (i < lines.length && QUOTE.test(lines[i])) quoted.push(lines[i++].match(QUOTE)[1]);
        const head = quoted[0].match(CALLOUT);
        out.append(head ? callout(head, quoted.slice(1)) : el("blockquote", {}, markdown(quoted.join("\n"))));
      } else {
        const para = [];
        while (i < lines.length && lines[i].trim() && !FENCE.test(lines[i]) && !HEADING.test(lines[i]) && !ITEM.test(lines[i]) && !QUOTE.test(lines[i]) && !lines[i].trimStart().startsWith("<!--")) para.push(lines[i++]);
        const node = el("p");
        para.forEach((text, n) => {
          if (n) node.append(el("br"));
          node.append(...inline(text));
        });
        out.append(node);
      }
    }
    return out;
  }

  function highlighted(snippet) {
    // A search snippet with the query's words between ** marks: those words in <mark>.
    return snippet.split("**").map((part, n) => (n % 2 ? el("mark", {}, part) : part));
  }

  return { el, markdown, inline, highlighted, decoded };
})();
