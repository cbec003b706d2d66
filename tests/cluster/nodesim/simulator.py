"""Wiring: kubelet servers, node registration, the pod engine, heartbeats, the ready file."""

import asyncio
import json
import logging
import os

from . import certs
from .apiclient import ApiClient
from .kubelet import KubeletServer
from .nodes import KUBE_VERSION, NodeAgent
from .pods import PodEngine

log = logging.getLogger("nodesim")

HEARTBEAT_SECONDS = 10
REGISTER_ATTEMPTS = 20
SYNC_TIMEOUT = 30


def write_json_atomically(path, data):
    tmp = "%s.tmp.%d" % (path, os.getpid())
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, path)


class Simulator:
    def __init__(self, apiserver, ca_file, token, state_dir, node_count, ready_file):
        self.state_dir = os.path.abspath(state_dir)
        self.ready_file = ready_file
        self.names = ["sim-node-%d" % i for i in range(1, node_count + 1)]
        self.api = ApiClient(apiserver, ca_file, token,
                             "kubelet/%s (linux/amd64) nodesim" % KUBE_VERSION)
        self.engine = PodEngine(self.api, self.state_dir,
                                {name: i for i, name in enumerate(self.names, 1)})
        self.kubelets = []
        self.agents = []
        self._parent = os.getppid()

    async def run(self, stop):
        """Runs until stop (an asyncio.Event) is set; raises when something vital fails."""
        tasks = []
        try:
            tasks.append(await self._start())
            tasks.append(asyncio.ensure_future(self._heartbeats(stop)))
            tasks.append(asyncio.ensure_future(stop.wait()))
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task.exception():
                    raise task.exception()
        finally:
            for task in tasks:
                task.cancel()
            self._stop()

    async def _start(self):
        """Serves, registers, syncs pods, writes the ready file; returns the pod engine's task."""
        os.makedirs(os.path.join(self.state_dir, "logs"), exist_ok=True)
        cert, key = certs.write_self_signed(os.path.join(self.state_dir, "kubelet"), self.names)
        context = certs.server_context(cert, key)
        for i, name in enumerate(self.names, 1):
            server = KubeletServer(name, self.engine, self.state_dir, context)
            self.kubelets.append(server)
            self.agents.append(NodeAgent(self.api, name, i, server.listen()))
        for agent in self.agents:
            await self._register(agent)
        engine = asyncio.ensure_future(self.engine.run())
        synced = asyncio.ensure_future(self.engine.synced.wait())
        await asyncio.wait([engine, synced], timeout=SYNC_TIMEOUT,
                           return_when=asyncio.FIRST_COMPLETED)
        if not synced.done():
            synced.cancel()
            engine.cancel()
            raise RuntimeError("could not list pods within %d s" % SYNC_TIMEOUT)
        write_json_atomically(self.ready_file, {
            "nodes": [{"name": a.name, "kubeletPort": a.kubelet_port} for a in self.agents],
            "logDir": os.path.join(self.state_dir, "logs"), "pid": os.getpid()})
        log.info("ready: %s", ", ".join("%s on port %d" % (a.name, a.kubelet_port)
                                        for a in self.agents))
        return engine

    async def _register(self, agent):
        for attempt in range(1, REGISTER_ATTEMPTS + 1):
            try:
                await agent.register()
                return
            except Exception as e:  # the apiserver may still be warming up
                if attempt == REGISTER_ATTEMPTS:
                    raise RuntimeError("could not register %s: %s" % (agent.name, e)) from e
                log.info("registering %s failed (%s), retrying", agent.name, e)
                await asyncio.sleep(0.5)

    async def _heartbeats(self, stop):
        failures = 0
        while not stop.is_set():
            await asyncio.sleep(HEARTBEAT_SECONDS)
            if os.getppid() != self._parent:
                log.warning("parent process is gone, stopping")
                return
            for agent in self.agents:
                try:
                    await agent.heartbeat()
                    failures = 0
                except Exception as e:
                    failures += 1
                    log.warning("heartbeat of %s failed: %s", agent.name, e)
                    if failures > 30:
                        raise

    def _stop(self):
        # cancelled watches and status writes make Tornado report their torn-down connections
        logging.getLogger("tornado.application").setLevel(logging.CRITICAL)
        self.engine.stop()
        for server in self.kubelets:
            server.stop()
        self.api.close()
