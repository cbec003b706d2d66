// What the upstream web UI does with its token: reads the `token` cookie and sends it as
// `Authorization: Bearer` on API calls; its sign-out deletes the cookie.
'use strict';

window.ui = {
  token() {
    const m = document.cookie.match(/(?:^|;\s*)token=([^;]+)/);
    return m ? m[1] : null;
  },

  async get(path) {
    const token = this.token();
    const headers = token ? { Authorization: 'Bearer ' + token } : {};
    const reply = await fetch(path, { headers });
    const text = await reply.text();
    let body = null;
    try { body = JSON.parse(text); } catch (e) { body = text; }
    return { status: reply.status, body };
  },

  signOut() {
    document.cookie = 'token=; path=/; max-age=0';
  },
};
