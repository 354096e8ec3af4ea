// The rendered Markdown from the server (render.py), brought to life in the page:
//
// - it is parsed in an inert <template> first, so no image starts loading without the token;
//   attachments are then fetched with the bearer header and shown through blob URLs;
// - note embeds (`![[Note]]`, a section `![[Note#Heading]]`, a block `![[Note#^id]]`) are expanded in
//   place, two levels deep;
// - clicks on missing wikilinks, in-page anchors, footnotes, attachments and #tags are handled here;
// - helpers scroll to a source line (every block has `data-line`) or a heading.
//
// Callouts (`<details class="callout">` when foldable) and task checkboxes need no script; diagrams,
// math and code highlighting are enhance.js's, each library loaded when a page first shows one.
//
// The server's `html` is the only HTML this UI ever assigns to innerHTML (besides the output of
// enhance.js's libraries: Mermaid's sanitised SVG, KaTeX's and highlight.js's markup of escaped text):
// render.py escapes the document's own HTML and drops unsafe URLs.

import { api, ApiError } from "./api.js";
import { h } from "./dom.js";
import { toast, toastError } from "./dialogs.js";
import { enhance } from "./enhance.js";
import { routes, navigate } from "./router.js";

const MEDIA = "img[data-file], audio[data-file], video[data-file]";
const MAX_EMBED_DEPTH = 2;
const MAX_EMBEDS = 24;

/** Fetches attachments once per view and hands out blob URLs; `dispose()` revokes them all. */
export class FileCache {
  constructor() {
    this.urls = new Map();
    this.disposed = false;
  }

  url(path) {
    if (!this.urls.has(path)) {
      const promise = api.file(path).then(async (response) => {
        const url = URL.createObjectURL(await response.blob());
        if (this.disposed) URL.revokeObjectURL(url);
        return url;
      });
      promise.catch(() => this.urls.delete(path));
      this.urls.set(path, promise);
    }
    return this.urls.get(path);
  }

  dispose() {
    this.disposed = true;
    for (const promise of this.urls.values()) {
      promise.then((url) => URL.revokeObjectURL(url)).catch(() => {});
    }
    this.urls.clear();
  }
}

/** Parses trusted server HTML into an inert fragment with media sources held back. */
function inertFragment(html) {
  const template = document.createElement("template");
  template.innerHTML = html;
  for (const media of template.content.querySelectorAll(MEDIA)) {
    media.removeAttribute("src");
    media.classList.add("file-loading");
  }
  return template.content;
}

function loadMedia(root, files) {
  for (const media of root.querySelectorAll(MEDIA)) {
    if (media.getAttribute("src")) continue;
    files
      .url(media.dataset.file)
      .then((url) => {
        if (files.disposed) return;
        media.src = url;
        media.classList.remove("file-loading");
      })
      .catch(() => {
        media.classList.remove("file-loading");
        media.classList.add("missing");
        media.title = `Could not load ${media.dataset.file}`;
      });
  }
}

/**
 * Fills `container` with rendered HTML. `options`: `files` (a FileCache), `path` (the document the
 * HTML belongs to, for resolving links), `signal`, `onTag(tag)`, `canCreate` (offer to create a
 * missing note), `depth` (for embeds).
 */
export function fillPreview(container, html, options) {
  container.replaceChildren(inertFragment(html));
  container.classList.add("markdown");
  loadMedia(container, options.files);
  enhance(container, options.signal);
  expandEmbeds(container, options, options.depth || 0, new Set(options.path ? [options.path] : []));
  if (!previewOptions.has(container)) {
    container.addEventListener("click", (event) => onClick(event, container, previewOptions.get(container)));
  }
  previewOptions.set(container, options);
}

const previewOptions = new WeakMap();

/**
 * Expands the note embeds under `root`; `chain` holds the notes (and `note#anchor` sections) being shown
 * around them, so a note that embeds itself, or a loop of embeds, is shown once and said, never again.
 */
