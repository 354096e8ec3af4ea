// Settings → Server: each tuning value, where it comes from (saved here or its variable), saving
// and resetting it, and the warning for a hook minimum score at or under the embedder's unrelated
// score.

import { api } from "./api.js";
import { fmtNumber, h, mount, notice } from "./dom.js";
import { confirmDialog, toast, toastError } from "./dialogs.js";
import { routes } from "./router.js";
import { readOnly, refreshStatus, state } from "./state.js";

export const SERVER_FIELDS = [
  {
    key: "embedder",
    label: "Embedder",
    kind: "text",
    variable: "RAGDOWN_EMBEDDER",
    options: ["granite-small", "bge-small", "embeddinggemma", "hash"],
    help: "granite-small, bge-small, embeddinggemma or openai:<model>. A new one is loaded first, then the index is rebuilt with it.",
  },
  {
    key: "watch",
    label: "Watch the folders",
    kind: "bool",
    variable: "RAGDOWN_WATCH",
    help: "Without a watcher the index syncs on start, after writes made here and on ragdown_reindex.",
  },
  {
    key: "root_mcp",
    label: "Serve every folder at /mcp",
    kind: "bool",
    variable: "RAGDOWN_ROOT_MCP",
    help: "One MCP server, ragdown, over every folder with MCP on: the only place an agent can make a folder.",
  },
  {
    key: "text_limit",
    label: "Characters per hit",
    kind: "int",
    min: 1,
    variable: "RAGDOWN_TEXT_LIMIT",
    help: "How much of each hit ragdown_recall shows as text; every cut names the read that returns the rest.",
  },
  {
    key: "max_per_document",
    label: "Sections per document",
    kind: "int",
    min: 0,
    variable: "RAGDOWN_MAX_PER_DOCUMENT",
    help: "Most sections of one document a search returns and the hook injects. 0 is no cap.",
  },
  {
    key: "follow_links",
    label: "Follow links",
    kind: "int",
    min: 0,
    variable: "RAGDOWN_FOLLOW_LINKS",
    help: "How many of a search's best hits have the wikilinks of their section followed. 0 is off.",
  },
  {
    key: "query_log",
    label: "Query log",
    kind: "bool",
    variable: "RAGDOWN_QUERY_LOG",
    help: "Log every search, hook call and read to query-log.jsonl in the data dir, for Usage. It never leaves this server.",
  },
];

export const HOOK_FIELDS = [
  {
    key: "top_k",
    label: "Sections per prompt",
    kind: "int",
    min: 1,
    step: "1",
    variable: "RAGDOWN_HOOK_TOP_K",
    help: "Most sections ragdown_context returns for one prompt.",
  },
  {
    key: "min_score",
    label: "Minimum score",
    kind: "float",
    min: 0,
    max: 1,
    step: "0.01",
    variable: "RAGDOWN_HOOK_MIN_SCORE",
    help: "Lowest cosine similarity injected. It is on the embedder's own scale: unset, it follows the embedder.",
  },
  {
    key: "min_ratio",
    label: "Minimum ratio",
    kind: "float",
    min: 0,
    max: 1,
    step: "0.01",
    variable: "RAGDOWN_HOOK_MIN_RATIO",
    help: "Lowest share of the best hit's similarity a hit may have and still be injected. 0 turns it off.",
  },
  {
    key: "max_chars",
    label: "Characters per prompt",
    kind: "int",
    min: 1,
    step: "1",
    variable: "RAGDOWN_HOOK_MAX_CHARS",
    help: "Most characters ragdown_context returns for one prompt.",
  },
];

/** `{ value }` (null for an empty field) or `{ error }`. */
export function parseSetting(field, raw) {
  const text = String(raw ?? "").trim();
  if (field.kind === "bool") return { value: Boolean(raw) };
  if (text === "") return { value: null };
  if (field.kind === "text") return { value: text };
  const number = Number(text);
  if (!Number.isFinite(number)) return { error: `${field.label}: give a number.` };
  if (field.kind === "int" && !Number.isInteger(number))
    return { error: `${field.label}: give a whole number.` };
  if (field.min !== undefined && number < field.min)
    return { error: `${field.label}: at least ${field.min}.` };
  if (field.max !== undefined && number > field.max)
    return { error: `${field.label}: at most ${field.max}.` };
  return { value: number };
}

