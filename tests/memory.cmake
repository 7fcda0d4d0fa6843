# Peak device memory: the allocator's high-water mark and its reset, the trainer's peak a step in
# float32 and mixed precision (tests/test_memory_peak.c), on the reference and every device.
clg_test(test_memory_peak)
