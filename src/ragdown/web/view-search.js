// One search over every folder the caller sees (`#/search?q=&folder=`): one ranking, so the scores
// compare, with the folders' counts as facets; a facet narrows the hits to its folder (a search of
// that folder alone, so it is not cut to the wide search's top hits).

import { api } from "./api.js";
import { h, mount, notice, plural, spinner, tagChips } from "./dom.js";
import { navigate, routes } from "./router.js";
import { hitItem } from "./snippet.js";
import { folderByName, state } from "./state.js";

const TOP_K = 50;

/** `[[folder, count], ...]`, most hits first, then by name. */
export function facetsOf(hits) {
  const counts = new Map();
  for (const hit of hits) {
    const folder = hit.path.split("/", 1)[0];
    counts.set(folder, (counts.get(folder) || 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
}

export async function renderSearch(main, route, { signal }) {
  const query = (route.query.get("q") || "").trim();
  const narrow = route.query.get("folder") || "";
  const input = byGlobalInput();
  if (input && document.activeElement !== input) input.value = query;
  const results = h("div", { class: "search-results", id: "search-results" }, query ? spinner("Searching…") : null);
  const facets = h("nav", { class: "facets", id: "search-facets", "aria-label": "Folders with hits" });
  mount(
    main,
    h(
      "div",
      { class: "page search-page" },
      h("h1", { tabindex: "-1" }, query ? `Search: ${query}` : "Search"),
      query
        ? h("div", { class: "search-layout" }, facets, results)
        : h("p", { class: "lead" }, `Type in the search box above to search ${plural(state.folders.length, "folder")}.`),
    ),
  );
  if (!query) return {};
  try {
    const wide = await api.search({ q: query, top_k: TOP_K }, signal);
    const hits = narrow
      ? (await api.search({ q: query, folder: narrow, top_k: TOP_K }, signal)).hits || []
      : wide.hits || [];
    mount(facets, facetLinks(query, narrow, wide.hits || []));
    mount(results, hitsOf(query, narrow, hits));
  } catch (err) {
    if (err.name === "AbortError") return {};
    mount(results, notice("error", err.message));
  }
  return {};
}

function byGlobalInput() {
  return document.getElementById("global-search");
}

function facetLinks(query, narrow, hits) {
  const facets = facetsOf(hits);
  const link = (folder, label, count) =>
    h(
      "a",
      {
        class: ["facet", folder === narrow && "active"],
        href: routes.search(query, folder),
        "aria-current": folder === narrow ? "true" : undefined,
        dataset: { folder },
      },
      h("span", { class: "facet-name" }, label),
      h("span", { class: "facet-count" }, String(count)),
    );
  return [
    h("h2", { class: "facet-head" }, "Folders"),
    link("", "Every folder", hits.length),
    facets.map(([folder, count]) => link(folder, (folderByName(folder) || {}).title || folder, count)),
  ];
}

function hitsOf(query, narrow, hits) {
  const where = narrow ? `in ${(folderByName(narrow) || {}).title || narrow}` : "in every folder";
  if (!hits.length) return h("p", { class: "empty" }, `Nothing found for “${query}” ${where}.`);
  return [
    h("p", { class: "pane-count" }, `${plural(hits.length, "hit")} for “${query}” ${where}`),
    h(
      "ol",
      { class: "hit-list", "aria-label": "Search results" },
      hits.map((hit) =>
        hitItem(hit, {
          query,
          withFolder: true,
          tagChips,
          onTag: (tag) => navigate(`${routes.folder(hit.path.split("/", 1)[0])}?tag=${encodeURIComponent(tag)}`),
        }),
      ),
    ),
  ];
}
