// The open document's outline beside it: its section tree from `/api/outline` (the index's tree, so
// small sections merged into their parent show as its muted key items) as nested links.
//
// A click scrolls the preview to the entry's first line (the nearest rendered block with
// `data-line` at or before it) and flashes it; the links keep real `#/d/…?line=` hrefs, so opening
// one in a new tab or copying it works too. While the document scrolls, the section being read is
// marked `aria-current="location"`. On a narrow page the outline is a collapsed box above the
// document (style.css's container query decides; the toggle button only shows there).

import { api } from "./api.js";
import { h, mount, plainText } from "./dom.js";
import { blockAtLine, findHeading, flash } from "./preview.js";
import { routes } from "./router.js";

/** The part of the viewport's top that counts as "being read" (below a sticky header, say). */
const READING_OFFSET_PX = 80;

/**
 * Fills `host` (a `<nav aria-label="Outline">`) with the outline of `path` once it loads; it stays
 * hidden when the document has no outline worth showing. `preview` is the rendered document.
 * Returns `{ dispose }`.
 */
export function mountOutline(host, { path, preview, signal }) {
  // `pinned`: the entry last jumped to, kept current until the reader scrolls on (near the end of a
  // document its block may not reach the top, and the scroll spy alone would mark the one before).
  const state = { entries: [], current: null, pinned: null, frame: 0, disposed: false, preview };
  host.hidden = true;

  const onScroll = () => {
    if (state.frame || state.disposed) return;
    state.frame = requestAnimationFrame(() => {
      state.frame = 0;
      markCurrent(state);
    });
  };

  load();

  async function load() {
    let tree;
    try {
      tree = (await api.outline(path, signal)).tree;
    } catch {
      return; // no outline (not indexed yet, or the server has none): the document alone
    }
    if (state.disposed || (signal && signal.aborted) || !tree) return;
    const top = topLevel(tree);
    if (countEntries(top) < 2) return; // the title alone is no outline
    const toggle = h(
      "button",
      {
        type: "button",
        class: "outline-toggle",
        "aria-expanded": "false",
        "aria-controls": "outline-tree",
        onclick: () => {
          const open = !host.classList.contains("open");
          host.classList.toggle("open", open);
          toggle.setAttribute("aria-expanded", String(open));
        },
      },
      "Outline",
    );
    mount(
      host,
      h("h2", { class: "outline-head" }, "Outline"),
      toggle,
      h(
        "ol",
        { class: "outline-tree", id: "outline-tree" },
        top.map((node) => entry(node, 0)),
      ),
    );
    host.hidden = false;
    document.addEventListener("scroll", onScroll, { capture: true, passive: true });
    markCurrent(state);
  }

  function entry(node, depth) {
    const line = node.lines[0];
    const title = plainText(node.title) || (node.kind === "preface" ? "Start" : "Untitled");
    const link = h(
      "a",
      {
        class: ["outline-link", `outline-${node.kind}`],
        href: routes.doc(path, { line }),
        dataset: { line, nodeId: node.id },
        onclick: (event) => {
          if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
          event.preventDefault();
          jumpTo(item);
        },
      },
      title,
    );
    const item = { node, link, block: null };
    state.entries.push(item);
    const keys = keyItems(node);
    const children = node.children || [];
    return h(
      "li",
      { class: `outline-depth-${Math.min(depth, 5)}` },
      link,
      keys.length
        ? h(
            "ul",
            { class: "outline-keys", "aria-label": `Also in ${title}` },
            keys.map((key) =>
              h(
                "li",
                {},
                h(
                  "button",
                  {
                    type: "button",
                    class: "outline-key",
                    onclick: () => jumpTo(item, findHeading(preview, key)),
                  },
                  plainText(key),
                ),
              ),
            ),
          )
        : null,
      children.length
        ? h(
            "ol",
            {},
            children.map((child) => entry(child, depth + 1)),
          )
        : null,
    );
  }

  function jumpTo(item, block = targetOf(item, preview)) {
    if (!block) return;
    block.scrollIntoView({ block: "start" });
    flash(block);
    state.pinned = { item, at: scrollPosition(preview) };
    setCurrent(state, item);
    // Keyboard users land in the document: the block takes focus without showing a ring.
    if (!block.hasAttribute("tabindex")) block.setAttribute("tabindex", "-1");
    block.focus({ preventScroll: true });
  }

  return {
    dispose() {
      state.disposed = true;
      if (state.frame) cancelAnimationFrame(state.frame);
      document.removeEventListener("scroll", onScroll, { capture: true });
    },
  };
}

