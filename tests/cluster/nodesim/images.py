"""What a simulated image looks like: its full reference, its digest, and which shells it has."""

import hashlib
import os
import shutil

SHELLS = ("bash", "sh")
_SHELL_NAMES = frozenset(("bash", "sh", "ash", "dash", "zsh", "ksh"))
EXEC_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def full_reference(image):
    """'nginx:1.19' -> 'docker.io/library/nginx:1.19', as a container runtime reports it."""
    name, at, digest = image.partition("@")
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = "docker.io/library/" + name
    elif "." not in first and ":" not in first and first != "localhost":
        name = "docker.io/" + name
    if at:
        return name + "@" + digest
    if ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    return name


def image_id(image):
    """A stable repo digest for the image, like 'docker.io/library/nginx@sha256:...'."""
    ref = full_reference(image)
    if "@" in ref:
        return ref
    repo = ref.rsplit(":", 1)[0]
    return "%s@sha256:%s" % (repo, hashlib.sha256(ref.encode()).hexdigest())


def shells(image):
    """Shells present in the image: distroless none, busybox/alpine sh only, others bash and sh."""
    lowered = image.lower()
    if "distroless" in lowered:
        return ()
    if "busybox" in lowered or "alpine" in lowered:
        return ("sh",)
    return SHELLS


def resolve_command(image, argv0):
    """Host path to run for argv0 inside this image, or None when the image has no such file."""
    base = os.path.basename(argv0)
    if base in _SHELL_NAMES and base not in shells(image):
        return None
    return shutil.which(argv0, path=EXEC_PATH)
