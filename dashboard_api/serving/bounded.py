"""Parsing of request data with bounded work: YAML and JSON, off the event loop when large.

The limits are the project's and decide before any third-party parser can, so that the answer
and its message do not depend on the installed version of a parser: the text's nesting is read
first without a parser (nesting.py: libyaml 0.2.6 refuses flow nesting past 1,000 while its
scanner reads ahead of the events counted here, ujson past 1,024); the request handlers bound
the size of the text before it comes here.

YAML goes through PyYAML's C parser (libyaml; a loud warning at start-up when the installed
PyYAML lacks it) in two passes: a scan of the event stream that counts documents, nodes and
nesting depth and the size that aliases would expand to, refusing past the limits, and only then
the safe loader. Aliases are allowed (kubectl takes them) but counted as expanded: a few hundred
bytes of nested aliases cannot become gigabytes when the result is encoded for the API server.
The depth is checked before the C composer (which recurses) sees the document.

JSON bodies are checked against ``MAX_JSON_DEPTH`` before ujson decodes them. ``run`` puts such
work on a small pool of its own, so that a parse never waits for, nor holds up, the threads of
API-server calls.
"""

import asyncio
import concurrent.futures
import contextvars
import functools
import logging

import ujson
import yaml

from dashboard_api.serving import nesting

log = logging.getLogger("dashboard_api.bounded")

try:
    from yaml import CSafeLoader as Loader
    C_LOADER = True
except ImportError:  # a PyYAML wheel built without libyaml
    from yaml import SafeLoader as Loader
    C_LOADER = False

MAX_JSON_DEPTH = 100
# Bodies larger than this are decoded in the parse pool rather than on the event loop.
OFF_LOOP_BYTES = 64 * 1024
PARSE_WORKERS = 2


class InputError(ValueError):
    """The input is malformed or over a limit; the message says which (safe to show)."""


class YamlLimits:
    def __init__(self, documents, nodes, depth, expanded_bytes):
        self.documents = documents
        self.nodes = nodes
        self.depth = depth
        self.expanded_bytes = expanded_bytes


# A deploy file (4 MiB at most): hundreds of objects, CRD schemas nest some tens of levels.
DEPLOY_FILE = YamlLimits(documents=500, nodes=300_000, depth=100, expanded_bytes=16 << 20)
# A kubeconfig (256 KiB at most; hundreds of contexts take a few thousand nodes).
KUBECONFIG = YamlLimits(documents=1, nodes=20_000, depth=40, expanded_bytes=1 << 20)


def warn_without_libyaml():
    """Called at start-up: says loudly when YAML is parsed by the pure-Python parser."""
    if not C_LOADER:
        log.warning("PyYAML has no libyaml (yaml.CSafeLoader is missing): YAML bodies are "
                    "parsed by the pure-Python parser, several times slower; install a PyYAML "
                    "wheel built with libyaml")


def _too_deep(limit):
    return InputError("nested deeper than %d levels" % limit)


def _scan(text, limits):
    """Walks the YAML event stream once; InputError when a limit is passed."""
    if nesting.yaml_depth(text, limits.depth) > limits.depth:
        raise _too_deep(limits.depth)
    loader = Loader(text)
    documents = nodes = expanded = 0
    anchors = {}   # anchor -> (nodes, bytes) of its node, aliases inside counted as expanded
    stack = []     # open collections: [anchor, nodes, bytes]
    try:
        while True:
            event = loader.get_event()
            kind = type(event)
            if kind is yaml.StreamEndEvent:
                return
            if kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > limits.documents:
                    raise InputError("more than %d documents" % limits.documents)
                anchors = {}
                continue
            if kind in (yaml.MappingStartEvent, yaml.SequenceStartEvent):
                if len(stack) >= limits.depth:
                    raise _too_deep(limits.depth)
                stack.append([event.anchor, 1, 0])
                nodes += 1
                continue
            if kind is yaml.ScalarEvent:
                size = (1, len(event.value))
                if event.anchor:
                    anchors[event.anchor] = size
                nodes += 1
                expanded += size[1]
            elif kind is yaml.AliasEvent:
                size = anchors.get(event.anchor)
                if size is None:
                    raise InputError("found undefined alias %r" % event.anchor[:64])
                nodes += size[0]
                expanded += size[1]
            elif kind in (yaml.MappingEndEvent, yaml.SequenceEndEvent):
                anchor, count, length = stack.pop()
                size = (count, length)
                if anchor:
                    anchors[anchor] = size
            else:
                continue
            if nodes > limits.nodes:
                raise InputError("more than %d nodes (aliases counted as expanded)"
                                 % limits.nodes)
            if expanded > limits.expanded_bytes:
                raise InputError("more than %d bytes of scalars (aliases counted as expanded)"
                                 % limits.expanded_bytes)
            if stack:
                stack[-1][1] += size[0]
                stack[-1][2] += size[1]
    finally:
        loader.dispose()


def _yaml_error(exc):
    return InputError("not valid YAML or JSON: %s" % " ".join(str(exc).split())[:500])


def yaml_documents(text, limits):
    """Every document of a YAML (or JSON) stream, within ``limits``; InputError otherwise."""
    try:
        _scan(text, limits)
        return list(yaml.load_all(text, Loader=Loader))
    except yaml.YAMLError as exc:
        raise _yaml_error(exc)
    except RecursionError:
        raise InputError("nested too deeply")


def yaml_document(text, limits):
    """The one document of ``text`` (None when empty); InputError otherwise."""
    docs = yaml_documents(text, limits)
    if len(docs) > 1:
        raise InputError("expected a single document, found %d" % len(docs))
    return docs[0] if docs else None


def json_loads(data, max_depth=MAX_JSON_DEPTH):
    """Decoded JSON within ``max_depth``; InputError when malformed or too deep."""
    if nesting.json_depth(data, max_depth) > max_depth:
        raise _too_deep(max_depth)
    try:
        return ujson.loads(data)
    except ValueError:
        raise InputError("not valid JSON")


_pool = None


async def run(fn, *args):
    """``fn(*args)`` in the parse pool (a few threads, apart from the API-server calls')."""
    global _pool
    if _pool is None:
        _pool = concurrent.futures.ThreadPoolExecutor(PARSE_WORKERS, thread_name_prefix="parse")
    call = functools.partial(contextvars.copy_context().run, fn, *args)
    return await asyncio.get_running_loop().run_in_executor(_pool, call)
