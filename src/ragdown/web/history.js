// A document's History: its versions (who made each and when), a diff between any two or between
// one and the current text, and Restore (a new version, so it can be undone in turn). Shared with
// the Trash view: who made a version in words, and a time both relative and absolute.
//
// Every string from the server (the diff's lines are document text) goes in as text: no HTML.

import { api, ApiError } from "./api.js";
import { badge, fmtAgo, fmtDate, fmtSize, h, isoMs, mount, notice, plural, relPath, spinner } from "./dom.js";
import { confirmDialog, toastDone, toastError } from "./dialogs.js";
import { writeAction } from "./state.js";

const NO_VERSIONS = "No earlier versions yet: a version is kept from the first change on.";

/** Who made a version, in words: the web UI, an agent's tool (and its session), an edit outside. */
export function whoText(version) {
  const who = version.who || "";
  if (who === "web") return "you (web)";
  if (who === "external") return "an edit outside ragdown";
  if (who === "before") return "the text before ragdown's first change";
  if (!who) return "unknown";
  return `an agent (${who}${version.session ? `, session ${version.session}` : ""})`;
}

/** A server time as `5 minutes ago` with the date and time beside it (both in a `<time>`). */
export function timeText(iso) {
  const ms = isoMs(iso);
  if (!Number.isFinite(ms)) return h("span", { class: "muted" }, iso || "");
  return h(
    "time",
    { datetime: iso, class: "when", title: new Date(ms).toISOString() },
    h("span", { class: "when-ago" }, fmtAgo(ms)),
    " ",
    h("span", { class: "when-at muted" }, `(${fmtDate(ms)})`),
  );
}

/** Whether this server keeps a version history (and so a trash); null when that cannot be told. */
export async function historyEnabled(folder) {
  try {
    return Boolean((await api.trash(folder)).enabled);
  } catch {
    return null;
  }
}

/** The toast after a restore: `Restored version 2 (saved as version 5).` */
export function restoredText(answer, newestBefore) {
  const saved = answer.new_version && answer.new_version > (newestBefore || 0);
  return saved
    ? `Restored version ${answer.version} (saved as version ${answer.new_version}).`
    : `Restored version ${answer.version}.`;
}

/**
 * Restores `version` of `path` after asking; `baseHash` (the text the reader sees) guards against a
 * change made meanwhile, and a stale one asks again. Resolves to the answer, or null.
 */
export async function restoreVersion(path, version, { baseHash, title, message } = {}) {
  const sure = await confirmDialog({
    title: title || `Restore version ${version.version}?`,
    message:
      message ||
      `${relPath(path)} gets the text of version ${version.version}, made by ${whoText(version)} on ` +
        `${fmtDate(isoMs(version.at))}. The text it has now stays in its history, so this can be undone.`,
    ok: "Restore",
  });
  if (!sure) return null;
  try {
    return await api.restore(path, version.version, baseHash);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 409 && err.code === "changed")) {
      toastError(err, "Could not restore it");
      return null;
    }
  }
  const anyway = await confirmDialog({
    title: "The document changed meanwhile",
    message: `${relPath(path)} was changed after you opened it. Restore version ${version.version} over that change? The newer text stays in its history.`,
    ok: "Restore anyway",
    danger: true,
  });
  if (!anyway) return null;
  try {
    return await api.restore(path, version.version);
  } catch (err) {
    toastError(err, "Could not restore it");
    return null;
  }
}

/**
 * The History panel of one document: `path`, `hash` (the text shown, for Restore's check and to mark
 * the current version), `deleted` (in the trash: no current text to compare with), `writable`
 * (Restore shown), `onClose()` and `onRestored(answer)`. `el` is the panel; `load()` fills it.
 */
