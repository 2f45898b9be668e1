#!/usr/bin/env python3
"""The "Leaking service" study's client (bench/leak-guest.sh): asks the service for work every 200 ms,
as its users would, and says how each request went.

    leakprobe.py OUT.jsonl SOCKET STOPFILE

Each request connects to SOCKET (tests/programs/svcmem --socket), whose answer needs a MiB of memory of
the service: "ok", or its error ("Cannot allocate memory"). A request not answered within a second is
"timeout"; no one listening is "refused". One JSON line per request: its start on CLOCK_MONOTONIC in ms
(the journal's clock), the answer, how long it took, and MemAvailable then. Runs until STOPFILE exists.
"""
import json
import os
import socket
import sys
import time

PERIOD_S = 0.2
TIMEOUT_S = 1.0


def mem_available_kib():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1])
    return -1


def ask(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(TIMEOUT_S)
    try:
        s.connect(path)
        data = s.recv(128)
        return data.decode(errors="replace").strip() or "closed"
    except (FileNotFoundError, ConnectionRefusedError):
        return "refused"
    except socket.timeout:
        return "timeout"
    except OSError as e:
        return "error: " + (e.strerror or str(e))
    finally:
        s.close()


def main():
    out_path, path, stop = sys.argv[1:4]
    with open(out_path, "a", buffering=1) as out:
        nxt = time.monotonic()
        while not os.path.exists(stop):
            start = time.monotonic()
            what = ask(path)
            took = time.monotonic() - start
            rec = {"t_ms": round(start * 1000, 1), "what": what, "took_ms": round(took * 1000, 1),
                   "avail_kib": mem_available_kib()}
            out.write(json.dumps(rec) + "\n")
            nxt = max(nxt + PERIOD_S, time.monotonic())
            time.sleep(max(0.0, nxt - time.monotonic()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
