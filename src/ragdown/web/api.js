// The `/api` routes, with the bearer token the user gave once (kept in localStorage).
//
// Every call sends the token. A 401 hands over to the handler the app registers (it asks for the
// token again) and the call is retried with the new one; `status`, open to anyone, sends it only to
// learn who the caller is (`access`), and without it when it is not accepted.

const TOKEN_KEY = "ragdown.token";

export class ApiError extends Error {
  constructor(status, message, code = null, body = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

let unauthorizedHandler = null;
let reachHandler = null;

/** Registers `handler(reachable)`, told after each request whether the server answered at all. */
export function onReachability(handler) {
  reachHandler = handler;
}
let pendingLogin = null;
// The token when localStorage is unavailable (disabled storage): it then lasts as long as the page.
let memoryToken = "";

/** Registers `handler(reason)`: a function that resolves once a new token is stored. */
export function onUnauthorized(handler) {
  unauthorizedHandler = handler;
}

export function getToken() {
  try {
    return localStorage.getItem(TOKEN_KEY) || memoryToken;
  } catch {
    return memoryToken;
  }
}

export function setToken(token) {
  try {
    if (token) localStorage.setItem(TOKEN_KEY, token);
    else localStorage.removeItem(TOKEN_KEY);
  } catch {
    // Storage is disabled: memoryToken keeps it.
  }
  memoryToken = token || "";
}

function buildUrl(path, query) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(key, String(value));
  }
  return url;
}

async function errorOf(response) {
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  const message = (body && body.error) || `${response.status} ${response.statusText || "error"}`;
  return new ApiError(response.status, message, body && body.code ? body.code : null, body);
}

function loginAgain(reason) {
  if (!unauthorizedHandler) return Promise.reject(new ApiError(401, "Unauthorized"));
  if (!pendingLogin) {
    pendingLogin = Promise.resolve(unauthorizedHandler(reason)).finally(() => {
      pendingLogin = null;
    });
  }
  return pendingLogin;
}

/**
 * One request. `body` is sent as JSON; `raw` returns the Response (for files) instead of JSON.
 * Throws ApiError for any answer that is not 2xx (status 0 when the server cannot be reached).
 */
export async function request(method, path, { query, body, raw = false, auth: wanted = true, signal } = {}) {
  let auth = wanted;
  const url = buildUrl(path, query);
  for (let attempt = 0; ; attempt += 1) {
    const headers = { Accept: raw ? "*/*" : "application/json" };
    const token = getToken();
    if (auth && token) headers.Authorization = `Bearer ${token}`;
    const init = { method, headers, signal, cache: "no-store" };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (err) {
      if (err && err.name === "AbortError") throw err;
      if (reachHandler) reachHandler(false);
      throw new ApiError(0, "The server cannot be reached.");
    }
    if (reachHandler) reachHandler(true);
    if (response.status === 401 && auth === "optional" && token && attempt === 0) {
      auth = false; // an open route: asked again as anyone
      continue;
    }
    if (response.status === 401 && auth === true && attempt < 5) {
      await loginAgain(token ? "That token was not accepted." : null);
      continue;
    }
    if (!response.ok) throw await errorOf(response);
    return raw ? response : response.json();
  }
}

/** Checks a token against a bearer route without triggering the login handler. */
export async function tokenWorks(token) {
  const response = await fetch(buildUrl("/api/folders"), {
    headers: { Accept: "application/json", Authorization: `Bearer ${token}` },
    cache: "no-store",
  });
  if (response.status === 401) return false;
  if (!response.ok) throw await errorOf(response);
  return true;
}

const enc = encodeURIComponent;

export const api = {
  status: (signal) => request("GET", "/api/status", { auth: "optional", signal }),
  patchSettings: (patch) => request("PATCH", "/api/settings", { body: patch }),
  queryLog: () => request("GET", "/api/query-log"),
  clearQueryLog: () => request("DELETE", "/api/query-log"),

  folders: () => request("GET", "/api/folders"),
  createFolder: (folder) => request("POST", "/api/folders", { body: folder }),
  patchFolder: (name, patch) => request("PATCH", `/api/folders/${enc(name)}`, { body: patch }),
  deleteFolder: (name, confirm) => request("DELETE", `/api/folders/${enc(name)}`, { query: { confirm } }),
  deleteLoose: (name) => request("DELETE", "/api/loose", { query: { name } }),

  docs: (folder, signal) => request("GET", "/api/docs", { query: { folder }, signal }),
  doc: (path, signal) => request("GET", "/api/doc", { query: { path }, signal }),
  saveDoc: (body) => request("POST", "/api/doc", { body }),
  deleteDoc: (path) => request("DELETE", "/api/doc", { query: { path } }),
  render: (path, text, signal) => request("POST", "/api/render", { body: { path, text }, signal }),
  // Without `folder`, one search over every folder the caller sees, ranked together.
  search: (params, signal) => request("GET", "/api/search", { query: params, signal }),
  resolve: (from, link) => request("GET", "/api/resolve", { query: { from, link } }),
  move: (from, to) => request("POST", "/api/move", { body: { from, to } }),
  backlinks: (path, signal) => request("GET", "/api/backlinks", { query: { path }, signal }),
  outline: (path, signal) => request("GET", "/api/outline", { query: { path }, signal }),
  file: (path, signal) => request("GET", "/api/file", { query: { path }, raw: true, signal }),

  // The version history: `to` left out compares with the file on disk; `baseHash`, if given, must
  // still be the document's hash for a restore to go ahead (409 `changed` otherwise).
  history: (path, signal) => request("GET", "/api/history", { query: { path }, signal }),
  version: (path, version, signal) => request("GET", "/api/version", { query: { path, version }, signal }),
  diff: (path, from, to, signal) => request("GET", "/api/diff", { query: { path, from, to }, signal }),
  restore: (path, version, baseHash) =>
    request("POST", "/api/restore", { body: { path, version, base_hash: baseHash || undefined } }),
  trash: (folder, signal) => request("GET", "/api/trash", { query: { folder }, signal }),
  // Deletes for good: one trash entry (`path`), or with `path` left out the folder's whole trash.
  purgeTrash: (folder, path) => request("DELETE", "/api/trash", { query: { folder, path } }),

  // Scoped keys (the admin's): a new key's secret is in createKey's answer only.
  keys: () => request("GET", "/api/keys"),
  createKey: (body) => request("POST", "/api/keys", { body }),
  revokeKey: (id) => request("DELETE", `/api/keys/${enc(id)}`),
};
