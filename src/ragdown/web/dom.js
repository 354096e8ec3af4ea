// Building DOM without innerHTML: every string goes in as text or as an attribute value.

/**
 * `h("a", { class: "x", href: "#/", onclick: fn, dataset: { path } }, "text", child)`.
 * Props starting with `on` are listeners; `class`, `dataset`, `style` (object), `text` and boolean
 * attributes are handled; anything else is set as an attribute. Children are nodes or strings
 * (strings become text nodes); null, undefined and false are skipped, arrays are flattened.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) {
      // Only real listeners: a string here would become an inline handler.
      if (typeof value === "function") el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      el.className = Array.isArray(value) ? value.filter(Boolean).join(" ") : value;
    } else if (key === "dataset") {
      for (const [name, data] of Object.entries(value)) {
        if (data !== undefined && data !== null) el.dataset[name] = String(data);
      }
    } else if (key === "style" && typeof value === "object") {
      Object.assign(el.style, value);
    } else if (key === "text") {
      el.textContent = String(value);
    } else if (key === "value" || key === "checked" || key === "disabled" || key === "hidden") {
      el[key] = value;
    } else if (value === true) {
      el.setAttribute(key, "");
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function mount(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export function byId(id) {
  return document.getElementById(id);
}

// --- formatting ---------------------------------------------------------------------------------

const numberFormat = new Intl.NumberFormat();

export function fmtNumber(value) {
  return typeof value === "number" ? numberFormat.format(value) : "—";
}

export function fmtPercent(value) {
  return typeof value === "number" ? `${Math.round(value * 1000) / 10}%` : "—";
}

export function fmtSimilarity(value) {
  return typeof value === "number" ? value.toFixed(2) : "—";
}

/**
 * A search hit's similarity: the number, or `lexical` for a hit found by its words alone (the server
 * sends null when no embedder scored the query).
 */
export function hitSimilarity(value) {
  const lexical = value === null;
  return h(
    "span",
    {
      class: ["hit-sim", lexical && "hit-lexical"],
      title: lexical
        ? "Found by its words alone: no embedder scored the query"
        : "Cosine similarity of the query and this section (hits are ranked by relevance, words and meaning together)",
    },
    lexical ? "lexical" : fmtSimilarity(value),
  );
}

export function fmtDate(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

const relativeFormat = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" });
const RELATIVE_STEPS = [
  ["year", 365 * 86400],
  ["month", 30 * 86400],
  ["week", 7 * 86400],
  ["day", 86400],
  ["hour", 3600],
  ["minute", 60],
];

/** How long ago (or ahead) `ms` is, in words: `just now`, `5 minutes ago`, `yesterday`. */
export function fmtAgo(ms, now = Date.now()) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  const seconds = (ms - now) / 1000;
  if (Math.abs(seconds) < 45) return "just now";
  for (const [unit, size] of RELATIVE_STEPS) {
    if (Math.abs(seconds) >= size * 0.9 || unit === "minute") {
      return relativeFormat.format(Math.round(seconds / size), unit);
    }
  }
  return "";
}

/** A server time (ISO 8601) as milliseconds, or NaN. */
export function isoMs(iso) {
  return typeof iso === "string" ? Date.parse(iso) : Number.NaN;
}

export function fmtDay(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  return new Date(ms).toLocaleDateString(undefined, { dateStyle: "medium" });
}

