// The gateway's home page: what runs, sign-in with a bearer token, then a first look through
// the API (a search of every kind, namespaces, pods with status, CPU and memory, a pod's
// log, the activity: the audit trail of changes and terminals, api/v1/audit).
//
// Everything from the cluster is put into the page with textContent, never as markup. The
// token lives in this tab's sessionStorage and goes out only in the Authorization header;
// requests never carry cookies (credentials: "omit"). With OpenID Connect configured the page
// offers sign-in with the provider; the sign-in ends here with the ID token in the `token`
// cookie, which the page then takes into sessionStorage and drops (the one cookie it reads).
//
// Every request is relative to the page's base: / for the default cluster, /clusters/{name}/
// under a cluster's path (the gateway writes that <base>). The token is kept per base, so a
// token given to one cluster is never sent to another opened later in the same tab. A person
// signed in with the provider at any cluster is signed in at every one: a page without a token
// asks its own oidc/refresh, which answers from the gateway's session (issue #39).
//
// The lists update by themselves, with no timer: once signed in, the page opens one WebSocket
// to the gateway (api/v1/live: the token in its first message, never in the URL), subscribes
// to the namespace list and the pod list it shows, and fetches a list again when told it
// changed. Its fetches revalidate the browser's kept copy (cache "no-cache"), so a fetch of an
// unchanged list is a 304. The same connection says when the cluster's API server stops
// answering: the page then says since when, and that the lists show what was last seen. Should
// the connection fail (a proxy that does not pass WebSockets), the page reconnects with a
// growing delay and meanwhile refreshes its lists every FALLBACK_MS.
"use strict";

