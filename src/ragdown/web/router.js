// Hash routes, so every link works with any server path and the rendered Markdown's own links
// (`#/d/<path>`, made by render.py) navigate without help:
//
//   #/                      the folders
//   #/f/<folder>            a folder: its documents and search
//   #/f/<folder>/settings   a folder's settings and its MCP config
//   #/f/<folder>/trash      a folder's deleted documents
//   #/f/<folder>/changes    a folder's recent changes (?since=1d|7d|30d), each with its diff
//   #/d/<path>?line=&end=&h= a document, scrolled to a line or a heading (&history=1: its History open)
//   #/e/<path>              the editor
//   #/search?q=&folder=     one search over every folder (narrowed to one by a facet)
//   #/settings, #/usage     server settings, the query log
//   #/keys                  Settings → Keys: the scoped API keys
//
// A guard (the editor's unsaved changes) can hold a navigation until it says yes.

const encodePath = (path) => path.split("/").map(encodeURIComponent).join("/");

function decodeSegment(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function parseRoute(hash) {
  const raw = (hash || "").replace(/^#/, "");
  const at = raw.indexOf("?");
  const pathPart = at < 0 ? raw : raw.slice(0, at);
  const query = new URLSearchParams(at < 0 ? "" : raw.slice(at + 1));
  const parts = pathPart
    .split("/")
    .filter((part) => part !== "")
    .map(decodeSegment);
  const [head, ...rest] = parts;
  if (!head) return { name: "home", query };
  if (head === "f" && rest.length === 1) return { name: "folder", folder: rest[0], query };
  if (head === "f" && rest.length === 2 && rest[1] === "settings") {
    return { name: "folder-settings", folder: rest[0], query };
  }
  if (head === "f" && rest.length === 2 && rest[1] === "trash") {
    return { name: "folder-trash", folder: rest[0], query };
  }
  if (head === "f" && rest.length === 2 && rest[1] === "changes") {
    return { name: "folder-changes", folder: rest[0], query };
  }
  if ((head === "d" || head === "e") && rest.length >= 2) {
    return { name: head === "d" ? "doc" : "edit", folder: rest[0], path: rest.join("/"), query };
  }
  if (head === "search" && rest.length === 0) return { name: "search", query };
  if (head === "settings" && rest.length === 0) return { name: "settings", query };
  if (head === "usage" && rest.length === 0) return { name: "usage", query };
  if (head === "keys" && rest.length === 0) return { name: "keys", query };
  return { name: "not-found", query };
}

export const routes = {
  home: () => "#/",
  folder: (name) => `#/f/${encodeURIComponent(name)}`,
  folderSettings: (name) => `#/f/${encodeURIComponent(name)}/settings`,
  folderTrash: (name) => `#/f/${encodeURIComponent(name)}/trash`,
  folderChanges: (name) => `#/f/${encodeURIComponent(name)}/changes`,
  doc: (path, { line, end, h, history } = {}) => {
    const query = new URLSearchParams();
    if (line) query.set("line", String(line));
    if (end) query.set("end", String(end));
    if (h) query.set("h", h);
    if (history) query.set("history", "1");
    const tail = query.toString();
    return `#/d/${encodePath(path)}${tail ? `?${tail}` : ""}`;
  },
  edit: (path) => `#/e/${encodePath(path)}`,
  search: (q, folder = "") => {
    const query = new URLSearchParams({ q });
    if (folder) query.set("folder", folder);
    return `#/search?${query}`;
  },
  settings: () => "#/settings",
  usage: () => "#/usage",
  keys: () => "#/keys",
};

let current = null;
let guard = null;
let bypass = false;
let onRoute = null;
// Where this page's entry sits in the tab's history: each entry is stamped with its position, so a
// guard that says no to Back (or Forward) returns to the entry it left instead of writing the
// editor's address over the one Back went to.
let position = typeof history.state?.ragdown === "number" ? history.state.ragdown : 0;

function stamp(hash) {
  history.replaceState({ ragdown: position }, "", hash);
}

/** `check()` returns true (or a Promise of true) when leaving is fine. Pass null to remove. */
export function setGuard(check) {
  guard = check;
}

export function navigate(hash, { replace = false, force = false } = {}) {
  if (force) bypass = true;
  if (replace) {
    stamp(hash);
    handleChange();
  } else if (window.location.hash === hash) {
    handleChange(true);
  } else {
    window.location.hash = hash;
  }
}

/**
 * Changes the address without rendering it again: for a panel the view opened or closed itself
 * (the document's History), so a reload or a copied link shows it the same way.
 */
export function replaceQuietly(hash) {
  stamp(hash);
  current = hash;
}

/** The current address with one query parameter set (or removed, `value` null), quietly. */
export function setQueryQuietly(name, value) {
  const hash = window.location.hash || "#/";
  const at = hash.indexOf("?");
  const query = new URLSearchParams(at < 0 ? "" : hash.slice(at + 1));
  if (value === null) query.delete(name);
  else query.set(name, value);
  const tail = query.toString();
  replaceQuietly(`${at < 0 ? hash : hash.slice(0, at)}${tail ? `?${tail}` : ""}`);
}

/** Renders the current route again (after a change the view should show). */
export function reload() {
  handleChange(true);
}

export function currentHash() {
  return current;
}

async function handleChange(again = false) {
  const hash = window.location.hash || "#/";
  if (hash === current && !again) return;
  const at = typeof history.state?.ragdown === "number" ? history.state.ragdown : null;
  if (guard && !bypass && current !== null && hash !== current) {
    if (at !== null && at !== position) {
      // Back or Forward to an entry of this tab: it stays as it is; a no goes back to the editor's.
      const leave = await guard();
      if (!leave) {
        history.go(position - at);
        return;
      }
    } else {
      const target = hash;
      history.replaceState(null, "", current);
      const leave = await guard();
      if (!leave) return;
      bypass = true;
      window.location.hash = target;
      return;
    }
  }
  bypass = false;
  current = hash;
  if (at !== null) position = at;
  else if (!again || history.state === null) {
    position += 1;
    stamp(hash);
  }
  if (onRoute) await onRoute(parseRoute(hash));
}

export function startRouter(render) {
  onRoute = render;
  window.addEventListener("hashchange", () => handleChange());
  handleChange(true);
}