export class HistoryPanel {
  constructor({ path, hash = null, deleted = false, writable = true, onClose = null, onRestored = null }) {
    this.path = path;
    this.hash = hash;
    this.deleted = deleted;
    this.writable = writable;
    this.onClose = onClose;
    this.onRestored = onRestored;
    this.versions = [];
    this.selected = [];
    this.abort = new AbortController();
    this.diffAbort = null;
    this.heading = h("h2", { tabindex: "-1", id: "history-title" }, "History");
    this.body = h("div", { class: "history-body" }, spinner("Loading the versions…"));
    this.diffHost = h("div", { class: "diff-host", id: "history-diff-host" });
    this.el = h(
      "section",
      { class: "history-panel", id: "history-panel", "aria-labelledby": "history-title" },
      h(
        "div",
        { class: "history-head" },
        this.heading,
        onClose
          ? h(
              "button",
              {
                type: "button",
                class: "icon-button",
                id: "history-close",
                "aria-label": "Close the history",
                title: "Close the history",
                onclick: () => onClose(),
              },
              "×",
            )
          : null,
      ),
      this.body,
      this.diffHost,
    );
  }

  dispose() {
    this.abort.abort();
    if (this.diffAbort) this.diffAbort.abort();
  }

  focus() {
    this.heading.focus({ preventScroll: false });
  }

  async load() {
    let answer;
    try {
      answer = await api.history(this.path, this.abort.signal);
    } catch (err) {
      if (err.name === "AbortError") return;
      if (err instanceof ApiError && err.status === 404 && !this.deleted) {
        mount(this.body, h("p", { class: "empty", id: "history-empty" }, NO_VERSIONS));
      } else {
        mount(this.body, notice(err.status === 503 ? "info" : "error", err.message));
      }
      return;
    }
    if (this.abort.signal.aborted) return;
    this.deleted = Boolean(answer.deleted);
    this.versions = answer.versions || [];
    this.selected = [];
    this.render();
  }

  newest() {
    return this.versions.length ? this.versions[0].version : 0;
  }

  render() {
    if (!this.versions.length) {
      mount(this.body, h("p", { class: "empty", id: "history-empty" }, NO_VERSIONS));
      return;
    }
    this.compareButton = h("button", {
      type: "button",
      class: "primary",
      id: "history-compare",
      onclick: () => this.compareSelected(),
    });
    this.compareHint = h("span", { class: "muted history-hint" });
    mount(
      this.body,
      h(
        "p",
        { class: "history-lead muted" },
        `${plural(this.versions.length, "version")}, newest first. `,
        this.deleted
          ? "Select two to compare them."
          : "Select one to compare it with the current text, or two to compare them.",
      ),
      h(
        "ol",
        { class: "version-list", "aria-label": "Versions" },
        this.versions.map((version, index) => this.row(version, this.versions[index + 1] || null)),
      ),
      h("div", { class: "button-row history-compare-row" }, this.compareButton, this.compareHint),
    );
    this.updateCompare();
  }

  row(version, older) {
    const current = !this.deleted && this.hash && version.hash === this.hash;
    const check = h("input", {
      type: "checkbox",
      class: "version-check",
      "aria-label": `Select v${version.version} to compare`,
      onchange: (event) => this.select(version.version, event.target.checked),
    });
    return h(
      "li",
      {
        class: ["version-row", current && "is-current"],
        dataset: { version: version.version, who: version.who, event: version.event },
      },
      h(
        "label",
        { class: "version-pick" },
        check,
        h("span", { class: "version-no" }, `v${version.version}`),
      ),
      h(
        "div",
        { class: "version-info" },
        h(
          "div",
          { class: "version-line" },
          h("span", { class: "version-who" }, whoText(version)),
          badge(version.event || "changed", eventKind(version.event)),
          current ? badge("current text", "on", "This version is the text on disk now") : null,
        ),
        h(
          "div",
          { class: "version-meta muted" },
          timeText(version.at),
          ` · ${fmtSize(version.size)} · ${plural(version.lines, "line")}`,
        ),
      ),
      h(
        "div",
        { class: "version-actions" },
        older
          ? h(
              "button",
              {
                type: "button",
                class: "small version-changes",
                "aria-label": `Changes in v${version.version}`,
                title: `What changed from v${older.version} to v${version.version}`,
                onclick: () => this.showDiff(older.version, version.version),
              },
              "Changes",
            )
          : null,
        this.writable && !current
          ? writeAction(
              h(
                "button",
                {
                  type: "button",
                  class: "small version-restore",
                  "aria-label": `Restore this version (v${version.version})`,
                  onclick: () => this.restore(version),
                },
                "Restore this version",
              ),
            )
          : null,
      ),
    );
  }

