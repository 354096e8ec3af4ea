// The ragdown web UI: the shell (header, folder sidebar, folder pane, content), the token prompt,
// and the router that swaps views. Every view is `render(main, route, ctx)` and answers an object
// with optional `dispose()` (called when it is left), `onState()` (the shared state changed) and
// `focusTarget` (the id to focus instead of the page heading).

import { ApiError, getToken, onReachability, onUnauthorized, setToken, tokenWorks } from "./api.js";
import { badge, byId, fmtNumber, h, isTyping, mount, notice, plural } from "./dom.js";
import { askToken, closeTransient, toastError } from "./dialogs.js";
import { renderEditor } from "./editor.js";
import { FolderPane } from "./folder-pane.js";
import { navigate, reload, routes, startRouter } from "./router.js";
import {
  isAdmin,
  READ_KEY_HINT,
  readKey,
  readOnly,
  refreshFolders,
  refreshStatus,
  state,
  subscribe,
} from "./state.js";
import { renderDoc } from "./view-doc.js";
import { renderFolder } from "./view-folder.js";
import { renderFolderSettings } from "./view-folder-settings.js";
import { renderTrash } from "./view-trash.js";
import { renderChanges } from "./view-changes.js";
import { createFolder, folderBadges, renderHome } from "./view-home.js";
import { renderSettings } from "./view-settings.js";
import { renderUsage } from "./view-usage.js";
import { renderKeys } from "./view-keys.js";
import { renderSearch } from "./view-search.js";

const STATUS_POLL_MS = 10000;
const BUSY_POLL_MS = 2000;

const VIEWS = {
  home: renderHome,
  folder: renderFolder,
  "folder-settings": renderFolderSettings,
  "folder-trash": renderTrash,
  "folder-changes": renderChanges,
  doc: renderDoc,
  edit: renderEditor,
  settings: renderSettings,
  usage: renderUsage,
  keys: renderKeys,
  search: renderSearch,
  "not-found": renderNotFound,
};

const main = byId("main");
const pane = new FolderPane(byId("folder-pane"));
let view = null;
let viewAbort = null;
let route = null;

async function login(reason = null) {
  const token = await askToken({ reason, check: tokenWorks });
  setToken(token);
  byId("sign-out").hidden = false;
  return token;
}

function renderNotFound(host) {
  mount(
    host,
    h(
      "div",
      { class: "page" },
      h("h1", { tabindex: "-1" }, "Not found"),
      h("p", {}, h("a", { href: routes.home() }, "Back to the folders")),
    ),
  );
  return {};
}

async function show(next) {
  if (view && view.dispose) view.dispose();
  if (viewAbort) viewAbort.abort();
  closeTransient();
  view = null;
  const abort = new AbortController();
  viewAbort = abort;
  route = next;

  if (next.folder && state.foldersLoaded && !state.folders.some((folder) => folder.name === next.folder)) {
    await refreshFolders().catch(() => {});
  }
  if (next.folder) {
    pane.show(next.folder, {
      activePath: next.path || null,
      activeLine: next.query.get("line"),
      tag: next.name === "folder" ? next.query.get("tag") : null,
    });
  } else {
    pane.hide();
  }
  byId("workspace").classList.toggle("with-pane", Boolean(next.folder));
  document.body.classList.toggle("doc-open", next.name === "doc" || next.name === "edit");
  drawSidebar();
  drawNav();

  try {
    const result = await VIEWS[next.name](main, next, { signal: abort.signal, pane });
    if (abort.signal.aborted) {
      if (result && result.dispose) result.dispose();
      return;
    }
    view = result || {};
    const heading = main.querySelector("h1");
    document.title = heading ? `${heading.textContent} · ragdown` : "ragdown";
    // Move focus to the new page, unless it is already there (the editor's textarea) or the user
    // is working through the folder pane's list, which stays in place.
    const focus = (view.focusTarget && byId(view.focusTarget)) || heading;
    const active = document.activeElement;
    if (focus && !main.contains(active) && !pane.host.contains(active)) focus.focus({ preventScroll: true });
    if (!next.query.get("line") && !next.query.get("h")) main.scrollTop = 0;
  } catch (err) {
    if (err.name === "AbortError") return;
    mount(main, h("div", { class: "page" }, h("h1", {}, "Something went wrong"), h("p", {}, err.message)));
  }
}