export function fmtSize(bytes) {
  if (typeof bytes !== "number") return "";
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

export function plural(count, one, many = `${one}s`) {
  return `${fmtNumber(count)} ${count === 1 ? one : many}`;
}

// --- small shared pieces ------------------------------------------------------------------------

export function badge(text, kind = "", title = undefined) {
  return h("span", { class: ["badge", kind && `badge-${kind}`], title }, text);
}

export function tagChips(tags, onTag) {
  if (!tags || !tags.length) return null;
  return h(
    "span",
    { class: "tags" },
    tags.map((tag) =>
      onTag
        ? h(
            "button",
            { type: "button", class: "tag", onclick: (event) => onTag(tag, event), title: `Search #${tag}` },
            `#${tag}`,
          )
        : h("span", { class: "tag" }, `#${tag}`),
    ),
  );
}

/** An in-content message block: kind is "info", "warn" or "error". */
export function notice(kind, ...children) {
  return h(
    "div",
    { class: ["notice", `notice-${kind}`], role: kind === "error" ? "alert" : undefined },
    ...children,
  );
}

/** The page a folder view shows for a folder name that does not exist (or the caller may not see). */
export function mountNoSuchFolder(main, name) {
  mount(
    main,
    h(
      "div",
      { class: "page" },
      h("h1", { tabindex: "-1" }, "No such folder"),
      notice("error", `There is no folder named ${name}.`),
    ),
  );
}

export function spinner(label = "Loading…") {
  return h("p", { class: "loading", "aria-busy": "true" }, label);
}

/** The folder-relative part of a folder-prefixed path. */
export function relPath(path) {
  const at = path.indexOf("/");
  return at < 0 ? path : path.slice(at + 1);
}

export function folderOf(path) {
  const at = path.indexOf("/");
  return at < 0 ? path : path.slice(0, at);
}

export function dirname(path) {
  const at = path.lastIndexOf("/");
  return at < 0 ? "" : path.slice(0, at);
}

export function basename(path) {
  return path.slice(path.lastIndexOf("/") + 1);
}

// --- Markdown as plain text ---------------------------------------------------------------------

/** A wikilink's text as the preview shows it (render.py): the shown text, else `name > heading`. */
function wikilinkLabel(inner) {
  const bar = inner.search(/\\?\|/);
  const target = (bar < 0 ? inner : inner.slice(0, bar)).trim();
  const shown =
    bar < 0
      ? ""
      : inner
          .slice(bar)
          .replace(/^\\?\|/, "")
          .trim();
  if (shown && !/^\d+(\s*x\s*\d+)?$/.test(shown)) return shown;
  const hash = target.indexOf("#");
  const name = (hash < 0 ? target : target.slice(0, hash)).trim();
  const anchor = hash < 0 ? "" : target.slice(hash + 1).trim();
  if (!anchor || anchor.startsWith("^")) return name;
  return name ? `${name} > ${anchor}` : anchor;
}

const EMPHASIS_OPEN = /(^|[\s([{"'])(\*{1,3}|~~|==)(?=\S)/gm;
const EMPHASIS_CLOSE = /(\S)(\*{1,3}|~~|==)(?=$|[\s)\]}"'.,;:!?*=~])/gm;

/**
 * Markdown as the text a reader sees, on one line: for search-hit snippets and outline titles.
 * Wikilinks and embeds become their label, `[text](url)` its text, and the markers of headings,
 * quotes and callouts, lists and task boxes, emphasis, highlights, code, tables and footnotes go.
 */
export function plainText(markdown) {
  return (
    String(markdown || "")
      .replace(/\r\n?/g, "\n")
      .replace(/(?<!\\)!?\[\[([^[\]\n]+?)\]\]/g, (_, inner) => wikilinkLabel(inner))
      // Escaped characters are held apart until the end, so no rule below reads them as markup.
      .replace(/\\([!-/:-@[-`{-~])/g, (_, ch) => `\uE000${ch.charCodeAt(0)}\uE001`)
      // Block structure, line by line.
      .replace(/^[ \t]*(```|~~~).*$/gm, "")
      .replace(/^[ \t]{0,3}([-*_])([ \t]*\1){2,}[ \t]*$/gm, "")
      .replace(/^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/gm, "")
      .replace(/^[ \t]*(>[ \t]?)+/gm, "")
      .replace(/^[ \t]*\[![\w-]+\][+-]?[ \t]*/gm, "")
      .replace(/^[ \t]{0,3}#{1,6}(?=[ \t]|$)[ \t]*/gm, "")
      .replace(/[ \t]+#+[ \t]*$/gm, "")
      .replace(/^[ \t]*([-*+]|\d{1,9}[.)])[ \t]+(\[[ xX]\][ \t]+)?/gm, "")
      .replace(/^\[\^[^\]\s]+\]:[ \t]*/gm, "")
      // Markdown links and images (wikilinks went first, before `\|` in a table was held apart).
      .replace(/!\[([^\]\n]*)\]\([^)\n]*\)/g, "$1")
      .replace(/\[([^\]\n]*)\]\((?:[^()\n]|\([^)\n]*\))*\)/g, "$1")
      .replace(/\[([^\]\n]+)\]\[[^\]\n]*\]/g, "$1")
      .replace(/\[\^[^\]\s]+\]/g, "")
      .replace(/\^\[([^\]\n]*)\]/g, " ($1)")
      .replace(/<((?:https?|mailto):[^>\s]+)>/gi, "$1")
      .replace(/(^|\s)\^[A-Za-z0-9-]+(?=\s*$)/gm, "$1")
      // Inline markers: code, emphasis, strikethrough, highlights; `_` only at word edges.
      .replace(/`+/g, "")
      .replace(EMPHASIS_OPEN, "$1")
      .replace(EMPHASIS_OPEN, "$1")
      .replace(EMPHASIS_CLOSE, "$1")
      .replace(EMPHASIS_CLOSE, "$1")
      .replace(/(^|[^\p{L}\p{N}_])_{1,3}(?=\S)/gu, "$1")
      .replace(/(\S)_{1,3}(?=[^\p{L}\p{N}_]|$)/gu, "$1")
      .replace(/[ \t]*\|[ \t]*/g, " ")
      .replace(/\s+/g, " ")
      .trim()
      .replace(/\uE000(\d+)\uE001/g, (_, code) => String.fromCharCode(Number(code)))
  );
}

export function isMarkdown(path) {
  return /\.(md|markdown|mdx)$/i.test(path);
}

export function isTyping(event) {
  const target = event.target;
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(target.tagName))
  );
}
