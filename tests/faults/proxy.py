"""A TCP fault proxy on 127.0.0.1 in front of the real API server, for the faults suite.

Bytes pass through untouched (TLS included: the gateway still verifies the API server's
certificate, whose names include 127.0.0.1), so whatever the gateway sees is what a broken
network or a stuck API server would show it. The proxy runs an asyncio loop in a thread of the
test process; every switch is thread-safe and takes effect at once:

* ``passing()``: forward everything (the default);
* ``refuse()``: stop listening (new connections are refused) and reset every open one (RST);
* ``hang()``: accept new connections but forward nothing, and forward nothing more on the open
  ones (a stuck API server, a partition behind a load balancer);
* ``drop()``: black-hole the connections open now, silently (no FIN, no RST ever), while new
  connections pass (a NAT or firewall that forgot them);
* ``reset()``: reset every open connection, new ones pass;
* ``latency(seconds)``: delay every chunk by that much, both ways;
* ``trickle(size, interval)``: the API server's bytes arrive ``size`` at a time, one piece
  every ``interval`` seconds.

Connections black-holed by ``hang()`` or ``drop()`` stay so until the gateway closes them: a
connection that a network lost does not come back. Bounded: at most ``MAX_CONNECTIONS`` at
once (more are closed at once), and ``stop()`` closes everything it opened and joins its thread.
"""

import asyncio
import socket
import struct
import threading

from tests.cluster.procs import free_ports

MAX_CONNECTIONS = 512
CHUNK = 65536


class _Link:
    """One client connection and its upstream."""

    def __init__(self, client_writer):
        self.client = client_writer
        self.upstream = None
        self.blackholed = False

    def writers(self):
        return [w for w in (self.client, self.upstream) if w is not None]


class FaultProxy:
    def __init__(self, target_host, target_port, port=None, scheme="https"):
        self.target = (target_host, target_port)
        self.port = port or free_ports(1)[0]
        self.url = "%s://127.0.0.1:%d" % (scheme, self.port)
        self.accepted = 0
        self._mode = "pass"
        self._latency = 0.0
        self._trickle = None
        self._links = set()
        self._tasks = set()   # every task of the proxy's, cancelled and awaited by stop()
        self._server = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="fault-proxy",
                                        daemon=True)

    @classmethod
    def in_front_of(cls, url):
        """A started proxy in front of ``scheme://host:port``; its ``url`` has that scheme."""
        scheme, rest = url.split("://", 1)
        host, port = rest.split("/", 1)[0].rsplit(":", 1)
        return cls(host, int(port), scheme=scheme).start()

    # --- lifecycle --------------------------------------------------------------------------

    def start(self):
        self._thread.start()
        self._call(self._listen())
        return self

    def stop(self):
        if not self._thread.is_alive():
            return
        self._call(self._close_all())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def _call(self, coro, timeout=10):
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # --- switches ---------------------------------------------------------------------------

    def passing(self):
        """Forward everything again (black-holed connections stay black-holed)."""
        self._call(self._set(mode="pass", latency=0.0, trickle=None))

    def refuse(self):
        self._call(self._set(mode="refuse"))

    def hang(self):
        self._call(self._set(mode="hang"))

    def drop(self):
        self._call(self._blackhole_open())

    def reset(self):
        self._call(self._reset_open())

    def latency(self, seconds):
        self._call(self._set(latency=float(seconds)))

    def trickle(self, size, interval):
        self._call(self._set(trickle=(int(size), float(interval))))

    @property
    def open_connections(self):
        return len(self._links)

    # --- on the proxy's loop ----------------------------------------------------------------

    async def _set(self, mode=None, latency=None, trickle=False):
        if latency is not None:
            self._latency = latency
        if trickle is not False:
            self._trickle = trickle
        if mode is None or mode == self._mode:
            return
        self._mode = mode
        if mode == "refuse":
            await self._stop_listening()
            await self._reset_open()
        elif mode == "hang":
            await self._blackhole_open()
        if mode != "refuse" and self._server is None:
            await self._listen()

    async def _listen(self):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))
        self._server = await asyncio.start_server(self._accept, sock=sock)

    async def _stop_listening(self):
        if self._server is not None:
            self._server.close()
            self._server = None

    async def _blackhole_open(self):
        for link in self._links:
            link.blackholed = True

    async def _reset_open(self):
        for link in list(self._links):
            self._close(link, rst=True)

    async def _close_all(self):
        await self._stop_listening()
        for link in list(self._links):
            self._close(link, rst=False)
        tasks = [task for task in self._tasks if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _spawn(self, coro):
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _close(self, link, rst):
        for writer in link.writers():
            sock = writer.get_extra_info("socket")
            if rst and sock is not None:
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            writer.transport.abort()
        self._links.discard(link)

    async def _accept(self, reader, writer):
        self.accepted += 1
        link = _Link(writer)
        if len(self._links) >= MAX_CONNECTIONS:
            writer.transport.abort()
            return
        self._links.add(link)
        if self._mode == "hang":
            link.blackholed = True
            me = asyncio.current_task()
            self._tasks.add(me)
            me.add_done_callback(self._tasks.discard)
            await self._pump(link, reader, None, upstream=False)
            return
        try:
            up_reader, link.upstream = await asyncio.open_connection(*self.target)
        except OSError:
            self._close(link, rst=True)
            return
        self._spawn(self._pump(link, reader, link.upstream, False))
        self._spawn(self._pump(link, up_reader, writer, True))

    async def _pump(self, link, reader, writer, upstream):
        """Copies one direction until EOF, each chunk due ``latency`` after it arrived (so a
        request's head and body are late by the latency, not by twice it); a black-holed
        link's bytes are read and discarded (the peer sees them taken, and nothing ever comes
        back)."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue(maxsize=64)
        sender = self._spawn(self._send(link, queue, writer, upstream))
        try:
            while True:
                data = await reader.read(CHUNK)
                if not data:
                    break
                if link.blackholed or writer is None:
                    continue
                await queue.put((loop.time() + self._latency, data))
            await queue.put(None)
            await sender
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            sender.cancel()
            if link in self._links:
                self._close(link, rst=False)

    async def _send(self, link, queue, writer, upstream):
        loop = asyncio.get_running_loop()
        while True:
            item = await queue.get()
            if item is None:
                return
            due, data = item
            if due > loop.time():
                await asyncio.sleep(due - loop.time())
            if link.blackholed:
                continue
            if upstream and self._trickle:
                await self._trickle_out(link, data, writer)
            else:
                writer.write(data)
                await writer.drain()

    async def _trickle_out(self, link, data, writer):
        size, interval = self._trickle
        for start in range(0, len(data), size):
            if link.blackholed:
                return
            writer.write(data[start:start + size])
            await writer.drain()
            await asyncio.sleep(interval)
