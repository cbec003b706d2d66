"""The bounded thread pool where blocking cluster calls run, off the event loop."""

import asyncio
import concurrent.futures
import contextvars
import functools


class Executor:
    def __init__(self, max_workers):
        self.max_workers = max_workers
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_workers, thread_name_prefix="cluster-call")

    async def run(self, fn, *args, **kwargs):
        call = functools.partial(contextvars.copy_context().run, fn, *args, **kwargs)
        return await asyncio.get_running_loop().run_in_executor(self._pool, call)

    def shutdown(self):
        self._pool.shutdown(wait=False, cancel_futures=True)