async function expandEmbeds(root, options, depth, chain) {
  const embeds = [...root.querySelectorAll(".embed-note[data-path]")].filter(
    (embed) => !embed.dataset.expanded,
  );
  if (depth >= MAX_EMBED_DEPTH) return;
  for (const embed of embeds.slice(0, MAX_EMBEDS)) {
    embed.dataset.expanded = "1";
    const { path, anchor, block } = embed.dataset;
    const part = block ? `^${block}` : anchor;
    const key = part ? `${path}#${part}` : path;
    if (chain.has(key) || (!part && chain.has(path))) {
      embed.append(h("span", { class: "embed-body missing" }, " (embeds itself: not shown again)"));
      continue;
    }
    const body = h("div", { class: "embed-body" }, h("span", { class: "loading" }, "Loading…"));
    embed.append(body);
    try {
      const doc = await api.doc(embed.dataset.path, options.signal);
      if (options.signal && options.signal.aborted) return;
      const fragment = inertFragment(doc.html || "");
      if (block) {
        const named = namedBlock(fragment, block);
        body.replaceChildren(
          named || h("span", { class: "missing" }, `No block ^${block} in ${embed.dataset.path}.`),
        );
      } else {
        const section = anchor ? headingSection(fragment, anchor) : null;
        body.replaceChildren(section || fragment);
      }
      loadMedia(body, options.files);
      enhance(body, options.signal);
      await expandEmbeds(body, options, depth + 1, new Set([...chain, key]));
    } catch (err) {
      if (err && err.name === "AbortError") return;
      body.replaceChildren(
        h("span", { class: "missing" }, `Could not embed ${embed.dataset.path}: ${err.message}`),
      );
    }
  }
}

const HEADINGS = "h1, h2, h3, h4, h5, h6";

/**
 * The block a block id names (`data-block`, set by render.py), as a block embed shows it: a code
 * block with its <pre>, a list item in a list of its kind (an ordered one keeps its number).
 */
function namedBlock(fragment, id) {
  const wanted = id.toLowerCase();
  const found = [...fragment.querySelectorAll("[data-block]")].find(
    (el) => el.dataset.block.toLowerCase() === wanted,
  );
  if (!found) return null;
  const parent = found.parentElement;
  if (found.tagName === "CODE" && parent && parent.tagName === "PRE") return parent;
  if (found.tagName === "LI" && parent) {
    const list = parent.cloneNode(false);
    if (list.tagName === "OL") list.start = (parent.start || 1) + [...parent.children].indexOf(found);
    list.append(found);
    return list;
  }
  return found;
}

function headingMatches(heading, anchor) {
  const wanted = anchor.split("#").pop().trim().toLowerCase();
  const text = heading.textContent.trim().toLowerCase();
  return text === wanted || slug(text) === wanted || slug(text) === slug(wanted);
}

export function slug(text) {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, "")
    .replace(/\s+/g, "-");
}

/** The heading named `anchor` and what follows it up to the next heading of its level or higher. */
function headingSection(fragment, anchor) {
  const heading = [...fragment.querySelectorAll(HEADINGS)].find((el) => headingMatches(el, anchor));
  if (!heading) return null;
  const level = Number(heading.tagName[1]);
  const section = document.createDocumentFragment();
  let node = heading;
  while (node) {
    const next = node.nextElementSibling;
    section.append(node);
    if (next && /^H[1-6]$/.test(next.tagName) && Number(next.tagName[1]) <= level) break;
    node = next;
  }
  return section;
}

/** Elements of the document itself (not of embeds) that carry `data-line`. */
function lineElements(container) {
  return [...container.querySelectorAll("[data-line]")].filter((el) => !el.closest(".embed-body"));
}

/**
 * The rendered block `line` is in: the last one starting on it or before. `footnotes: false` leaves
 * out the footnotes, which render.py moves to the end whatever line they were written on.
 */
export function blockAtLine(container, line, { footnotes = true } = {}) {
  let target = null;
  for (const el of lineElements(container)) {
    if (!footnotes && el.closest(".footnotes")) continue;
    const at = Number(el.dataset.line);
    if (at <= line && (!target || at >= Number(target.dataset.line))) target = el;
  }
  return target;
}