// --- shell --------------------------------------------------------------------------------------

function drawSidebar() {
  const list = byId("folder-list");
  const active = route && route.folder;
  mount(
    list,
    state.folders.map((folder) =>
      h(
        "li",
        {},
        h(
          "a",
          {
            href: routes.folder(folder.name),
            class: ["folder-link", folder.name === active && "active"],
            "aria-current": folder.name === active ? "page" : undefined,
            dataset: { folder: folder.name },
          },
          h("span", { class: "folder-link-title" }, folder.title || folder.name),
          h(
            "span",
            { class: "folder-link-meta" },
            folderBadges(folder),
            h(
              "span",
              { class: "muted" },
              `${plural(folder.files, "file")} · ${plural(folder.chunks, "chunk")}`,
            ),
          ),
        ),
      ),
    ),
  );
  if (state.foldersLoaded && !state.folders.length) {
    list.append(h("li", { class: "empty" }, "No folders yet."));
  }
  const loose = state.looseFiles.length;
  mount(
    byId("loose-files"),
    loose
      ? h(
          "a",
          { href: routes.home(), class: "loose-link" },
          `${plural(loose, "loose file")} outside every folder`,
        )
      : null,
  );
  byId("new-folder").hidden = readOnly() || !isAdmin();
}

function drawNav() {
  for (const link of document.querySelectorAll("[data-nav]")) {
    const current = route && route.name === link.dataset.nav;
    link.classList.toggle("active", current);
    if (current) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
}

function drawServerState() {
  const status = state.status;
  const host = byId("server-state");
  if (!status) {
    mount(host, badge("connecting…", "off"));
    return;
  }
  mount(
    host,
    !status.ready
      ? badge(
          status.error ? "index error" : "loading the model…",
          status.error ? "error" : "busy",
          status.error || undefined,
        )
      : null,
    status.syncing ? badge(indexingText(status.progress), "busy") : null,
    status.read_only
      ? badge("read-only", "warn", "RAGDOWN_READ_ONLY: no uploads, deletes or folder changes")
      : null,
    readKey() && !status.read_only ? badge("read key", "warn", READ_KEY_HINT) : null,
    h(
      "span",
      { class: "muted counts" },
      `${plural(status.files || 0, "file")} · ${plural(status.chunks || 0, "chunk")}`,
    ),
  );
}

/** `indexing 120 of 1,730 files…` while a sync reports how far it is (`…: parsing notes/big.md…` with
 *  what it does now), its step once the files are in (`building the vector index…`), else `indexing…`. */
function indexingText(progress) {
  if (progress && progress.step) return `${progress.step}…`;
  if (!progress || !(progress.files_total > 0)) return "indexing…";
  const at = progress.at ? `: ${progress.at}` : "";
  return `indexing ${fmtNumber(progress.files_done || 0)} of ${fmtNumber(progress.files_total)} files${at}…`;
}

let bannerShown = null;
const DISMISSED_KEY = "ragdown.dismissed"; // the banner notices dismissed in this tab's session

function dismissed() {
  try {
    return new Set(JSON.parse(sessionStorage.getItem(DISMISSED_KEY) || "[]"));
  } catch {
    return new Set();
  }
}

function dismiss(key) {
  const keys = dismissed();
  keys.add(key);
  try {
    sessionStorage.setItem(DISMISSED_KEY, JSON.stringify([...keys]));
  } catch {
    // Storage is off: it stays dismissed until the page is loaded again.
  }
  bannerShown = null;
  drawBanner(keys);
}

/**
 * What every page must say about the server, under the top bar: an index that cannot open, an
 * embedder that cannot load (search on words alone), a failed sync, and the notices that can be
 * dismissed for the session: the offline embedder used instead of the default one, a docs directory
 * that is an Obsidian vault (split into folders: say what to serve instead). Redrawn only
 * when it changes, so an alert is not read out on every poll.
 */
function drawBanner(gone = dismissed()) {
  const status = state.status || {};
  const embedder = !readOnly();
  // [kind, lead, text, link to the embedder setting, dismissable]
  const messages = [
    unreachable
      ? ["error", "The server cannot be reached: ", "what is shown may be out of date; trying again…", false, false]
      : null,
    status.error ? ["error", "The index cannot open: ", status.error, false, false] : null,
    status.embedder_error
      ? ["error", "The embedder cannot load: ", status.embedder_error, embedder, false]
      : null,
    status.embedder_notice ? ["warn", "", status.embedder_notice, embedder, true] : null,
    status.sync_error ? ["error", "The last sync failed: ", status.sync_error, false, false] : null,
    status.docs_notice ? ["warn", "", status.docs_notice, false, true] : null,
  ].filter((message) => message && !(message[4] && gone.has(message[2])));
  const key = JSON.stringify(messages);
  if (key === bannerShown) return;
  bannerShown = key;
  const host = byId("banner");
  host.hidden = !messages.length;
  mount(
    host,
    messages.map(([kind, lead, text, settingsLink, dismissable]) =>
      notice(
        kind,
        h(
          "span",
          { class: "banner-text" },
          lead ? h("strong", {}, lead) : null,
          text,
          settingsLink ? [" ", h("a", { href: routes.settings() }, "Choose the embedder in Settings")] : null,
        ),
        dismissable
          ? h(
              "button",
              {
                type: "button",
                class: "icon-button banner-dismiss",
                "aria-label": "Dismiss this notice",
                title: "Dismiss (for this session)",
                onclick: () => dismiss(text),
              },
              "×",
            )
          : null,
      ),
    ),
  );
}

subscribe(() => {
  drawSidebar();
  pane.onState();
  drawServerState();
  drawBanner();
  if (view && view.onState) view.onState();
});

// Whether the last request found no server at all: a banner says so until one is answered again.
let unreachable = false;
let pollTimer = null;

function setReachable(reachable) {
  if (unreachable === !reachable) return;
  unreachable = !reachable;
  drawBanner();
  if (unreachable) {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(pollStatus, BUSY_POLL_MS);
  }
}

async function pollStatus() {
  const before = state.status;
  let delay = STATUS_POLL_MS;
  try {
    const status = await refreshStatus();
    const changed =
      before &&
      (before.files !== status.files || before.chunks !== status.chunks || before.syncing !== status.syncing);
    if (changed) await refreshFolders().catch(() => {});
    if (before && !before.ready && status.ready && route && route.name !== "edit") reload();
    if (!status.ready || status.syncing) delay = BUSY_POLL_MS;
  } catch {
    // The server is away (the banner says so): keep what is shown, try again soon.
    if (unreachable) delay = BUSY_POLL_MS;
  } finally {
    clearTimeout(pollTimer);
    pollTimer = setTimeout(pollStatus, delay);
  }
}

function wireShell() {
  // Hash routing owns the fragment, so the skip link moves focus itself.
  byId("skip-link").addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
  });
  byId("new-folder").addEventListener("click", createFolder);
  const search = byId("global-search");
  byId("global-search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const query = search.value.trim();
    if (query) navigate(routes.search(query));
  });
  byId("sign-out").addEventListener("click", () => {
    setToken("");
    window.location.reload();
  });
  window.addEventListener("keydown", (event) => {
    if (event.key === "/" && !isTyping(event) && !event.ctrlKey && !event.metaKey && !event.altKey) {
      if (route && route.folder) {
        event.preventDefault();
        pane.focusSearch();
      }
    }
  });
}

async function boot() {
  wireShell();
  drawServerState();
  onUnauthorized((reason) => login(reason));
  let status;
  try {
    status = await refreshStatus();
  } catch (err) {
    mount(
      main,
      h("div", { class: "page" }, h("h1", {}, "The server cannot be reached"), h("p", {}, err.message)),
    );
    setTimeout(() => window.location.reload(), STATUS_POLL_MS);
    return;
  }
  if (status.auth_required) {
    byId("sign-out").hidden = !getToken();
    if (!getToken()) await login();
  }
  try {
    await refreshFolders();
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    toastError(err, "Could not list the folders");
  }
  onReachability(setReachable);
  pollTimer = setTimeout(pollStatus, status.ready && !status.syncing ? STATUS_POLL_MS : BUSY_POLL_MS);
  startRouter(show);
}

boot();
