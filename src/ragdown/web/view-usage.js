// Settings → Usage: the query log summed up. Totals, the gaps (searches whose best hit was under the
// minimum score), the hook's injection rate, and the documents read most.

import { api } from "./api.js";
import { fmtDate, fmtNumber, fmtPercent, fmtSimilarity, h, mount, notice, spinner } from "./dom.js";
import { confirmDialog, toast, toastError } from "./dialogs.js";
import { reload, routes } from "./router.js";
import { readOnly, refreshStatus, state } from "./state.js";

export async function renderUsage(main, _route, { signal }) {
  mount(main, h("div", { class: "page" }, h("h1", { tabindex: "-1" }, "Usage"), spinner()));
  let answer;
  try {
    answer = await api.queryLog();
  } catch (err) {
    if (err.name !== "AbortError") {
      mount(
        main,
        h("div", { class: "page" }, h("h1", { tabindex: "-1" }, "Usage"), notice("error", err.message)),
      );
    }
    return {};
  }
  if (signal.aborted) return {};
  const summary = answer.summary || {};
  const folders = new Set(state.folders.map((folder) => folder.name));
  const docLink = (path) =>
    folders.has(String(path).split("/")[0])
      ? h("a", { href: routes.doc(path) }, path)
      : h("span", { class: "mono" }, path);

  mount(
    main,
    h(
      "div",
      { class: "page usage-page" },
      h(
        "div",
        { class: "page-head" },
        h("h1", { tabindex: "-1" }, "Usage"),
        h("button", { type: "button", class: "danger", id: "clear-log", onclick: clearLog }, "Empty the log"),
      ),
      answer.enabled
        ? h(
            "p",
            { class: "lead" },
            "From the query log (query-log.jsonl in the data dir): every search, hook call and read. It holds queries, never document text.",
          )
        : notice(
            "info",
            "The query log is off, so nothing new is recorded. ",
            readOnly()
              ? "Turn it on with RAGDOWN_QUERY_LOG=true."
              : h("button", { type: "button", class: "small", onclick: enableLog }, "Turn it on"),
          ),
      h(
        "div",
        { class: "stat-grid" },
        stat("Searches", fmtNumber(summary.searches), "ragdown_recall and searches here"),
        stat("Hook calls", fmtNumber(summary.hook_calls), "ragdown_context calls that searched"),
        stat("Injection rate", fmtPercent(summary.hook_injection_rate), "of hook calls injected something"),
        stat("Reads", fmtNumber(summary.reads), "ragdown_read_doc calls"),
        stat(
          "Reads after a search",
          fmtNumber(summary.reads_after_search),
          "read within 10 minutes of a search showing it",
        ),
      ),
      h("h2", {}, "Gaps"),
      h(
        "p",
        { class: "field-help" },
        "Searches whose best hit scored under the hook's minimum score: what the documents may be missing.",
      ),
      (summary.gaps || []).length
        ? h(
            "table",
            { class: "data-table" },
            h(
              "thead",
              {},
              h("tr", {}, h("th", {}, "Query"), h("th", {}, "Best similarity"), h("th", {}, "When")),
            ),
            h(
              "tbody",
              {},
              summary.gaps.map((gap) =>
                h(
                  "tr",
                  {},
                  h("td", {}, gap.query ?? ""),
                  h("td", { class: "num" }, fmtSimilarity(gap.best_similarity)),
                  h("td", {}, typeof gap.at === "number" ? fmtDate(gap.at * 1000) : String(gap.at ?? "")),
                ),
              ),
            ),
          )
        : h("p", { class: "empty" }, "No gaps recorded."),
      h("h2", {}, "Most read"),
      (summary.top_read || []).length
        ? h(
            "table",
            { class: "data-table" },
            h(
              "thead",
              {},
              h("tr", {}, h("th", {}, "Document"), h("th", {}, "Reads"), h("th", {}, "After a search")),
            ),
            h(
              "tbody",
              {},
              summary.top_read.map((item) =>
                h(
                  "tr",
                  {},
                  h("td", {}, docLink(item.folder ? `${item.folder}/${item.path}` : item.path)),
                  h("td", { class: "num" }, fmtNumber(item.reads)),
                  h("td", { class: "num" }, fmtNumber(item.after_search)),
                ),
              ),
            ),
          )
        : h("p", { class: "empty" }, "No reads recorded."),
      h(
        "p",
        { class: "field-help" },
        "HTTP MCP has no session, so a read after a search is a hint that a hit was used, not proof.",
      ),
    ),
  );
  return {};
}

function stat(label, value, help) {
  return h(
    "div",
    { class: "stat" },
    h("span", { class: "stat-value" }, value),
    h("span", { class: "stat-label" }, label),
    h("span", { class: "field-help" }, help),
  );
}

async function clearLog() {
  const sure = await confirmDialog({
    title: "Empty the query log?",
    message: "Every recorded search, hook call and read is deleted.",
    ok: "Empty it",
    danger: true,
  });
  if (!sure) return;
  try {
    await api.clearQueryLog();
    toast("The query log is empty.", "success");
    reload();
  } catch (err) {
    toastError(err);
  }
}

async function enableLog() {
  try {
    await api.patchSettings({ query_log: true });
    await refreshStatus().catch(() => {});
    toast("The query log is on.", "success");
    reload();
  } catch (err) {
    toastError(err);
  }
}
