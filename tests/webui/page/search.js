// The upstream web UI's search page (modules/web, search/): for the query of its URL
// (#/search?q=...), each kind's list card asks its own list, as every list card does, with
// itemsPerPage=10&page=1&sortBy=d,creationTimestamp and filterBy=name,<query>, the namespace
// of the URL in the path (none: all namespaces), the bearer token; the parameters are encoded
// as Angular's HttpParams encodes them (encodeURIComponent, then @ : $ , ; = ? / left as they
// are). Each card shows the names of its list, or "There is nothing to display here". The test
// reads the cards and `searchpage.found`.
'use strict';

const KEEP = {'40': '@', '3A': ':', '24': '$', '2C': ',', '3B': ';', '3D': '=', '3F': '?',
              '2F': '/'};

function angularEncoding(value) {
  return encodeURIComponent(value).replace(/%(40|3A|24|2C|3B|3D|3F|2F)/gi,
                                           (all, code) => KEEP[code.toUpperCase()] || all);
}

// The cards of the upstream search page: [kind, list key, namespaced].
const CARDS = [
  ['clusterrole', 'items', false], ['namespace', 'namespaces', false],
  ['node', 'nodes', false], ['persistentvolume', 'items', false],
  ['storageclass', 'items', false], ['cronjob', 'items', true],
  ['daemonset', 'daemonSets', true], ['deployment', 'deployments', true],
  ['job', 'jobs', true], ['pod', 'pods', true], ['replicaset', 'replicaSets', true],
  ['replicationcontroller', 'replicationControllers', true],
  ['statefulset', 'statefulSets', true], ['ingress', 'items', true],
  ['service', 'services', true], ['configmap', 'items', true],
  ['persistentvolumeclaim', 'items', true], ['secret', 'secrets', true],
  ['serviceaccount', 'items', true], ['role', 'items', true],
];

window.searchpage = {
  found: {},

  async card(kind, key, namespaced, query, namespace, token) {
    const params = [['itemsPerPage', '10'], ['page', '1'], ['sortBy', 'd,creationTimestamp'],
                    ['filterBy', 'name,' + query]];
    const path = 'api/v1/' + kind + (namespaced && namespace ? '/' + namespace : '');
    const reply = await fetch(
      path + '?' + params.map(([k, v]) => k + '=' + angularEncoding(v)).join('&'),
      { headers: { Authorization: 'Bearer ' + token } });
    if (!reply.ok) {
      throw new Error(kind + ' list: ' + reply.status + ' ' + (await reply.text()));
    }
    const body = await reply.json();
    const names = body[key].map(item => item.objectMeta.name);
    const card = document.createElement('section');
    card.id = 'card-' + kind;
    const title = document.createElement('h2');
    title.textContent = kind + ' (' + body.listMeta.totalItems + ')';
    card.appendChild(title);
    const list = document.createElement('ul');
    for (const name of names) {
      const row = document.createElement('li');
      row.textContent = name;
      list.appendChild(row);
    }
    if (names.length === 0) {
      list.textContent = 'There is nothing to display here';
    }
    card.appendChild(list);
    return [kind, names, card];
  },

  async load(query, namespace, token) {
    const cards = await Promise.all(CARDS.map(
      ([kind, key, namespaced]) => this.card(kind, key, namespaced, query, namespace, token)));
    const results = document.getElementById('results');
    results.textContent = '';
    this.found = {};
    for (const [kind, names, card] of cards) {
      this.found[kind] = names;
      results.appendChild(card);
    }
    return this.found;
  },
};
