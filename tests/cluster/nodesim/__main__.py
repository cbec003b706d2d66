"""python -m tests.cluster.nodesim --apiserver URL --ca-file CA --token-file F --state-dir DIR
--nodes N --ready-file FILE: runs until SIGTERM or SIGINT (then exits 0)."""

import argparse
import asyncio
import logging
import signal
import sys

from .simulator import Simulator


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m tests.cluster.nodesim", description=__doc__)
    p.add_argument("--apiserver", required=True, help="https://127.0.0.1:PORT")
    p.add_argument("--ca-file", required=True, help="CA that signed the apiserver's certificate")
    p.add_argument("--token-file", required=True, help="file holding an admin bearer token")
    p.add_argument("--state-dir", required=True, help="logs, exec scratch dirs, kubelet cert")
    p.add_argument("--nodes", type=int, default=2)
    p.add_argument("--ready-file", required=True, help="JSON written once the nodes are Ready")
    return p.parse_args(argv)


async def main(args):
    with open(args.token_file) as f:
        token = f.read().strip()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    sim = Simulator(args.apiserver, args.ca_file, token, args.state_dir, args.nodes,
                    args.ready_file)
    await sim.run(stop)
    logging.getLogger("nodesim").info("stopped")


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr,
                        format="%(asctime)s nodesim %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(main(parse_args(sys.argv[1:])))
    except Exception as e:
        logging.getLogger("nodesim").error("stopped: %s", e)
        sys.exit(1)
