"""A garbage-churning worker, as a parameter sweep's task would be.

    churn.py LIVE_MIB SECONDS [SEED]

Keeps about LIVE_MIB of live objects, replaces a slice of them every step,
and allocates short-lived garbage in between, for SECONDS. Exits 0 when done.
A lazy collector lets the heap grow well past the live set; with a heap cap
(PYPY_GC_MAX) it collects in time.
"""
import random
import sys
import time

CHUNK = 64 * 1024  # bytes of payload per live object


def make_chunk(rng):
    # A list of ints: one object the GC owns, about CHUNK bytes.
    return [rng.random() for _ in range(CHUNK // 8)]


def main():
    live_mib = int(sys.argv[1])
    seconds = float(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 42)
    n = live_mib * (1 << 20) // CHUNK
    live = [make_chunk(rng) for _ in range(n)]
    end = time.monotonic() + seconds
    steps = 0
    while time.monotonic() < end:
        # Replace a tenth of the live set: the old objects become garbage.
        for _ in range(n // 10):
            live[rng.randrange(n)] = make_chunk(rng)
        # Short-lived garbage too.
        garbage = [str(i) * 4 for i in range(20000)]
        del garbage
        steps += 1
    print("churn: %d steps over %d MiB live" % (steps, live_mib))


if __name__ == "__main__":
    main()