  select(number, on) {
    this.selected = this.selected.filter((item) => item !== number);
    if (on) this.selected.push(number);
    // Two at most: a third replaces the one picked first.
    while (this.selected.length > 2) this.selected.shift();
    for (const row of this.body.querySelectorAll(".version-row")) {
      const picked = this.selected.includes(Number(row.dataset.version));
      row.querySelector(".version-check").checked = picked;
      row.classList.toggle("selected", picked);
    }
    this.updateCompare();
  }

  /** The pair the Compare button would show: [from, to], `to` null for the current text. */
  pair() {
    const picked = [...this.selected].sort((a, b) => a - b);
    if (picked.length === 2) return picked;
    if (picked.length === 1 && !this.deleted) return [picked[0], null];
    return null;
  }

  updateCompare() {
    if (!this.compareButton) return;
    const pair = this.pair();
    this.compareButton.disabled = !pair;
    this.compareButton.textContent = pair
      ? `Compare v${pair[0]} with ${pair[1] === null ? "the current text" : `v${pair[1]}`}`
      : "Compare";
    this.compareHint.textContent = pair
      ? ""
      : this.deleted || this.selected.length
        ? "Select two versions."
        : "Select a version, or two.";
  }

  compareSelected() {
    const pair = this.pair();
    if (pair) this.showDiff(pair[0], pair[1]);
  }

  async showDiff(from, to) {
    if (this.diffAbort) this.diffAbort.abort();
    const abort = new AbortController();
    this.diffAbort = abort;
    const label = `v${from} → ${to === null ? "the current text" : `v${to}`}`;
    mount(this.diffHost, spinner("Comparing…"));
    let answer;
    try {
      answer = await api.diff(this.path, from, to ?? undefined, abort.signal);
    } catch (err) {
      if (err.name === "AbortError") return;
      mount(this.diffHost, notice("error", err.message));
      return;
    }
    if (abort.signal.aborted) return;
    const view = diffView(answer.diff || "", label, () => mount(this.diffHost));
    mount(this.diffHost, view);
    view.scrollIntoView({ block: "nearest" });
  }

  async restore(version) {
    const newestBefore = this.newest();
    const answer = await restoreVersion(this.path, version, { baseHash: this.deleted ? null : this.hash });
    if (!answer) return;
    toastDone(restoredText(answer, newestBefore), answer);
    if (this.onRestored) this.onRestored(answer);
  }
}

function eventKind(event) {
  if (event === "restored") return "on";
  if (event === "deleted") return "warn";
  return "";
}

/** A unified diff as lines: added and removed ones marked (their `+`/`-` kept, for colour-blind eyes). */
export function diffView(text, label, onClose = null) {
  const lines = text.split("\n");
  const isDiff = lines[0].startsWith("--- ");
  let added = 0;
  let removed = 0;
  let inHunk = false;
  const rows = [];
  for (const line of isDiff ? lines : []) {
    let kind = "diff-ctx";
    if (line.startsWith("@@")) {
      kind = "diff-hunk";
      inHunk = true;
    } else if (!inHunk) {
      kind = "diff-file";
    } else if (line.startsWith("+")) {
      kind = "diff-add";
      added += 1;
    } else if (line.startsWith("-")) {
      kind = "diff-del";
      removed += 1;
    } else if (line.startsWith("\\")) {
      kind = "diff-note";
    }
    rows.push(h("span", { class: ["diff-line", kind] }, line));
  }
  return h(
    "section",
    { class: "diff-view", id: "history-diff", "aria-label": `Changes: ${label}` },
    h(
      "div",
      { class: "diff-head" },
      h("h3", {}, `Changes: ${label}`),
      isDiff
        ? h(
            "span",
            { class: "diff-stat" },
            h("span", { class: "diff-stat-add", title: "Lines added" }, `+${added}`),
            " ",
            h("span", { class: "diff-stat-del", title: "Lines removed" }, `−${removed}`),
          )
        : null,
      onClose
        ? h(
            "button",
            { type: "button", class: "small", id: "history-diff-close", onclick: onClose },
            "Hide",
          )
        : null,
    ),
    isDiff
      ? h("pre", { class: "diff", tabindex: "0", "aria-label": "Unified diff" }, rows)
      : h("p", { class: "empty diff-same" }, "No differences: the two texts are the same."),
  );
}
