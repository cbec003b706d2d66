from tests.support.fixtures import gateway  # noqa: F401
