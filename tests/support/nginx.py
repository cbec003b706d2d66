"""Debian's nginx in front of several gateways, as a plain load balancer would be.

Started by the test on a free loopback port with its own configuration, prefix, logs and pid
file in a temporary directory (never the system service), in the foreground so that the test
owns its process. HTTP and the SockJS websocket transport go round robin; the other SockJS
transports (xhr-streaming, xhr-polling, eventsource and their xhr_send) are routed by the
session segment of their path, which is what SockJS asks of a load balancer: every request of
one SockJS session must reach the replica holding it.
"""

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from tests.cluster.procs import free_ports

CONFIG = """
worker_processes 1;
daemon off;
pid {dir}/nginx.pid;
error_log {dir}/error.log warn;
events {{ worker_connections 1024; }}
http {{
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    # The SockJS query carries a terminal session id: no access log.
    access_log off;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      '';
    }}
    # /api/sockjs/<server>/<session>/<transport>: the session segment.
    map $uri $sockjs_session {{
        ~^/api/sockjs/[^/]+/(?<session>[^/]+)/  $session;
        default                                 "";
    }}

    upstream gateways {{
{servers}
        keepalive 32;
    }}
    upstream gateways_by_session {{
        hash $sockjs_session consistent;
{servers}
        keepalive 32;
    }}

    server {{
        listen 127.0.0.1:{port};
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header Connection "";
        proxy_read_timeout 60s;
        # A replica that refuses or drops a connection: the next one gets the request.
        proxy_next_upstream error timeout;
        proxy_next_upstream_timeout 20s;

        location / {{
            proxy_pass http://gateways;
        }}
        location ~ ^/api/sockjs/[^/]+/[^/]+/websocket$ {{
            proxy_pass http://gateways;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 1h;
        }}
        location ~ ^/api/sockjs/[^/]+/[^/]+/ {{
            proxy_pass http://gateways_by_session;
            proxy_buffering off;
            proxy_read_timeout 1h;
        }}
    }}
}}
"""


class Nginx:
    def __init__(self, proc, url, directory):
        self.proc = proc
        self.url = url
        self.directory = directory

    @classmethod
    def start(cls, upstreams, timeout=10):
        """nginx on a free 127.0.0.1 port in front of `upstreams` ("127.0.0.1:port" each)."""
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        assert os.path.exists(binary), "nginx is needed (bin/bootstrap installs nginx-light)"
        [port] = free_ports(1)
        directory = tempfile.mkdtemp(prefix="nginx-")
        os.chmod(directory, 0o755)  # nginx's workers run as another user when we are root
        # A replica that fails is skipped for a second, then tried again.
        servers = "\n".join("        server %s max_fails=1 fail_timeout=1s;" % u
                            for u in upstreams)
        conf = os.path.join(directory, "nginx.conf")
        with open(conf, "w") as f:
            f.write(CONFIG.format(dir=directory, port=port, servers=servers))
        proc = subprocess.Popen([binary, "-p", directory, "-c", conf],
                                stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        nginx = cls(proc, "http://127.0.0.1:%d" % port, directory)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("nginx exited with %s:\n%s" % (proc.returncode,
                                                                  nginx.errors()))
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    return nginx
            except OSError:
                time.sleep(0.05)
        nginx.stop()
        raise RuntimeError("nginx did not listen within %ss" % timeout)

    def errors(self):
        try:
            with open(os.path.join(self.directory, "error.log"), errors="replace") as f:
                return f.read()[-4000:]
        except OSError:
            return ""

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)  # graceful: workers end, then the master
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.directory, ignore_errors=True)