/** The nodes the outline lists first: the document's sections, not the document node itself. */
function topLevel(tree) {
  if (tree.kind !== "document") return [tree];
  const children = tree.children || [];
  if (children.length) {
    // A document that is one `# Title` section: list what is under the title, not the title alone.
    if (children.length === 1 && (children[0].children || []).length) return [children[0]];
    return children;
  }
  return (tree.key_items || []).length ? [tree] : [];
}

/** A merged node's headings, less the first when it is the node's own (a short document's title). */
function keyItems(node) {
  const keys = node.key_items || [];
  return keys.length && keys[0] === node.title ? keys.slice(1) : keys;
}

function countEntries(nodes) {
  return nodes.reduce((sum, node) => sum + 1 + keyItems(node).length + countEntries(node.children || []), 0);
}

function targetOf(item, preview) {
  if (!item.block || !item.block.isConnected) {
    item.block = blockAtLine(preview, item.node.lines[0], { footnotes: false });
  }
  return item.block;
}

function setCurrent(state, item) {
  if (state.current === item) return;
  if (state.current) {
    state.current.link.classList.remove("current");
    state.current.link.removeAttribute("aria-current");
  }
  state.current = item;
  if (!item) return;
  item.link.classList.add("current");
  item.link.setAttribute("aria-current", "location");
  keepVisible(item.link);
}

/** The last entry whose block starts above the reading line is the one being read. */
function markCurrent(state) {
  if (!state.entries.length || !state.preview) return;
  if (state.pinned) {
    if (Math.abs(scrollPosition(state.preview) - state.pinned.at) < 2) {
      setCurrent(state, state.pinned.item);
      return;
    }
    state.pinned = null;
  }
  const scroller = scrollerOf(state.preview);
  const reading = Math.max(0, scroller ? scroller.getBoundingClientRect().top : 0) + READING_OFFSET_PX;
  let current = null;
  for (const item of state.entries) {
    const block = targetOf(item, state.preview);
    if (!block) continue;
    if (block.getBoundingClientRect().top <= reading) current = item;
    else break;
  }
  setCurrent(state, current || state.entries[0]);
}

/** The element the document scrolls in (the content column), or null when the page itself scrolls. */
function scrollerOf(el) {
  for (let node = el.parentElement; node && node !== document.body; node = node.parentElement) {
    const overflow = getComputedStyle(node).overflowY;
    if ((overflow === "auto" || overflow === "scroll") && node.scrollHeight > node.clientHeight) return node;
  }
  return null;
}

function scrollPosition(el) {
  const scroller = scrollerOf(el);
  return scroller ? scroller.scrollTop : window.scrollY;
}

/** Scrolls the outline's own box (not the page) so the current entry stays in sight. */
function keepVisible(link) {
  const box = link.closest(".doc-outline");
  if (!box || box.scrollHeight <= box.clientHeight) return;
  const boxRect = box.getBoundingClientRect();
  const rect = link.getBoundingClientRect();
  if (rect.top < boxRect.top) box.scrollTop -= boxRect.top - rect.top + 8;
  else if (rect.bottom > boxRect.bottom) box.scrollTop += rect.bottom - boxRect.bottom + 8;
}
