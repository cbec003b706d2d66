"""Pure functions from raw API objects (plain dicts) to the wire shapes of the reference, one
module per family; ``common`` holds the shared building blocks. No I/O, no Tornado."""
