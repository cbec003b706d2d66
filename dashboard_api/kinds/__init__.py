"""What the project knows about each resource kind: one ``Kind`` declaration per kind
(kinds/kind.py) in one table (kinds/table.py), with what the cache keeps of it (projection,
decoding), the joins it is found by, and the metric series its items sum."""
