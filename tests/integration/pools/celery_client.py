"""Client side of launcher_celery.sh: POOL_DIR is the broker's directory;
expects argv[1] workers, blows up the one in memguard task argv[2] with
argv[3] MiB, and prints what it saw as one JSON object on stdout. Progress
goes to stderr, which the test shows when something failed."""
import glob
import json
import os
import sys
import time

import celery.exceptions

import poolapp

start = time.monotonic()
nworkers, victim, hog_mib = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
base = os.environ["POOL_DIR"]


def log(what):
    print("%8.1f %s" % (time.monotonic() - start, what), file=sys.stderr, flush=True)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return ") Z " not in f.read()
    except FileNotFoundError:
        return False


def main_pids():
    return {p.rsplit(".", 1)[1]: int(open(p).read()) for p in glob.glob(os.path.join(base, "ready.*"))}


def call(apps, name, args, timeout):
    """name(*args) on every worker in apps at once: their answers by task."""
    sent = {t: a.send_task(name, args) for t, a in apps.items()}
    return {t: r.get(timeout=timeout) for t, r in sent.items()}


def spread(apps, name, values, timeout):
    """The sum of name(v) for each value, the values dealt to the workers."""
    order = sorted(apps)
    sent = [apps[order[k % len(order)]].send_task(name, (v,)) for k, v in enumerate(values)]
    return sum(r.get(timeout=timeout) for r in sent)


deadline = time.monotonic() + 240
while len(main_pids()) != nworkers:
    if time.monotonic() > deadline:
        sys.exit("%d workers ready, want %d" % (len(main_pids()), nworkers))
    time.sleep(0.5)
pids = main_pids()
log("workers ready: %s" % pids)
apps = {t: poolapp.make_app(t) for t in pids}
out = {}
out["limits"] = {t: w["limit_kib"] for t, w in call(apps, "poolapp.whoami", (), 120).items()}
log("limits: %s" % out["limits"])
out["fits"] = spread(apps, "poolapp.square", range(12), 120)
log("fits: %d" % out["fits"])

# The victim never answers: its worker is killed.
r = apps[victim].send_task("poolapp.hog", (hog_mib,))
try:
    out["hog"] = "answered by task %s" % r.get(timeout=60)
except celery.exceptions.TimeoutError:
    for _ in range(120):
        if not alive(pids[victim]):
            break
        time.sleep(0.5)
    out["hog"] = "worker gone" if not alive(pids[victim]) else "worker alive"
log("hog: %s" % out["hog"])
del apps[victim]
out["left"] = sorted(call(apps, "poolapp.whoami", (), 120))
out["after"] = spread(apps, "poolapp.square", range(12, 24), 120)
log("after: %d" % out["after"])
print(json.dumps(out), flush=True)
