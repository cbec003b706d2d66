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
'use strict';

const readline = require('readline');
const { performance } = require('perf_hooks');
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
