// A folder's Recent changes: what `ragdown_changes` answers (`GET /api/v1/folders/<f>/changes`, with the
// token the UI holds), newest first: who, when, the event, the size change and the sections it touched,
// each change's diff (from the version before it) one click away, from the web `/api/diff`.
// Every string from the server goes in as text: no HTML.

import { api, request } from "./api.js";
import { h, mount, mountNoSuchFolder, notice, spinner } from "./dom.js";
import { diffView, timeText, whoText } from "./history.js";
import { routes } from "./router.js";
import { folderByName } from "./state.js";

const SPANS = [
  ["1d", "Last day"],
  ["7d", "Last 7 days"],
  ["30d", "Last 30 days"],
];

export async function renderChanges(main, route, { signal }) {
  const name = route.folder;
  const folder = folderByName(name);
  if (!folder) {
    mountNoSuchFolder(main, name);
    return {};
  }
  const since = SPANS.some(([value]) => value === route.query.get("since")) ? route.query.get("since") : "7d";
  const listEl = h("div", { class: "changes-host" }, spinner());
  mount(
    main,
    h(
      "div",
      { class: "page changes-page" },
      h(
        "div",
        { class: "page-head" },
        h("h1", { tabindex: "-1" }, `Recent changes in ${folder.title || folder.name}`),
        h("a", { class: "button", href: routes.folder(name) }, "Back to the folder"),
      ),
      h(
        "p",
        { class: "lead" },
        "Documents created, edited, moved, deleted or restored, newest first, by whom: you here, an agent's tool and session, or an edit outside ragdown. ",
        ...SPANS.map(([value, label]) =>
          value === since
            ? h("strong", { class: "changes-span" }, `${label} `)
            : h("a", { class: "changes-span", href: `${routes.folderChanges(name)}?since=${value}` }, `${label} `),
        ),
      ),
      listEl,
    ),
  );
  let answer;
  try {
    answer = await request("GET", `/api/v1/folders/${encodeURIComponent(name)}/changes`, {
      query: { since, limit: 200 },
      signal,
    });
  } catch (err) {
    if (err.name !== "AbortError") mount(listEl, notice("error", err.message));
    return {};
  }
  if (signal.aborted) return {};
  const changes = answer.changes || [];
  if (!changes.length) {
    mount(listEl, h("p", { class: "empty" }, "No changes in this span."));
    return {};
  }
  mount(
    listEl,
    h(
      "ul",
      { class: "changes-list", id: "changes-list" },
      changes.map((change) => changeItem(name, change)),
    ),
    answer.more ? h("p", { class: "muted" }, "More changes than shown: choose a shorter span.") : null,
  );
  return {};
}

function changeItem(folderName, change) {
  const path = `${folderName}/${change.path}`;
  const diffHost = h("div", { class: "diff-host" });
  const delta = change.delta > 0 ? `+${change.delta}` : String(change.delta);
  const showDiff = async (button) => {
    if (diffHost.childNodes.length) {
      mount(diffHost);
      button.textContent = "Diff";
      return;
    }
    mount(diffHost, spinner("Comparing…"));
    try {
      const answer = await api.diff(path, change.version - 1, change.version);
      mount(
        diffHost,
        diffView(answer.diff || "", `v${change.version - 1} → v${change.version}`, () => {
          mount(diffHost);
          button.textContent = "Diff";
        }),
      );
      button.textContent = "Hide diff";
    } catch (err) {
      mount(diffHost, notice("error", err.message));
    }
  };
  const diffButton =
    change.version > 1
      ? h("button", { type: "button", class: "change-diff", onclick: (event) => showDiff(event.currentTarget) }, "Diff")
      : null;
  return h(
    "li",
    { class: "change", "data-path": change.path, "data-event": change.event },
    h(
      "div",
      { class: "change-head" },
      h("span", { class: `badge change-event change-${change.event}` }, change.event),
      " ",
      change.event === "deleted"
        ? h("span", {}, change.path)
        : h("a", { href: routes.doc(path) }, change.path),
      change.moved_from ? h("span", { class: "muted" }, ` (from ${change.moved_from})`) : null,
      " ",
      diffButton,
    ),
    h(
      "div",
      { class: "change-meta muted" },
      `v${change.version} · ${change.size} bytes (${delta}) · by ${whoText(change)} · `,
      timeText(change.at),
    ),
    change.sections && change.sections.length
      ? h("div", { class: "change-sections" }, `Sections: ${change.sections.join("; ")}`)
      : null,
    diffHost,
  );
}
