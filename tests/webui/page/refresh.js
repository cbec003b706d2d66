// A list refreshed on a timer as the upstream web UI refreshes its lists (its settings'
// auto-refresh interval): every `interval` ms a plain GET of the page it shows, through the
// browser's own HTTP cache (the default cache mode: a kept answer is revalidated with
// If-None-Match), with the bearer token. `refresher.loads` counts the refreshes done; each
// shown list is kept in `refresher.shown` (the pod names, by refresh).
'use strict';

window.refresher = {
  loads: 0,
  shown: [],
  errors: [],
  timer: null,

  start(namespace, token, interval) {
    const path = 'api/v1/pod/' + namespace + '?itemsPerPage=10&page=1&sortBy=d,creationTimestamp';
    const load = async () => {
      try {
        const reply = await fetch(path, { headers: { Authorization: 'Bearer ' + token } });
        if (!reply.ok) throw new Error(reply.status + ' ' + (await reply.text()));
        const body = await reply.json();
        const rows = document.querySelector('#pods tbody');
        rows.textContent = '';
        for (const pod of body.pods) {
          const row = document.createElement('tr');
          for (const text of [pod.objectMeta.name, pod.status]) {
            const cell = document.createElement('td');
            cell.textContent = text;
            row.appendChild(cell);
          }
          rows.appendChild(row);
        }
        this.shown.push(body.pods.map((pod) => pod.objectMeta.name));
      } catch (e) {
        this.errors.push(String(e));
      }
      this.loads += 1;
    };
    load();
    this.timer = setInterval(load, interval);
  },

  stop() {
    clearInterval(this.timer);
  },
};
