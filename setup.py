from setuptools import find_packages, setup

from dashboard_api.version import VERSION

setup(
    name="dashboard-api",
    version=VERSION,
    description="HTTP/JSON gateway for the Kubernetes Dashboard web UI",
    packages=find_packages(include=["dashboard_api", "dashboard_api.*",
                                    "metrics_sidecar", "metrics_sidecar.*"]),
    # The web pages' files: the home page's (dashboard_api/web/home, served at / without
    # --web-root) and the sign-in's session script (dashboard_api/web/session.js).
    package_data={"dashboard_api.web": ["home/*.html", "home/*.css", "home/*.js",
                                        "home/*.svg", "*.js"]},
    # Tested on each (noxfile.py; docs/install.md, "Supported Pythons"); the locks in
    # requirements/ serve every version from python_requires up.
    python_requires=">=3.9",
    classifiers=[
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.9",
        "Programming Language :: Python :: 3.10",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.12",
        "Programming Language :: Python :: 3.13",
        "Programming Language :: Python :: Implementation :: CPython",
    ],
    install_requires=[
        "tornado>=6.2",
        "sockjs-tornado==1.0.7",
        "kubernetes>=28",
        "cryptography>=41",
        "prometheus-client>=0.17",
        "ujson>=5",
        "PyYAML>=6",
        # Issue 19: the bounded (LRU + TTL) per-caller authorization answers.
        "cachetools>=5",
        # Issue 19: the watch cache decodes LIST pages and watch events with msgspec.
        "msgspec>=0.18",
        # Issue 39: the audit trail in a PostgreSQL database shared by replicas. psycopg 3
        # over libpq (its binary wheel bundles it): the URL takes every libpq option (TLS
        # modes, CA files, password files), and its pipelined batches wrote 20,000 entries
        # in 0.73 s against pg8000's 7.2 s (docs/audit.md).
        "psycopg[binary]>=3.1",
    ],
    extras_require={
        "test": [
            "pytest>=7",
            "pytest-tornado==0.8.1",
            "hypothesis>=6",
            # Drives Debian's chromium (installed by bin/bootstrap) in the browser tests; it
            # never downloads a browser of its own.
            "playwright>=1.40",
            # pytest-tornado imports pkg_resources, which setuptools 81 removed.
            "setuptools<81",
            # Issue 15: the API fuzzer, the OpenAPI validator and the TLS profile scan.
            "schemathesis>=4,<5",
            "openapi-spec-validator>=0.7",
            "sslyze>=6,<7",
            # Issue 20: conf/kubernetes validated offline against current releases' schemas.
            "kubernetes-validate>=1.35",
            # Issue 18: the catastrophic-backtracking linter (tests/hostile/test_patterns.py).
            "regexploit==1.0.0",
        ],
    },
    entry_points={
        "console_scripts": [
            "dashboard-api=dashboard_api.app.main:main",
            "metrics-sidecar=metrics_sidecar.__main__:main",
        ],
    },
)
