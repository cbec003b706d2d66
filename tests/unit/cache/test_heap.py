"""The soak's memory report says where the process's memory is, without changing anything."""

from dashboard_api.cache import heap


def test_the_report_splits_python_blocks_and_the_c_heap(capfd):
    kept = [bytearray(4096) for _ in range(256)]   # 1 MiB from the C allocator
    out = heap.report()
    assert out["python_blocks"] > 0
    if heap._glibc() and hasattr(heap._glibc(), "mallinfo2"):
        assert out["malloc_in_use_mib"] >= 1.0
        assert out["malloc_heap_mib"] >= out["malloc_in_use_mib"] - out["malloc_mapped_mib"]
    assert "arenas" in capfd.readouterr().err   # Python's allocator, by sys._debugmallocstats
    del kept