/** The warning for a minimum score at or under the embedder's unrelated score, or null. */
export function minScoreWarning(minScore, unrelated, who = "The hook's minimum score") {
  if (typeof minScore !== "number" || typeof unrelated !== "number" || minScore > unrelated) return null;
  return notice(
    "warn",
    h("strong", {}, "Minimum score too low. "),
    `${who} (${minScore}) is at or below the embedder's unrelated score (${unrelated}): prompts that have nothing to do with the documents, such as "tell me a joke", will get documents injected. Raise it above ${unrelated}, or unset it to follow the embedder.`,
  );
}

function valueOf(source, field, hook) {
  if (!source) return undefined;
  return hook ? (source.hook || {})[field.key] : source[field.key];
}

function shown(value) {
  if (value === null || value === undefined) return "unset";
  if (typeof value === "boolean") return value ? "on" : "off";
  return String(value);
}

export async function renderSettings(main) {
  const draw = () => {
    const status = state.status || {};
    const settings = status.settings || {};
    const locked = readOnly();
    const controls = new Map();

    const row = (field, hook) => {
      const effective = valueOf(settings, field, hook);
      const saved = valueOf(settings.saved, field, hook);
      const env = valueOf(settings.env, field, hook);
      const id = `setting-${hook ? "hook-" : ""}${field.key}`;
      let control;
      if (field.kind === "bool") {
        control = h("input", {
          type: "checkbox",
          role: "switch",
          id,
          checked: Boolean(effective),
          disabled: locked,
        });
      } else {
        control = h("input", {
          id,
          type: field.kind === "text" ? "text" : "number",
          step: field.step,
          min: field.min,
          max: field.max,
          value: effective ?? "",
          list: field.options ? `${id}-options` : undefined,
          disabled: locked,
          spellcheck: "false",
        });
      }
      controls.set(id, { field, hook, control, effective });
      const isSaved = saved !== undefined && saved !== null;
      const source = isSaved
        ? `Saved here; ${field.variable} is ${shown(env)}`
        : env === null || env === undefined
          ? field.key === "min_score"
            ? "Follows the embedder"
            : "Default"
          : `From ${field.variable}`;
      return h(
        "div",
        { class: "setting-row", dataset: { setting: id } },
        h(
          "div",
          { class: "setting-text" },
          h("label", { for: id, class: "setting-label" }, field.label),
          h("span", { class: "field-help" }, field.help),
        ),
        h(
          "div",
          { class: "setting-control" },
          field.kind === "bool"
            ? h(
                "label",
                { class: "switch", for: id },
                control,
                h("span", { class: "switch-track", "aria-hidden": "true" }),
                h("span", {}, shown(effective)),
              )
            : control,
          field.options
            ? h(
                "datalist",
                { id: `${id}-options` },
                field.options.map((option) => h("option", { value: option })),
              )
            : null,
        ),
        h(
          "div",
          { class: "setting-source" },
          h("span", { class: ["setting-origin", isSaved && "saved"] }, source),
          isSaved && !locked
            ? h(
                "button",
                {
                  type: "button",
                  class: "small",
                  title: `Go back to ${field.variable}`,
                  onclick: () => save(hook ? { hook: { [field.key]: null } } : { [field.key]: null }),
                },
                "Reset",
              )
            : null,
        ),
      );
    };

    const hook = settings.hook || {};
    const folderWarnings = state.folders
      .filter((folder) => folder.hook && typeof folder.hook.min_score === "number")
      .map((folder) =>
        minScoreWarning(
          folder.hook.min_score,
          hook.unrelated_score,
          `The folder ${folder.name}'s own minimum score`,
        ),
      )
      .filter(Boolean);

    const form = h(
      "form",
      {
        class: "settings-form",
        onsubmit: async (event) => {
          event.preventDefault();
          const patch = {};
          for (const { field, hook: isHook, control, effective } of controls.values()) {
            const parsed = parseSetting(field, field.kind === "bool" ? control.checked : control.value);
            if (parsed.error) {
              toast(parsed.error, "error");
              control.focus();
              return;
            }
            if (parsed.value === (effective ?? null)) continue;
            if (isHook) patch.hook = { ...(patch.hook || {}), [field.key]: parsed.value };
            else patch[field.key] = parsed.value;
          }
          if (!Object.keys(patch).length) {
            toast("Nothing changed.");
            return;
          }
          if ("embedder" in patch) {
            const sure = await confirmDialog({
              title: "Change the embedder?",
              message: `The index is rebuilt with ${patch.embedder || "the variable's embedder"}: searches answer from what is indexed so far until it is done. The hook's minimum score follows the new model unless one is set.`,
              ok: "Change it",
            });
            if (!sure) return;
          }
          await save(patch);
        },
      },
      h("h2", {}, "Search and indexing"),
      SERVER_FIELDS.map((field) => row(field, false)),
      h("h2", {}, "Hook (ragdown_context) defaults"),
      h(
        "p",
        { class: "field-help" },
        "A folder's own hook settings win over these, and an argument on the call wins over both.",
      ),
      minScoreWarning(hook.min_score, hook.unrelated_score),
      HOOK_FIELDS.map((field) => row(field, true)),
      typeof hook.unrelated_score === "number"
        ? h(
            "p",
            { class: "field-help" },
            `The embedder's strongest unrelated prompt scores ${hook.unrelated_score}.`,
          )
        : null,
      locked
        ? null
        : h(
            "div",
            { class: "button-row sticky-actions" },
            h("button", { type: "submit", class: "primary", id: "save-settings" }, "Save changes"),
          ),
    );

    mount(
      main,
      h(
        "div",
        { class: "page settings-page" },
        h("div", { class: "page-head" }, h("h1", { tabindex: "-1" }, "Server settings")),
        h(
          "p",
          { class: "lead" },
          "What is saved here is kept in .ragdown-server.json in the docs directory and wins over the variable of the same setting until you reset it. The docs directory, read-only mode and the token stay variables.",
        ),
        locked
          ? notice(
              "info",
              "The server is read-only (RAGDOWN_READ_ONLY): server settings cannot change here. Folder settings still can.",
            )
          : null,
        folderWarnings,
        serverFacts(status),
        form,
      ),
    );
  };

  async function save(patch) {
    try {
      const answer = await api.patchSettings(patch);
      if (state.status) state.status.settings = answer.settings;
      toast("Settings saved.", "success", 2500);
      await refreshStatus().catch(() => {});
      draw();
    } catch (err) {
      toastError(err, "Could not save the settings");
    }
  }

  draw();
  await refreshStatus().catch(() => {});
  draw();
  return { onState: draw };
}

function serverFacts(status) {
  const facts = [
    ["Version", status.version],
    ["Embedder loaded", status.embedder || (status.ready ? "—" : "loading…")],
    [
      "Index",
      `${fmtNumber(status.files)} files, ${fmtNumber(status.chunks)} chunks${status.syncing ? " (syncing)" : ""}`,
    ],
    [
      "This process",
      status.role === "reader" ? "a reader (another process owns the index)" : status.role || "—",
    ],
    ["Token", status.auth_required ? "required" : "not required (SECURE_LOCAL_NET)"],
  ];
  return h(
    "section",
    { class: "section" },
    h("h2", {}, "Server"),
    status.error ? notice("error", status.error) : null,
    status.embedder_error ? notice("error", `Embedder: ${status.embedder_error}`) : null,
    h(
      "dl",
      { class: "facts" },
      facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value ?? "—")]),
    ),
    h("p", {}, h("a", { href: routes.usage() }, "Usage: what searches found, and what was read")),
  );
}
