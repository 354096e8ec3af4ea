// Settings → Server: each tuning value, where it comes from (saved here, its variable, the default, or
// for the embedder the offline model standing in for the default), saving
// and resetting it, and the warning for a hook minimum score at or under the embedder's unrelated
// score. The fields are the server's own schema (`/api/status` → settings.schema): their labels,
// help, variables, kinds and bounds are exactly what the server checks.

import { api } from "./api.js";
import { fmtNumber, h, mount, notice } from "./dom.js";
import { confirmDialog, toast, toastError } from "./dialogs.js";
import { routes } from "./router.js";
import { isAdmin, readOnly, refreshStatus, state } from "./state.js";

const HOOK_PREFIX = "hook.";
const STEPS = { int: "1", float: "0.01" };

/**
 * The fields the settings pages edit, from a status's `settings.schema`: `{ key, hook, label, help,
 * variable, kind, min, max, step, options, default, where }`. A hook field's key is the one under
 * `hook` (`top_k` for `hook.top_k`), as in `.ragdown-server.json` and a folder's `.ragdown.json`.
 */
export function settingFields(status = state.status) {
  const schema = (status && status.settings && status.settings.schema) || [];
  return schema.map((entry) => {
    const hook = entry.key.startsWith(HOOK_PREFIX);
    return {
      key: hook ? entry.key.slice(HOOK_PREFIX.length) : entry.key,
      hook,
      label: entry.label || entry.key,
      help: entry.help || "",
      variable: entry.variable,
      kind: entry.kind,
      min: typeof entry.min === "number" ? entry.min : undefined,
      max: typeof entry.max === "number" ? entry.max : undefined,
      step: STEPS[entry.kind],
      options: Array.isArray(entry.options) && entry.options.length ? entry.options : undefined,
      default: entry.default ?? null,
      where: entry.where || [],
    };
  });
}

/** The server-wide settings (not the hook's). */
export function serverFields(status = state.status) {
  return settingFields(status).filter((field) => !field.hook);
}

/** The hook's settings; `{ folder: true }` keeps those a folder may set too. */
export function HOOK_FIELDS(status = state.status, { folder = false } = {}) {
  return settingFields(status).filter((field) => field.hook && (!folder || field.where.includes("folder")));
}

function boundText(field) {
  if (field.min !== undefined && field.max !== undefined) return `between ${field.min} and ${field.max}`;
  if (field.min !== undefined) return `at least ${field.min}`;
  if (field.max !== undefined) return `at most ${field.max}`;
  return "";
}

/** `{ value }` (null for an empty field) or `{ error }`, checked against the field's kind and bounds. */
export function parseSetting(field, raw) {
  if (field.kind === "bool") return { value: Boolean(raw) };
  const text = String(raw ?? "").trim();
  if (text === "") return { value: null };
  if (field.kind === "choice") {
    const value = text.toLowerCase();
    if (field.options && !field.options.includes(value))
      return { error: `${field.label}: one of ${field.options.join(", ")}.` };
    return { value };
  }
  if (field.kind !== "int" && field.kind !== "float") return { value: text };
  const what = field.kind === "int" ? "a whole number" : "a number";
  const bounds = boundText(field);
  const wanted = { error: `${field.label}: give ${what}${bounds ? ` ${bounds}` : ""}.` };
  const number = Number(text);
  if (!Number.isFinite(number)) return wanted;
  if (field.kind === "int" && !Number.isInteger(number)) return wanted;
  if (field.min !== undefined && number < field.min) return wanted;
  if (field.max !== undefined && number > field.max) return wanted;
  return { value: number };
}

/** Marks a control as refused (with the message under it) or, with no message, as fine again. */
export function markInvalid(control, message) {
  const id = `${control.id}-error`;
  let slot = document.getElementById(id);
  if (!message) {
    control.removeAttribute("aria-invalid");
    control.removeAttribute("aria-describedby");
    if (slot) slot.remove();
    return;
  }
  if (!slot) {
    slot = h("span", { class: "field-error", id });
    control.closest(".setting-control, .field")?.append(slot);
  }
  slot.textContent = message;
  control.setAttribute("aria-invalid", "true");
  control.setAttribute("aria-describedby", id);
}

/** The control of one field: a switch's checkbox, a select for a choice, else an input. */
export function settingControl(field, id, value, { disabled = false, placeholder } = {}) {
  if (field.kind === "bool") {
    return h("input", { type: "checkbox", role: "switch", id, checked: Boolean(value), disabled });
  }
  if (field.kind === "choice" && field.options) {
    const select = h(
      "select",
      { id, disabled },
      h("option", { value: "" }, placeholder || "unset"),
      field.options.map((option) => h("option", { value: option }, option)),
    );
    select.value = value ?? "";
    return select;
  }
  const numeric = field.kind === "int" || field.kind === "float";
  return h("input", {
    id,
    type: numeric ? "number" : "text",
    step: field.step,
    min: field.min,
    max: field.max,
    value: value ?? "",
    placeholder,
    list: field.options ? `${id}-options` : undefined,
    disabled,
    spellcheck: "false",
    autocomplete: "off",
  });
}