/** Draws the eye to `el` for a moment (the `flash` animation in style.css). */
export function flash(el) {
  el.classList.remove("flash");
  void el.offsetWidth; // restart the animation when the same block flashes again
  el.classList.add("flash");
  el.addEventListener("animationend", () => el.classList.remove("flash"), { once: true });
}

/** Scrolls to the block holding `line` and marks the blocks from `line` to `end`. */
export function scrollToLine(container, line, end = line) {
  const elements = lineElements(container);
  const target = blockAtLine(container, line);
  if (!target) return false;
  for (const el of elements) {
    const at = Number(el.dataset.line);
    if (el === target || (at > line && at <= end && !el.parentElement.closest("[data-line].line-hit"))) {
      el.classList.add("line-hit");
    }
  }
  target.scrollIntoView({ block: "start" });
  return true;
}

/** The document's own heading named `anchor` (its text or its slug), or undefined. */
export function findHeading(container, anchor) {
  return [...container.querySelectorAll(HEADINGS)]
    .filter((el) => !el.closest(".embed-body"))
    .find((el) => headingMatches(el, anchor));
}

export function scrollToHeading(container, anchor) {
  const heading = findHeading(container, anchor);
  if (!heading) return false;
  heading.classList.add("line-hit");
  heading.scrollIntoView({ block: "start" });
  return true;
}

async function onClick(event, container, options) {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey) {
    return;
  }
  const tag = event.target.closest(".tag[data-tag]");
  if (tag && options.onTag) {
    event.preventDefault();
    options.onTag(tag.dataset.tag);
    return;
  }
  const link = event.target.closest("a");
  if (!link || !container.contains(link)) return;
  if (link.dataset.file) {
    event.preventDefault();
    openFile(link.dataset.file, options.files);
  } else if (link.classList.contains("missing")) {
    event.preventDefault();
    await followMissing(link, options);
  } else if (link.dataset.footnote || link.dataset.footnoteBack) {
    event.preventDefault();
    const found = link.dataset.footnote
      ? inSameDocument(container, link, `[data-footnote-id="${CSS.escape(link.dataset.footnote)}"]`)
      : inSameDocument(container, link, `[data-footnote-ref="${CSS.escape(link.dataset.footnoteBack)}"]`);
    if (found) {
      found.scrollIntoView({ block: "center" });
      flash(found);
      const focusable = link.dataset.footnote
        ? found.querySelector(".footnote-backref")
        : found.querySelector("a");
      if (focusable) focusable.focus({ preventScroll: true });
    }
  } else if (link.dataset.anchor && link.getAttribute("href") === "#") {
    event.preventDefault();
    if (!scrollToHeading(container, link.dataset.anchor)) toast(`No heading “${link.dataset.anchor}” here.`);
  }
}

/** The element matching `selector` in the same document as `el`: the page's own, or one embed's. */
function inSameDocument(container, el, selector) {
  const scope = el.closest(".embed-body") || container;
  return [...scope.querySelectorAll(selector)].find(
    (found) => (found.closest(".embed-body") || container) === scope,
  );
}

function openFile(path, files) {
  // Open the tab now (a popup opened after an await is blocked), then point it at the blob.
  const tab = window.open("", "_blank");
  files
    .url(path)
    .then((url) => {
      if (tab) tab.location.href = url;
      else window.location.href = url;
    })
    .catch((err) => {
      if (tab) tab.close();
      toastError(err, `Could not open ${path}`);
    });
}

async function followMissing(link, options) {
  const target = link.dataset.target || "";
  if (!link.classList.contains("wikilink") || !options.path) {
    toast(`“${target}” is not in this folder.`, "error");
    return;
  }
  try {
    const found = await api.resolve(options.path, target);
    navigate(routes.doc(found.path, { h: found.anchor }));
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 404) {
      toastError(err);
      return;
    }
    if (options.onMissing) options.onMissing(target);
    else toast(`No document “${target}” yet.`, "error");
  }
}
