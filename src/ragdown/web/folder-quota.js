// A folder's quotas in its settings: the most documents, bytes and bytes per document it may hold
// (`max_files`, `max_bytes`, `max_file_bytes` in `.ragdown.json`), with what it holds now. Their
// labels, help and bounds come from the server's folder schema (core/config.py).

import { h } from "./dom.js";
import { toast } from "./dialogs.js";
import { state } from "./state.js";
import { markInvalid, parseSetting, settingControl } from "./view-settings.js";

function quotaFields() {
  const schema = (state.status && state.status.settings && state.status.settings.folder_schema) || [];
  return schema.map((entry) => ({
    key: entry.key,
    label: entry.label || entry.key,
    help: entry.help || "",
    kind: entry.kind,
    min: typeof entry.min === "number" ? entry.min : undefined,
    max: typeof entry.max === "number" ? entry.max : undefined,
    where: entry.where || [],
  }));
}

/** The Quotas section; `patch(body, message, control)` saves, `draw()` redraws the page. */
export function quotaSection(folder, patch, draw) {
  const fields = quotaFields();
  if (!fields.length) return null;
  const inputs = fields.map((field) => {
    const input = settingControl(field, `folder-quota-${field.key}`, folder[field.key], {
      placeholder: "no limit",
    });
    input.addEventListener("input", () => markInvalid(input, null));
    return input;
  });
  const usage = folder.quota && folder.quota.text;
  return h(
    "section",
    { class: "section", id: "quota-section" },
    h("h2", {}, "Quotas"),
    h(
      "p",
      { class: "field-help" },
      "Writes that would go past a limit are refused, on every face. Leave a field empty for no limit.",
      usage ? [" ", h("span", { id: "quota-usage" }, `Now: ${usage}.`)] : null,
    ),
    h(
      "form",
      {
        class: "grid-form",
        novalidate: true,
        onsubmit: async (event) => {
          event.preventDefault();
          const body = {};
          let refused = null;
          for (const [index, field] of fields.entries()) {
            const parsed = parseSetting(field, inputs[index].value);
            markInvalid(inputs[index], parsed.error || null);
            if (parsed.error) refused = refused || { input: inputs[index], error: parsed.error };
            else body[field.key] = parsed.value;
          }
          if (refused) {
            toast(refused.error, "error");
            refused.input.focus();
            return;
          }
          if (await patch(body, "Quotas saved.", inputs[0])) draw();
        },
      },
      fields.map((field, index) =>
        h(
          "label",
          { class: "field", for: `folder-quota-${field.key}` },
          h("span", { class: "field-label" }, field.label, " ", h("code", {}, field.key)),
          inputs[index],
          h("span", { class: "field-help" }, field.help),
        ),
      ),
      h("div", { class: "button-row" }, h("button", { type: "submit", id: "save-quotas" }, "Save quotas")),
    ),
  );
}
