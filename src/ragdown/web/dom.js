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
      title: lexical ? "Found by its words alone: no embedder scored the query" : "Cosine similarity",
    },
    lexical ? "lexical" : fmtSimilarity(value),
  );
}

export function fmtDate(ms) {
  if (typeof ms !== "number" || !Number.isFinite(ms)) return "";
  return new Date(ms).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
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
