// A shell client as the upstream web UI's shell page is one: ask the gateway for a session
// with the bearer token, open SockJS at the relative URL api/sockjs?<id>, bind the session and
// send the terminal size at once, then stdin and resize frames. The test reads `term`.
'use strict';

window.term = {
  id: null,
  transport: null,
  output: '',
  closed: null,
  sock: null,

  // GET {shellPath} with the token -> {id}; resolves with the session id, or rejects with
  // what went wrong (an HTTP status, or the browser refusing the request).
  async session(shellPath, token) {
    const reply = await fetch(shellPath, { headers: { Authorization: 'Bearer ' + token } });
    if (!reply.ok) {
      throw new Error('shell request: ' + reply.status + ' ' + (await reply.text()));
    }
    this.id = (await reply.json()).id;
    return this.id;
  },

  // Opens SockJS at `base` + 'api/sockjs?' + id (base '' = this page's own origin); resolves
  // with the transport once bound, or with null when the connection closes without opening.
  open(id, options, base, rows, cols) {
    return new Promise((resolve) => {
      const sock = new SockJS((base || '') + 'api/sockjs?' + id, null, options || {});
      this.sock = sock;
      sock.onopen = () => {
        this.transport = sock.transport;
        sock.send(JSON.stringify({ Op: 'bind', SessionID: id }));
        sock.send(JSON.stringify({ Op: 'resize', Rows: rows || 24, Cols: cols || 80 }));
        resolve(sock.transport);
      };
      sock.onmessage = (e) => {
        const frame = JSON.parse(e.data);
        if (frame.Op === 'stdout') {
          this.output += frame.Data;
          document.getElementById('out').textContent = this.output;
        }
      };
      sock.onclose = (e) => {
        this.closed = { code: e.code, reason: e.reason };
        resolve(null);
      };
    });
  },

  stdin(text) {
    this.sock.send(JSON.stringify({ Op: 'stdin', Data: text, Rows: 0, Cols: 0 }));
  },

  resize(rows, cols) {
    this.sock.send(JSON.stringify({ Op: 'resize', Rows: rows, Cols: cols }));
  },
};