/** The suggestions of a free-text field with options (the embedder), for its `list`. */
export function settingOptions(field, id) {
  if (!field.options || field.kind === "choice" || field.kind === "bool") return null;
  return h(
    "datalist",
    { id: `${id}-options` },
    field.options.map((option) => h("option", { value: option })),
  );
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

function valueOf(source, field) {
  if (!source) return undefined;
  return field.hook ? (source.hook || {})[field.key] : source[field.key];
}

function shown(value) {
  if (value === null || value === undefined) return "unset";
  if (typeof value === "boolean") return value ? "on" : "off";
  return String(value);
}

function controlValue(field, control) {
  return field.kind === "bool" ? control.checked : control.value;
}

export async function renderSettings(main, _route, { signal }) {
  let facts = null;
  let drawn = null;

  // What the form shows: a status poll that changes none of it only refreshes the facts, so an
  // edit in progress is kept.
  const signature = () =>
    JSON.stringify([
      (state.status && state.status.settings) || null,
      readOnly(),
      isAdmin(),
      state.folders.map((folder) => [folder.name, folder.hook && folder.hook.min_score]),
    ]);

  // A save or status answered after the user has gone to another page must not draw this one over it.
  const draw = () => {
    if (signal.aborted) return;
    const status = state.status || {};
    const settings = status.settings || {};
    const locked = readOnly() || !isAdmin();
    const controls = new Map();
    drawn = signature();

    const row = (field) => {
      const effective = valueOf(settings, field);
      const saved = valueOf(settings.saved, field);
      const env = valueOf(settings.env, field);
      const id = `setting-${field.hook ? "hook-" : ""}${field.key}`;
      const control = settingControl(field, id, effective, { disabled: locked });
      control.addEventListener(field.kind === "bool" || field.kind === "choice" ? "change" : "input", () =>
        markInvalid(control, null),
      );
      controls.set(id, { field, control, effective });
      const isSaved = saved !== undefined && saved !== null;
      // Where the value in effect comes from, as the server says (`sources`; a hook value by its layers).
      const from = field.hook ? null : (settings.sources || {})[field.key];
      const offline = from === "offline";
      const unset = env === null || env === undefined;
      const source = isSaved
        ? unset && field.default !== null && field.default !== undefined
          ? `Saved here; the default is ${shown(field.default)}`
          : `Saved here; ${field.variable} is ${shown(env)}`
        : offline
          ? `Installed offline model: the default ${shown(field.default)} could not load`
          : from === "default" || unset
            ? field.hook && (field.key === "min_score" || field.key === "min_ratio")
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
          settingOptions(field, id),
        ),
        h(
          "div",
          { class: "setting-source" },
          h(
            "span",
            {
              class: ["setting-origin", isSaved && "saved"],
              title: offline ? status.embedder_notice_reason || undefined : undefined,
            },
            source,
          ),
          isSaved && !locked
            ? h(
                "button",
                {
                  type: "button",
                  class: "small",
                  title: `Go back to ${field.variable}`,
                  onclick: () => save(field.hook ? { hook: { [field.key]: null } } : { [field.key]: null }),
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
        // The server's bounds are checked below, with a message; the browser's own check would
        // also refuse a saved value off the step's grid.
        novalidate: true,
        onsubmit: async (event) => {
          event.preventDefault();
          const patch = {};
          let refused = null;
          for (const { field, control, effective } of controls.values()) {
            const parsed = parseSetting(field, controlValue(field, control));
            markInvalid(control, parsed.error || null);
            if (parsed.error) {
              refused = refused || { control, error: parsed.error };
              continue;
            }
            if (parsed.value === (effective ?? null)) continue;
            if (field.hook) patch.hook = { ...(patch.hook || {}), [field.key]: parsed.value };
            else patch[field.key] = parsed.value;
          }
          if (refused) {
            toast(refused.error, "error");
            refused.control.focus();
            return;
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
      serverFields(status).map(row),
      h("h2", {}, "Hook (ragdown_context) defaults"),
      h(
        "p",
        { class: "field-help" },
        "A folder's own hook settings win over these, and an argument on the call wins over both.",
      ),
      minScoreWarning(hook.min_score, hook.unrelated_score),
      HOOK_FIELDS(status).map(row),
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

    facts = serverFacts(status);
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
        readOnly()
          ? notice(
              "info",
              "The server is read-only (RAGDOWN_READ_ONLY): server settings cannot change here. Folder settings still can.",
            )
          : locked
            ? notice("info", "Only the admin (RAGDOWN_TOKEN) changes server settings: they are shown as they are.")
            : null,
        folderWarnings,
        facts,
        form,
      ),
    );
  };

  const onState = () => {
    if (signal.aborted) return;
    if (drawn !== signature() || !facts || !facts.isConnected) {
      draw();
      return;
    }
    const next = serverFacts(state.status || {});
    facts.replaceWith(next);
    facts = next;
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
  onState();
  return { onState };
}

function serverFacts(status) {
  const facts = [
    ["Version", status.version],
    [
      "Embedder loaded",
      status.embedder || (status.ready ? "none: search runs on its words alone" : "loading…"),
    ],
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
  // Index, embedder and sync errors are in the banner above every page.
  return h(
    "section",
    { class: "section" },
    h("h2", {}, "Server"),
    h(
      "dl",
      { class: "facts" },
      facts.map(([term, value]) => [h("dt", {}, term), h("dd", {}, value ?? "—")]),
    ),
    h("p", {}, h("a", { href: routes.usage() }, "Usage: what searches found, and what was read")),
    h("p", {}, h("a", { href: routes.keys(), id: "keys-link" }, "Keys: who else may use this server")),
  );
}