(function () {
  const BASE = new URL(".", document.baseURI).pathname; // "/" or "/clusters/{name}/"
  const SCOPE = BASE === "/" ? "" : ":" + BASE;
  const TOKEN_KEY = "dashboard-api.token" + SCOPE;
  const OIDC_KEY = "dashboard-api.oidc" + SCOPE; // the tab's token came from the identity provider
  // Where the gateway sets the sign-in's `token` cookie: the base without its last slash.
  const COOKIE_PATH = BASE === "/" ? "/" : BASE.replace(/\/$/, "");
  const PAGE_NAMESPACES = 200;
  const PAGE_PODS = 100;
  const PAGE_SEARCH = 50;
  const PAGE_ACTIVITY = 20;
  const METRICS = "cpu/usage,memory/usage";
  const ALL = ""; // the namespace choice "All namespaces"
  const FALLBACK_MS = 10000; // list refreshes while the notices' connection is down
  const RECONNECT_MAX_MS = 30000;
  const STATUS_CLASS = {
    Running: "status-ok", Succeeded: "status-ok", Completed: "status-ok",
    Pending: "status-warn", ContainerCreating: "status-warn", Terminating: "status-warn",
    Unknown: "status-warn",
  };

  const state = { token: null, namespace: null, pod: null, oidc: false, search: null,
                  activityPage: 1 };
  const $ = (id) => document.getElementById(id);

  class HttpError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  // --- the token: this tab only --------------------------------------------------------------

  function storedToken() {
    try {
      return sessionStorage.getItem(TOKEN_KEY);
    } catch (e) {
      return null; // storage turned off: the token stays in memory only
    }
  }

  function keepToken(token) {
    state.token = token;
    try {
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) { /* memory only */ }
  }

  // The ID token an OpenID Connect sign-in left in the `token` cookie (handlers/oidc.py), taken
  // once: the cookie is dropped.
  function tokenFromSignIn() {
    const m = document.cookie.match(/(?:^|;\s*)token=([^;]+)/);
    if (!m) return null;
    document.cookie = "token=; path=" + COOKIE_PATH + "; max-age=0";
    return m[1];
  }

  // --- the API -------------------------------------------------------------------------------

  // ``path`` is relative ("api/v1/..."): resolved against the page's base.
  async function api(path, withToken) {
    const headers = { Accept: "application/json" };
    if (withToken) headers.Authorization = "Bearer " + state.token;
    // "no-cache": the browser's kept copy is revalidated (If-None-Match), never used unasked.
    const reply = await fetch(path, { headers, credentials: "omit", cache: "no-cache" });
    const text = await reply.text();
    let body = null;
    try {
      body = text ? JSON.parse(text) : null;
    } catch (e) {
      body = null; // a text answer (--web-ui-compat's 401) is its own message
    }
    if (!reply.ok) {
      const message = body && typeof body.message === "string" ? body.message : text;
      throw new HttpError(reply.status, message || reply.statusText);
    }
    return body;
  }

  function segment(value) {
    return encodeURIComponent(value);
  }

  // --- small DOM helpers ---------------------------------------------------------------------

  function element(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function say(id, text) {
    const node = $(id);
    node.textContent = text || "";
    node.hidden = !text;
  }

  // --- notices: the lists update by themselves ----------------------------------------------

  // One connection per signed-in page; ``watch(id, path, onChange)`` subscribes (again with
  // the same id: another list). Closed by sign-out.
  const live = {
    socket: null,
    watched: new Map(), // id -> {path, onChange}
    delay: 1000,
    retry: null,
    fallback: null,

    open() {
      this.close();
      const url = new URL(BASE + "api/v1/live", location.href);
      url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
      let socket;
      try {
        socket = new WebSocket(url.href);
      } catch (e) {
        this.lost();
        return;
      }
      this.socket = socket;
      socket.onopen = () => {
        socket.send(JSON.stringify({ type: "auth", token: state.token }));
        for (const [id, watch] of this.watched) this.subscribe(id, watch.path);
      };
      socket.onmessage = (event) => this.heard(event.data);
      socket.onclose = (event) => {
        if (this.socket !== socket) return; // replaced, or closed by sign-out
        this.socket = null;
        if (event.code === 4401) {
          signOut("The cluster no longer accepts the token: sign in again.");
          return;
        }
        this.lost();
      };
    },

    // The connection is down: try again later, and meanwhile refresh the lists on a timer.
    lost() {
      if (!state.token) return;
      clearTimeout(this.retry);
      this.retry = setTimeout(() => this.open(), this.delay);
      this.delay = Math.min(this.delay * 2, RECONNECT_MAX_MS);
      if (this.fallback === null) {
        this.fallback = setInterval(() => {
          for (const watch of this.watched.values()) watch.onChange();
        }, FALLBACK_MS);
      }
    },

    heard(text) {
      let message;
      try {
        message = JSON.parse(text);
      } catch (e) {
        return;
      }
      if (message.type === "ready") {
        this.delay = 1000;
        clearInterval(this.fallback);
        this.fallback = null;
        showAnswering(message);
        // What changed while the connection was down.
        for (const watch of this.watched.values()) watch.onChange();
      } else if (message.type === "cluster") {
        showAnswering(message);
      } else if (message.type === "changed") {
        const watch = this.watched.get(message.id);
        if (watch) watch.onChange();
      } else if (message.type === "refused") {
        // A list the gateway cannot watch (read from the API server each time): refreshed
        // on a timer instead. Any other refusal is the list's own error, which it shows.
        const watch = this.watched.get(message.id);
        if (watch && message.code === 501 && watch.timer === null) {
          watch.timer = setInterval(() => watch.onChange(), FALLBACK_MS);
        }
      }
    },

    subscribe(id, path) {
      if (this.socket && this.socket.readyState === WebSocket.OPEN) {
        this.socket.send(JSON.stringify({ type: "subscribe", id, path }));
      }
    },

    watch(id, path, onChange) {
      const known = this.watched.get(id);
      if (known && known.path === path) {
        known.onChange = onChange;
        return;
      }
      if (known) clearInterval(known.timer);
      this.watched.set(id, { path, onChange, timer: null });
      this.subscribe(id, path);
    },

    close() {
      clearTimeout(this.retry);
      clearInterval(this.fallback);
      this.retry = null;
      this.fallback = null;
      const socket = this.socket;
      this.socket = null;
      if (socket) socket.close(1000, "signed out");
    },

    stop() {
      this.close();
      for (const watch of this.watched.values()) clearInterval(watch.timer);
      this.watched.clear();
      this.delay = 1000;
      showAnswering({ answering: true });
    },
  };

  // "The cluster has not answered since 12:03:04; this is what was last seen." (local time)
  function showAnswering(message) {
    const node = $("stale");
    if (message.answering !== false) {
      node.hidden = true;
      node.textContent = "";
      return;
    }
    const since = new Date(message.since);
    const when = isNaN(since) ? message.since : since.toLocaleTimeString();
    node.textContent = "The cluster has not answered since " + when
      + "; this is what was last seen.";
    node.hidden = false;
  }

  // --- what runs, before sign-in -------------------------------------------------------------

  // Whether the gateway offers sign-in with the provider.
  async function loadConfig() {
    let oidc = false;
    try {
      const config = await api("config", false);
      $("version").textContent = config.version;
      oidc = (config.authenticationModes || []).indexOf("oidc") >= 0;
      $("oidc-signin").hidden = !oidc;
    } catch (e) {
      $("version").textContent = "unknown (" + e.message + ")";
    }
    try {
      const banner = await api("systembanner", false);
      if (banner && banner.message) {
        $("banner").textContent = banner.message;
        $("banner").className = banner.severity === "ERROR" ? "ERROR" : "";
        $("banner").hidden = false;
      }
    } catch (e) { /* no banner */ }
    return oidc;
  }

  // A sign-in with the provider made at another cluster's page (or this one's, in another
  // tab): this cluster's oidc/refresh sets its `token` cookie from the gateway's session.
  async function tokenFromSession() {
    try {
      const reply = await fetch("oidc/refresh", { method: "POST", credentials: "same-origin",
                                                  cache: "no-store" });
      return reply.ok ? tokenFromSignIn() : null;
    } catch (e) {
      return null;
    }
  }

  // --- sign-in -------------------------------------------------------------------------------

  function validToken(token) {
    return /^[\x21-\x7e]+$/.test(token); // what an HTTP header can carry
  }

  async function signIn(token, quietly) {
    say("signin-message", "");
    if (!validToken(token)) {
      say("signin-message", "A token is printable ASCII without spaces: paste it exactly as "
        + "bin/dashboard printed it.");
      return;
    }
    state.token = token;
    let cluster;
    try {
      cluster = await api("api/v1/cluster", true);
    } catch (e) {
      keepToken(null);
      if (e.status === 401) {
        say("signin-message", quietly
          ? "The token of this tab is no longer accepted by the cluster: sign in again."
          : "The cluster did not accept this token (401 Unauthorized). Check that you pasted "
            + "the whole token (bin/dashboard prints one for its local cluster).");
      } else {
        say("signin-message", "Sign-in failed" + (e.status ? " (" + e.status + ")" : "") + ": "
          + e.message);
      }
      return;
    }
    keepToken(token);
    $("token").value = "";
    $("cluster").textContent = cluster.apiServer
      + (cluster.kubernetesVersion ? " (Kubernetes " + cluster.kubernetesVersion + ")" : "");
    $("signin").hidden = true;
    $("overview").hidden = false;
    $("signout").hidden = false;
    live.open();
    await loadNamespaces();
  }

  function signOut(message) {
    live.stop();
    keepToken(null);
    try { sessionStorage.removeItem(OIDC_KEY); } catch (e) { /* memory only */ }
    state.namespace = null;
    state.pod = null;
    state.search = null;
    $("cluster").textContent = "shown after sign-in";
    $("overview").hidden = true;
    $("signout").hidden = true;
    $("log").hidden = true;
    $("object").hidden = true;
    $("search-query").value = "";
    clearSearch();
    $("signin").hidden = false;
    say("signin-message", message || "");
  }

  // A failed call of the signed-in views: a 401 signs out, anything else is said.
  function failed(where, e) {
    if (e.status === 401) {
      signOut("The cluster no longer accepts the token (401 Unauthorized): sign in again.");
      return;
    }
    say("overview-message", where + " failed" + (e.status ? " (" + e.status + ")" : "") + ": "
      + e.message);
  }

  // --- namespaces ----------------------------------------------------------------------------

  // A caller who may not list namespaces still sees "All namespaces" (the gateway gathers the
  // pods of the namespaces the caller may read) and can name a namespace in the form below.
  const NAMESPACES = "api/v1/namespace?itemsPerPage=" + PAGE_NAMESPACES + "&sortBy=a,name";

  // ``select``: show the chosen namespace's pods too (not when the list itself changed).
  async function loadNamespaces(select = true) {
    let names = [];
    let note = "";
    live.watch("namespaces", NAMESPACES, () => loadNamespaces(false));
    try {
      const body = await api(NAMESPACES, true);
      names = (body.namespaces || []).map((ns) => ns.objectMeta.name);
      const total = body.listMeta ? body.listMeta.totalItems : names.length;
      if (total > names.length) {
        note = "The first " + names.length + " of " + total + " namespaces: name another below.";
      }
    } catch (e) {
      if (e.status !== 403) {
        failed("Listing namespaces", e);
        return;
      }
      note = "This token may not list namespaces (" + e.message + "). Name one below.";
    }
    const chosen = state.namespace === null ? namespaceInUrl() : state.namespace;
    if (chosen && !names.includes(chosen)) names.push(chosen); // named by hand or in the URL
    if (!select && state.token === null) return; // signed out meanwhile
    const list = $("namespaces");
    list.replaceChildren();
    for (const name of [ALL].concat(names)) {
      const button = element("button", name || "All namespaces");
      button.type = "button";
      button.dataset.namespace = name;
      button.addEventListener("click", () => selectNamespace(name));
      const item = element("li");
      item.appendChild(button);
      list.appendChild(item);
    }
    say("namespaces-note", note);
    if (select) {
      await selectNamespace(chosen || ALL);
    } else {
      for (const button of list.querySelectorAll("button")) {
        button.setAttribute("aria-current", String(button.dataset.namespace === state.namespace));
      }
    }
  }

  // The chosen namespace is the URL's fragment, so a reload or a bookmark keeps it.
  function namespaceInUrl() {
    try {
      return decodeURIComponent(location.hash.slice(1));
    } catch (e) {
      return "";
    }
  }

  async function selectNamespace(name) {
    state.namespace = name;
    history.replaceState(null, "", name ? "#" + encodeURIComponent(name) : location.pathname);
    for (const button of $("namespaces").querySelectorAll("button")) {
      button.setAttribute("aria-current", String(button.dataset.namespace === name));
    }
    state.activityPage = 1;
    await Promise.all([loadPods(), loadActivity()]);
  }

  // --- pods with CPU and memory --------------------------------------------------------------

  function latest(metrics, name) {
    const metric = metrics && metrics[name];
    const points = metric && metric.dataPoints;
    return points && points.length ? points[points.length - 1].y : null;
  }

  function cpu(nanocores) {
    if (nanocores === null) return "-";
    const millicores = nanocores / 1e6;
    if (millicores >= 1000) return (millicores / 1000).toFixed(2) + " cores";
    return (millicores < 10 ? millicores.toFixed(1) : Math.round(millicores)) + "m";
  }

  function memory(bytes) {
    if (bytes === null) return "-";
    const units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let value = bytes;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit += 1;
    }
    return (unit ? value.toFixed(1) : String(value)) + " " + units[unit];
  }

  async function loadPods() {
    const namespace = state.namespace;
    $("pods-title").textContent = "Pods in " + (namespace || "all namespaces");
    say("overview-message", "");
    const path = "api/v1/pod" + (namespace ? "/" + segment(namespace) : "")
      + "?itemsPerPage=" + PAGE_PODS
      + "&sortBy=a,name&metricNames=" + encodeURIComponent(METRICS);
    live.watch("pods", path, () => {
      if (state.namespace === namespace) loadPods();
    });
    let body;
    try {
      body = await api(path, true);
    } catch (e) {
      failed("Listing the pods", e);
      return;
    }
    if (namespace !== state.namespace) return; // another namespace was chosen meanwhile
    const rows = $("pods").tBodies[0];
    rows.replaceChildren();
    const pods = body.pods || [];
    for (const pod of pods) {
      const name = pod.objectMeta.name;
      const row = element("tr");
      row.dataset.pod = name;
      row.dataset.namespace = pod.objectMeta.namespace;
      row.appendChild(element("td", name));
      row.appendChild(element("td", pod.objectMeta.namespace));
      row.appendChild(element("td", pod.status, STATUS_CLASS[pod.status] || "status-bad"));
      row.appendChild(element("td", pod.restartCount, "number"));
      row.appendChild(element("td", cpu(latest(pod.metrics, "cpu/usage")), "number"));
      row.appendChild(element("td", memory(latest(pod.metrics, "memory/usage")), "number"));
      const cell = element("td");
      const button = element("button", "Log", "link");
      button.type = "button";
      button.addEventListener("click", () => showLog(pod));
      cell.appendChild(button);
      row.appendChild(cell);
      rows.appendChild(row);
    }
    const notes = [];
    if (!pods.length) notes.push(namespace ? "No pods in this namespace." : "No pods.");
    const total = body.listMeta ? body.listMeta.totalItems : pods.length;
    if (total > pods.length) notes.push("The first " + pods.length + " of " + total + " pods.");
    if (body.warning) notes.push("No CPU and memory: " + body.warning);
    say("pods-note", notes.join(" "));
  }

  // --- search: every kind at once (GET api/v1/search) ---------------------------------------

  function clearSearch() {
    $("search-results").replaceChildren();
    $("search-skipped").hidden = true;
    say("search-message", "");
    say("search-note", "");
  }

  // The results, grouped by kind in the order the gateway ranked them; each name opens the
  // object: a pod's log, any other object's detail.
  async function runSearch(query) {
    state.search = query;
    clearSearch();
    if (!query) return;
    let body;
    try {
      body = await api("api/v1/search?itemsPerPage=" + PAGE_SEARCH + "&q="
        + encodeURIComponent(query), true);
    } catch (e) {
      if (e.status === 401) {
        failed("Searching", e);
        return;
      }
      say("search-message", "The search failed" + (e.status ? " (" + e.status + ")" : "")
        + ": " + e.message);
      return;
    }
    if (state.search !== query) return; // another search was asked meanwhile
    const totals = {};
    for (const entry of body.kinds || []) totals[entry.kind] = entry.totalItems;
    const groups = new Map();
    for (const item of body.items || []) {
      if (!groups.has(item.kind)) groups.set(item.kind, []);
      groups.get(item.kind).push(item);
    }
    const results = $("search-results");
    for (const [kind, items] of groups) {
      const group = element("section", null, "search-group");
      group.dataset.kind = kind;
      group.appendChild(element("h3", kind + " (" + (totals[kind] || items.length) + ")"));
      const table = element("table");
      const rows = element("tbody");
      for (const item of items) {
        const meta = item.objectMeta || {};
        const row = element("tr");
        row.dataset.name = meta.name || "";
        row.dataset.namespace = meta.namespace || "";
        const cell = element("td");
        const open = element("button", meta.name, "link");
        open.type = "button";
        open.addEventListener("click", () => openObject(item));
        cell.appendChild(open);
        row.appendChild(cell);
        row.appendChild(element("td", meta.namespace || ""));
        row.appendChild(element("td", item.status || "",
          item.status ? (STATUS_CLASS[item.status] || "") : ""));
        rows.appendChild(row);
      }
      table.appendChild(rows);
      group.appendChild(table);
      results.appendChild(group);
    }
    const total = body.listMeta ? body.listMeta.totalItems : 0;
    const shown = (body.items || []).length;
    if (!total) say("search-note", "Nothing found.");
    else if (total > shown) say("search-note", "The first " + shown + " of " + total
      + " matches: narrow the search (label:, ns:, status:, kind:...).");
    const skipped = body.skipped || [];
    if (skipped.length) {
      $("search-skipped-title").textContent = skipped.length + " kinds not searched";
      const list = $("search-skipped-list");
      list.replaceChildren();
      for (const entry of skipped) list.appendChild(element("li", entry.kind + ": " + entry.reason));
      $("search-skipped").hidden = false;
    }
  }

  async function openObject(item) {
    const meta = item.objectMeta || {};
    if (item.kind === "pod") {
      await showLog({ objectMeta: meta, containerStatuses: [] });
      $("log").scrollIntoView();
      return;
    }
    const where = (meta.namespace ? meta.namespace + "/" : "") + meta.name;
    $("object").hidden = false;
    $("object-title").textContent = item.kind + " " + where;
    $("object-body").textContent = "Loading…";
    $("object").scrollIntoView();
    let shown = item; // a kind without a detail route: what the search said of it
    if (item.kind === "secret") { // its data is never put on this page
      $("object-body").textContent = JSON.stringify(shown, null, 2);
      return;
    }
    try {
      shown = await api("api/v1/" + segment(item.kind) + "/"
        + (meta.namespace ? segment(meta.namespace) + "/" : "") + segment(meta.name), true);
    } catch (e) {
      if (e.status === 401) {
        failed("Reading the object", e);
        return;
      }
      if (e.status !== 404 && e.status !== 405) {
        $("object-body").textContent = "The object cannot be read (" + e.status + "): "
          + e.message;
        return;
      }
    }
    $("object-body").textContent = JSON.stringify(shown, null, 2);
  }

  // --- a pod's log ---------------------------------------------------------------------------

  function containersOf(pod) {
    return (pod.containerStatuses || []).map((c) => c.name).filter(Boolean);
  }

  async function showLog(pod, container) {
    const namespace = pod.objectMeta.namespace;
    const name = pod.objectMeta.name;
    state.pod = namespace + "/" + name;
    const names = containersOf(pod);
    const choice = $("containers");
    choice.replaceChildren();
    for (const c of names) choice.appendChild(element("option", c));
    $("container-choice").hidden = names.length < 2;
    if (container) choice.value = container;
    choice.onchange = () => showLog(pod, choice.value);
    $("log").hidden = false;
    $("log-title").textContent = "Log of " + namespace + "/" + name;
    $("log-lines").textContent = "Loading…";
    let path = "api/v1/log/" + segment(namespace) + "/" + segment(name);
    if (container) path += "/" + segment(container);
    let body;
    try {
      body = await api(path, true);
    } catch (e) {
      if (e.status === 401) {
        failed("Reading the log", e);
        return;
      }
      $("log-lines").textContent = "The log cannot be read (" + e.status + "): " + e.message;
      return;
    }
    if (state.pod !== namespace + "/" + name) return;
    const info = body.info || {};
    const shown = info.containerName || info.initContainerName || container || "";
    $("log-title").textContent = "Log of " + namespace + "/" + name
      + (shown ? " (container " + shown + ")" : "");
    if (shown) choice.value = shown;
    // --web-ui-compat sends upstream's {timestamp, content} objects instead of strings.
    const lines = (body.logs || []).map((line) =>
      (line !== null && typeof line === "object" ? line.content : line));
    $("log-lines").textContent = lines.length ? lines.join("\n") : "(the log is empty)";
  }

  // --- the activity: who changed what (the audit trail) ---------------------------------------

  function outcome(entry) {
    if (entry.route === "terminal") {
      const d = entry.details || {};
      if (d.event === "opened") return "terminal opened";
      return "terminal closed" + (d.reason ? ": " + d.reason : "");
    }
    return entry.status + (entry.reason ? " " + entry.reason : "");
  }

  function objectOf(entry) {
    const where = entry.namespace ? entry.namespace + "/" : "";
    const what = entry.kind ? entry.kind + " " : "";
    const container = entry.details && entry.details.container
      ? " (" + entry.details.container + ")" : "";
    return what + where + (entry.name || "") + container;
  }

  async function loadActivity() {
    const namespace = state.namespace;
    const page = state.activityPage;
    $("activity-title").textContent = "Activity in " + (namespace || "all namespaces");
    say("activity-note", "");
    let body;
    try {
      body = await api("api/v1/audit?itemsPerPage=" + PAGE_ACTIVITY + "&page=" + page
        + (namespace ? "&namespace=" + encodeURIComponent(namespace) : ""), true);
    } catch (e) {
      if (e.status === 401) {
        failed("Reading the activity", e);
        return;
      }
      $("activity-table").tBodies[0].replaceChildren();
      say("activity-note", e.status === 404
        ? "This gateway keeps its audit trail in its log only."
        : "The activity cannot be read (" + e.status + "): " + e.message);
      $("activity-older").disabled = $("activity-newer").disabled = true;
      return;
    }
    if (namespace !== state.namespace || page !== state.activityPage) return;
    const rows = $("activity-table").tBodies[0];
    rows.replaceChildren();
    const entries = body.entries || [];
    for (const entry of entries) {
      const row = element("tr");
      row.dataset.request = entry.requestId;
      row.appendChild(element("td", new Date(entry.time).toLocaleString()));
      const who = element("td", entry.user, entry.userVerified ? "" : "unverified");
      if (!entry.userVerified) who.title = "not verified: the name the request claimed";
      row.appendChild(who);
      row.appendChild(element("td", entry.route === "terminal" ? "terminal"
        : entry.method + " " + entry.route));
      row.appendChild(element("td", objectOf(entry)));
      row.appendChild(element("td", outcome(entry), entry.status < 400 ? "status-ok"
        : "status-bad"));
      if (entry.message) row.lastChild.title = entry.message;
      rows.appendChild(row);
    }
    const total = body.listMeta ? body.listMeta.totalItems : entries.length;
    const pages = Math.max(1, Math.ceil(total / PAGE_ACTIVITY));
    $("activity-page").textContent = total ? "page " + page + " of " + pages : "";
    $("activity-newer").disabled = page <= 1;
    $("activity-older").disabled = page >= pages;
    const notes = [];
    if (!entries.length) notes.push("No changes here that this token may see.");
    for (const error of body.errors || []) {
      if (error.ErrStatus && error.ErrStatus.message) notes.push(error.ErrStatus.message);
    }
    say("activity-note", notes.join(" "));
  }

  function activityPage(step) {
    state.activityPage = Math.max(1, state.activityPage + step);
    loadActivity();
  }

  // --- start ---------------------------------------------------------------------------------

  document.addEventListener("DOMContentLoaded", () => {
    $("signin-form").addEventListener("submit", (event) => {
      event.preventDefault();
      signIn($("token").value.trim(), false);
    });
    // An OpenID Connect session also ends at the gateway and the provider.
    $("signout").addEventListener("click", () => {
      const oidc = state.oidc;
      state.oidc = false;
      signOut("");
      if (oidc) location.assign("oidc/logout");
    });
    $("refresh").addEventListener("click", () => loadNamespaces());
    $("search-form").addEventListener("submit", (event) => {
      event.preventDefault();
      runSearch($("search-query").value.trim());
    });
    $("activity-refresh").addEventListener("click", () => loadActivity());
    $("activity-older").addEventListener("click", () => activityPage(1));
    $("activity-newer").addEventListener("click", () => activityPage(-1));
    $("namespace-form").addEventListener("submit", (event) => {
      event.preventDefault();
      const name = $("namespace-name").value.trim();
      if (!name) return;
      $("namespace-name").value = "";
      state.namespace = name;
      loadNamespaces();
    });
    const configured = loadConfig();
    start(configured);
  });

  async function start(configured) {
    let fromProvider = tokenFromSignIn();
    if (fromProvider === null && !storedToken() && await configured) {
      fromProvider = await tokenFromSession();
    }
    try {
      if (fromProvider !== null) sessionStorage.setItem(OIDC_KEY, "1");
      state.oidc = sessionStorage.getItem(OIDC_KEY) === "1";
    } catch (e) {
      state.oidc = fromProvider !== null;
    }
    const token = fromProvider || storedToken();
    if (token) signIn(token, true);
  }
}());
