// Search hits as a reader sees them: the snippet around the first query word, the query's words
// marked, embeds shown as a labelled chip (not as bare text or `![[...]]`). Everything goes into the
// DOM as text nodes: the hit's text is never parsed as HTML.

import { badge, h, hitSimilarity, plainText, relPath } from "./dom.js";
import { routes } from "./router.js";

const SNIPPET = 220;
const LEAD = 60; // characters kept before the first marked word
const EMBED_OPEN = "\uE010";
const EMBED_CLOSE = "\uE011";

/** The query's words worth marking (two characters or more), longest first, lowercased, unique. */
export function queryWords(query) {
  const words = String(query || "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length >= 2);
  return [...new Set(words)].sort((a, b) => b.length - a.length);
}

function wordPattern(words) {
  if (!words.length) return null;
  const escaped = words.map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join("|")})`, "giu");
}

/** `text` with the words of `pattern` in <mark>: an array of strings and nodes for h(). */
function marked(text, pattern) {
  if (!pattern) return [text];
  const out = [];
  let last = 0;
  pattern.lastIndex = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > last) out.push(text.slice(last, match.index));
    out.push(h("mark", {}, match[0]));
    last = match.index + match[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

/** The plain text of a hit, with embeds (`![[name]]`) held apart between two private-use marks. */
export function flatText(markdown) {
  const held = String(markdown || "").replace(
    /(?<!\\)!\[\[([^[\]\n|#]*)(?:#[^[\]\n|]*)?(?:\|[^[\]\n]*)?\]\]/g,
    (_, name) => ` ${EMBED_OPEN}${name.trim() || "embed"}${EMBED_CLOSE} `,
  );
  return plainText(held);
}

/** The snippet's window: up to SNIPPET characters, starting a little before the first query word. */
export function snippetWindow(flat, words) {
  const pattern = wordPattern(words);
  let start = 0;
  if (pattern) {
    pattern.lastIndex = 0;
    const first = pattern.exec(flat);
    if (first && first.index > LEAD) {
      start = flat.lastIndexOf(" ", first.index - LEAD) + 1;
      // Never cut an embed chip in two.
      const open = flat.lastIndexOf(EMBED_OPEN, start);
      if (open >= 0 && flat.indexOf(EMBED_CLOSE, open) >= start) start = open;
    }
  }
  let end = Math.min(flat.length, start + SNIPPET);
  const open = flat.lastIndexOf(EMBED_OPEN, end);
  if (open >= start && flat.indexOf(EMBED_CLOSE, open) >= end) end = flat.indexOf(EMBED_CLOSE, open) + 1;
  return { text: flat.slice(start, end), before: start > 0, after: end < flat.length };
}

/** A hit's snippet, as nodes: its words from `query` marked, its embeds as chips. */
export function snippetNodes(markdown, query) {
  const words = queryWords(query);
  const pattern = wordPattern(words);
  const { text, before, after } = snippetWindow(flatText(markdown), words);
  const out = before ? ["…"] : [];
  const parts = text.split(new RegExp(`(${EMBED_OPEN}[^${EMBED_CLOSE}]*${EMBED_CLOSE})`, "u"));
  for (const part of parts) {
    if (part.startsWith(EMBED_OPEN)) {
      const name = part.slice(1, -1);
      out.push(h("span", { class: "hit-embed", title: `Embeds ${name}` }, "↳ ", marked(name, pattern)));
    } else if (part) {
      out.push(...marked(part, pattern));
    }
  }
  if (after) out.push("…");
  return out;
}

/** One hit as a link to its lines, with its place, similarity, snippet and tags. */
export function hitItem(hit, { query, onTag, tagChips, withFolder = false }) {
  const crumb = plainText(hit.breadcrumb || [hit.title, hit.heading].filter(Boolean).join(" › "));
  const place = withFolder ? hit.path : relPath(hit.path);
  return h(
    "li",
    {},
    h(
      "a",
      {
        class: "hit",
        href: routes.doc(hit.path, { line: hit.start_line, end: hit.end_line }),
        dataset: { path: hit.path, line: hit.start_line },
      },
      h("span", { class: "hit-crumb" }, crumb || hit.title || relPath(hit.path)),
      h(
        "span",
        { class: "hit-meta" },
        h("span", { class: "hit-lines" }, `${place}:${hit.start_line}-${hit.end_line}`),
        hitSimilarity(hit.similarity),
        hit.created_by ? badge("agent", "agent", `Written by ${hit.created_by}`) : null,
      ),
      h("span", { class: "hit-text" }, snippetNodes(hit.text, query)),
    ),
    tagChips ? tagChips(hit.tags, onTag) : null,
  );
}
