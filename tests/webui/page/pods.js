// A pod list as the upstream web UI's is one (modules/web, resourcelist/pod): it asks for
// api/v1/pod/<namespace>?itemsPerPage=10&page=1&sortBy=d,creationTimestamp with the bearer
// token and no metricNames; a CPU or memory cell shows the last value of the pod's
// metrics.cpuUsageHistory / memoryUsageHistory (points ordered by Date.parse(timestamp)),
// formatted as cores (the value is in millicores) or bytes, and "-" when the pod's metrics
// have no such history. The test reads the cells and `podlist`.
'use strict';

function formatted(value, base, suffixes) {
  let power = 0;
  while (value >= base && power < suffixes.length - 1) {
    value /= base;
    power += 1;
  }
  return (Math.round(value * 100) / 100).toString() + suffixes[power];
}

function lastValue(history) {
  const points = history.map(({timestamp, value}) => [Date.parse(timestamp), value]);
  points.sort((a, b) => a[0] - b[0]);
  return points.length > 0 ? points[points.length - 1][1] : undefined;
}

window.podlist = {
  body: null,

  async load(namespace, token) {
    const reply = await fetch(
      'api/v1/pod/' + namespace + '?itemsPerPage=10&page=1&sortBy=d,creationTimestamp',
      { headers: { Authorization: 'Bearer ' + token } });
    if (!reply.ok) {
      throw new Error('pod list: ' + reply.status + ' ' + (await reply.text()));
    }
    this.body = await reply.json();
    const rows = document.querySelector('#pods tbody');
    rows.textContent = '';
    for (const pod of this.body.pods) {
      const metrics = pod.metrics;
      const cells = [
        pod.objectMeta.name,
        metrics && metrics.cpuUsageHistory
          ? formatted(lastValue(metrics.cpuUsageHistory), 1000, ['m', '', 'k', 'M', 'G'])
          : '-',
        metrics && metrics.memoryUsageHistory
          ? formatted(lastValue(metrics.memoryUsageHistory), 1024, ['', 'Ki', 'Mi', 'Gi', 'Ti'])
          : '-',
      ];
      const row = document.createElement('tr');
      for (const text of cells) {
        const cell = document.createElement('td');
        cell.textContent = text;
        row.appendChild(cell);
      }
      rows.appendChild(row);
    }
    return this.body.pods.length;
  },
};
