"""An event storm in the caller's own cgroup (docs/security.md, "Event storms").

    cgstorm.py OPS_FILE STOP_FILE

Fills the cgroup above the caller's with 3,000 empty children, writes 0 to OPS_FILE, then makes and
removes one more child as fast as it can, writing the count of mkdir and rmdir calls to OPS_FILE
(replaced whole, so a reader never sees half a number) until STOP_FILE exists; then removes the
3,000. Used by tests/integration/daemon_trust_storm.sh and bench/storm.sh.
"""
import os
import sys

FILL = 3000


def put(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    out, stop = sys.argv[1], sys.argv[2]
    own = open("/proc/self/cgroup").read().split(":", 2)[2].strip()
    run = "/sys/fs/cgroup" + os.path.dirname(own)
    for i in range(FILL):
        os.mkdir(f"{run}/s{i}")
    put(out, "0\n")
    ops = 0
    while not os.path.exists(stop):
        for _ in range(100):
            os.mkdir(f"{run}/x")
            os.rmdir(f"{run}/x")
        ops += 200
        put(out, f"{ops}\n")
    for i in range(FILL):
        os.rmdir(f"{run}/s{i}")


if __name__ == "__main__":
    main()
