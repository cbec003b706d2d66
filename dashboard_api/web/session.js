// Keeps an OpenID Connect session of the dashboard alive (served by the gateway,
// issue 29). Before the ID token in the `token` cookie expires, asks for a fresh one (POST /oidc/refresh
// reads the HttpOnly refresh cookie and sets a new `token` cookie); when the provider no longer
// allows it, sends the person to sign in again. When the UI drops the token before it expires
// (its sign-out), the session ends at the gateway and the provider too.
(function () {
  "use strict";
  var ISSUER = $issuer;
  var BASE = $base;  // the path of the web UI this page is (its cluster's, or "/")
  var seen = null;
  var busy = false;

  function claims() {
    var m = document.cookie.match(/(?:^|;\s*)token=([^;]+)/);
    if (!m) { return null; }
    try {
      var part = m[1].split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      var c = JSON.parse(atob(part + "===".slice((part.length + 3) % 4)));
      return c.iss === ISSUER && typeof c.exp === "number" ? c : null;
    } catch (e) { return null; }
  }

  function here() { return location.pathname + location.search + location.hash; }

  function refresh() {
    busy = true;
    fetch(BASE + "oidc/refresh", {method: "POST", credentials: "same-origin"}).then(function (r) {
      busy = false;
      if (r.status === 401) { location.assign(BASE + "oidc/login?return=" + encodeURIComponent(here())); }
    }, function () { busy = false; });
  }

  function check() {
    if (busy) { return; }
    var now = Date.now() / 1000, c = claims();
    if (c) {
      seen = c;
      var margin = Math.min(60, Math.max(2, (c.exp - (c.iat || now)) / 4));
      if (now >= c.exp - margin) { refresh(); }
    } else if (seen) {
      if (now < seen.exp - 1) { location.assign(BASE + "oidc/logout"); } else { refresh(); }
    }
  }

  setInterval(check, $period);
  check();
}());
