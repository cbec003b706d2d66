// Drives the real sockjs-client (1.6.1) for the terminal tests and the benchmark.
//
// Commands arrive on stdin, one JSON object a line:
//   {"cmd": "open", "name": "a", "url": "http://127.0.0.1:PORT/api/sockjs?ID",
//    "transports": ["xhr-streaming"], "bind": "ID", "rows": 24, "cols": 80}
//       opens a SockJS connection; with "bind", sends the bind frame and then the resize frame
//       as soon as it is open, as the web UI does
//   {"cmd": "send", "name": "a", "frame": {"Op": "stdin", "Data": "ls\r"}}   a frame as JSON
//   {"cmd": "raw", "name": "a", "data": "anything"}                         a message as is
//       (both wait for the connection to open when it is still connecting)
//   {"cmd": "close", "name": "a"}
// Events leave on stdout, one JSON object a line, each with "t" (ms, monotonic clock):
//   {"event": "open", "name": "a", "transport": "websocket"}
//   {"event": "message", "name": "a", "data": {...frame...}}
//   {"event": "sent", "name": "a"}
//   {"event": "close", "name": "a", "code": 1, "reason": "Process exited"}
// The end of stdin closes every connection and ends the process.
//
// A browser keeps the cookies a server sets and sends them back on its same-origin requests
// (XHR and EventSource included); node's http module does neither, so the requests of the
// client (its XHR driver and the eventsource package both call http.request) go through a
// cookie jar here: per origin, honouring Path, as a browser would. The gateway proves the
// owner of a SockJS session with such a cookie.
'use strict';

const http = require('http');
const https = require('https');
const readline = require('readline');
const { performance } = require('perf_hooks');

const jar = new Map(); // "host:port" -> Map(name + " " + path -> {name, value, path})

function pathMatches(requestPath, cookiePath) {
  return requestPath === cookiePath || (requestPath.startsWith(cookiePath) &&
    (cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'));
}

function withCookies(module) {
  const original = module.request;
  module.request = function (options, callback) {
    if (typeof options === 'string' || options instanceof URL) {
      return original.apply(module, arguments);  // not used by the client
    }
    const origin = (options.hostname || options.host) + ':' + options.port;
    const path = (options.path || '/').split('?')[0];
    const cookies = jar.get(origin) || new Map();
    const sent = [];
    for (const c of cookies.values()) {
      if (pathMatches(path, c.path)) sent.push(c.name + '=' + c.value);
    }
    if (sent.length) {
      options = Object.assign({}, options, {
        headers: Object.assign({}, options.headers || {}, { Cookie: sent.join('; ') }),
      });
    }
    const req = original.call(module, options, callback);
    req.on('response', (res) => {
      for (const line of res.headers['set-cookie'] || []) {
        const [pair, ...attributes] = line.split(';').map((s) => s.trim());
        const eq = pair.indexOf('=');
        let cookiePath = path.slice(0, path.lastIndexOf('/')) || '/';
        for (const a of attributes) {
          if (a.toLowerCase().startsWith('path=')) cookiePath = a.slice(5);
        }
        if (!jar.has(origin)) jar.set(origin, new Map());
        const name = pair.slice(0, eq);
        jar.get(origin).set(name + ' ' + cookiePath,
                            { name, value: pair.slice(eq + 1), path: cookiePath });
      }
    });
    return req;
  };
}
withCookies(http);
withCookies(https);

const SockJS = require('sockjs-client');

const socks = new Map();

function emit(event) {
  event.t = performance.now();
  process.stdout.write(JSON.stringify(event) + '\n');
}

function open(cmd) {
  const options = cmd.transports ? { transports: cmd.transports } : {};
  const sock = new SockJS(cmd.url, null, options);
  const name = cmd.name;
  socks.set(name, sock);
  sock.waiting = [];  // messages given before the connection opened
  sock.onopen = () => {
    emit({ event: 'open', name, transport: sock.transport });
    if (cmd.bind !== undefined) {
      sock.send(JSON.stringify({ Op: 'bind', SessionID: cmd.bind }));
      if (cmd.rows) {
        sock.send(JSON.stringify({ Op: 'resize', Rows: cmd.rows, Cols: cmd.cols }));
      }
    }
    for (const message of sock.waiting) {
      send(name, sock, message);
    }
    sock.waiting = [];
  };
  sock.onmessage = (e) => {
    let data = e.data;
    try {
      data = JSON.parse(e.data);
    } catch (_) {
      // not a terminal frame: report it as text
    }
    emit({ event: 'message', name, data });
  };
  sock.onclose = (e) => {
    socks.delete(name);
    emit({ event: 'close', name, code: e.code, reason: e.reason });
  };
}

function send(name, sock, message) {
  if (sock.readyState === SockJS.CONNECTING) {
    sock.waiting.push(message);
    return;
  }
  try {
    sock.send(message);
    emit({ event: 'sent', name });
  } catch (e) {
    emit({ event: 'error', name, message: e.message });
  }
}

function handle(cmd) {
  if (cmd.cmd === 'open') {
    open(cmd);
    return;
  }
  const sock = socks.get(cmd.name);
  if (!sock) {
    emit({ event: 'error', name: cmd.name, message: 'no open connection' });
  } else if (cmd.cmd === 'send') {
    send(cmd.name, sock, JSON.stringify(cmd.frame));
  } else if (cmd.cmd === 'raw') {
    send(cmd.name, sock, cmd.data);
  } else if (cmd.cmd === 'close') {
    sock.close();
  } else {
    emit({ event: 'error', name: cmd.name, message: 'unknown command ' + cmd.cmd });
  }
}

const input = readline.createInterface({ input: process.stdin });
input.on('line', (line) => {
  if (line.trim()) {
    handle(JSON.parse(line));
  }
});
input.on('close', () => {
  for (const sock of socks.values()) {
    sock.close();
  }
  // Let the close requests leave before the process ends.
  setTimeout(() => process.exit(0), 300);
});
