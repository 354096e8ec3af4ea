// The rendered Markdown from the server (render.py), brought to life in the page:
//
// - it is parsed in an inert <template> first, so no image starts loading without the token;
//   attachments are then fetched with the bearer header and shown through blob URLs;
// - note embeds (`![[Note]]`) are expanded in place, two levels deep;
// - clicks on missing wikilinks, in-page anchors, attachments and #tags are handled here;
// - helpers scroll to a source line (every block has `data-line`) or a heading.
//
// The server's `html` is the only HTML this UI ever assigns to innerHTML: render.py escapes the
// document's own HTML and drops unsafe URLs.

import { api, ApiError } from "./api.js";
import { h } from "./dom.js";
import { toast, toastError } from "./dialogs.js";
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
  expandEmbeds(container, options, options.depth || 0);
  if (!previewOptions.has(container)) {
    container.addEventListener("click", (event) => onClick(event, container, previewOptions.get(container)));
  }
  previewOptions.set(container, options);
}

const previewOptions = new WeakMap();

async function expandEmbeds(root, options, depth) {
  const embeds = [...root.querySelectorAll(".embed-note[data-path]")].filter(
    (embed) => !embed.dataset.expanded,
  );
  if (depth >= MAX_EMBED_DEPTH) return;
  for (const embed of embeds.slice(0, MAX_EMBEDS)) {
    embed.dataset.expanded = "1";
    const body = h("div", { class: "embed-body" }, h("span", { class: "loading" }, "Loading…"));
    embed.append(body);
    try {
      const doc = await api.doc(embed.dataset.path, options.signal);
      if (options.signal && options.signal.aborted) return;
      const fragment = inertFragment(doc.html || "");
      const section = embed.dataset.anchor ? headingSection(fragment, embed.dataset.anchor) : null;
      body.replaceChildren(section || fragment);
      loadMedia(body, options.files);
      await expandEmbeds(body, options, depth + 1);
    } catch (err) {
      if (err && err.name === "AbortError") return;
      body.replaceChildren(
        h("span", { class: "missing" }, `Could not embed ${embed.dataset.path}: ${err.message}`),
      );
    }
  }
}

const HEADINGS = "h1, h2, h3, h4, h5, h6";

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

/** Scrolls to the block holding `line` and marks the blocks from `line` to `end`. */
export function scrollToLine(container, line, end = line) {
  const elements = lineElements(container);
  let target = null;
  for (const el of elements) {
    const at = Number(el.dataset.line);
    if (at <= line && (!target || at >= Number(target.dataset.line))) target = el;
  }
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

export function scrollToHeading(container, anchor) {
  const heading = [...container.querySelectorAll(HEADINGS)]
    .filter((el) => !el.closest(".embed-body"))
    .find((el) => headingMatches(el, anchor));
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
  } else if (link.dataset.anchor && link.getAttribute("href") === "#") {
    event.preventDefault();
    if (!scrollToHeading(container, link.dataset.anchor)) toast(`No heading “${link.dataset.anchor}” here.`);
  }
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
