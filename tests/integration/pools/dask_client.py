"""Scheduler and client of launcher_dask.sh, in one process (each Python
process that imports distributed costs the guest close to a minute): the
scheduler listens on 127.0.0.1:argv[1]; expects argv[2] workers, blows up
the worker in memguard task argv[3] with argv[4] MiB, prints what it saw as
one JSON object on stdout, and shuts scheduler and workers down."""
import json
import os
import sys
import time

from distributed import Client, LocalCluster
from distributed.scheduler import KilledWorker

port, nworkers, victim, hog_mib = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4])


def wait_workers(client, n, deadline):
    while len(client.scheduler_info()["workers"]) != n:
        if time.monotonic() > deadline:
            sys.exit("%d workers, want %d" % (len(client.scheduler_info()["workers"]), n))
        time.sleep(0.5)


def hog(mib):
    kept = bytearray(mib << 20)
    for i in range(0, len(kept), 4096):
        kept[i] = 1
    return len(kept)


def square(x):
    return x * x


out = {}
cluster = LocalCluster(n_workers=0, processes=False, host="127.0.0.1", scheduler_port=port, dashboard_address=None)
client = Client(cluster)
wait_workers(client, nworkers, time.monotonic() + 220)
tasks = client.run(lambda: os.environ["MEMGUARD_TASK"])
workers = client.scheduler_info()["workers"]
out["limits"] = {tasks[a]: w["memory_limit"] for a, w in workers.items()}
out["fits"] = sum(client.gather(client.map(square, range(40))))

# The victim's own computation blows its share: the kernel kills its task,
# and allowed-failures=0 keeps the scheduler from retrying it elsewhere.
addr = [a for a, t in tasks.items() if t == victim][0]
try:
    client.submit(hog, hog_mib, workers=[addr], allow_other_workers=False, pure=False).result(timeout=120)
    out["hog"] = "finished"
except KilledWorker:
    out["hog"] = "KilledWorker"
except Exception as e:  # what else went wrong, for the test's message
    out["hog"] = "%s: %s" % (type(e).__name__, e)
wait_workers(client, nworkers - 1, time.monotonic() + 60)
left = client.run(lambda: os.environ["MEMGUARD_TASK"])
out["left"] = sorted(left.values())
out["after"] = sum(client.gather(client.map(square, range(40, 80), pure=False)))
print(json.dumps(out), flush=True)
client.shutdown()
