"""The audit tests' PostgreSQL server (tests/support/postgres.py), started once for the
package when a test asks for it, removed afterwards."""

import pytest

from tests.support.postgres import PostgresServer


@pytest.fixture(scope="package")
def postgres():
    server = PostgresServer()
    try:
        yield server.start()
    finally:
        server.remove()
