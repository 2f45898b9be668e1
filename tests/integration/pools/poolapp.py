"""Celery app for launcher_celery.sh: a broker and a result store in plain
files (kombu's filesystem:// transport), so no server is needed. POOL_DIR
names the directory both live in. That transport is not safe for several
consumers of one folder (two workers can take the same message, or lose
it), so each memguard task's worker has a queue folder of its own, and the
client addresses each worker through make_app(task)."""
import gc
import os
import uuid
from time import monotonic

import billiard.pool
from celery import Celery
from celery.signals import worker_ready
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

base = os.environ["POOL_DIR"]


def put_whole(self, queue, payload, **kwargs):
    """kombu's own _put creates the message file, then writes it: a worker
    polling meanwhile moves it away empty and dies on the JSON (kombu issue
    1551; one CI run in many). Written under a name no queue matches, then
    renamed, a message appears whole. The name is kombu's, so the order is."""
    name = "%d_%s.%s.msg" % (int(round(monotonic() * 1000)), uuid.uuid4(), queue)
    part = os.path.join(self.data_folder_out, ".%s.part" % uuid.uuid4())
    with open(part, "wb") as f:
        f.write(str_to_bytes(dumps(payload)))
    os.rename(part, os.path.join(self.data_folder_out, name))


filesystem.Channel._put = put_whole


def make_app(task):
    """The app whose messages go to (and come from) task's worker."""
    queue = os.path.join(base, "queue.%s" % task)
    for d in (queue, os.path.join(base, "results")):
        os.makedirs(d, exist_ok=True)
    a = Celery("poolapp", set_as_current=False)
    a.conf.update(
        broker_url="filesystem://",
        # Polled 5 times a second, not once: a test sends a few dozen messages.
        broker_transport_options={"data_folder_in": queue, "data_folder_out": queue, "polling_interval": 0.2},
        result_backend="file://" + os.path.join(base, "results"),
        worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True,
    )
    return a


app = make_app(os.environ.get("MEMGUARD_TASK", "client"))


@worker_ready.connect
def say_ready(**_):
    """ready.<memguard task> holds the worker's main pid: the test waits for
    it, and stops the worker by it."""
    name = os.path.join(base, "ready.%s" % os.environ.get("MEMGUARD_TASK"))
    with open(name + ".new", "w") as f:
        f.write("%d\n" % os.getpid())
    os.rename(name + ".new", name)


@app.task(name="poolapp.whoami")
def whoami():
    """The memguard task this pool child runs in, its pid, and the recycling
    limit billiard applies to it (KiB; None when unset)."""
    limits = [w.max_memory_per_child for w in gc.get_objects() if isinstance(w, billiard.pool.Worker)]
    return {"task": os.environ.get("MEMGUARD_TASK"), "pid": os.getpid(), "limit_kib": limits[0] if limits else None}


@app.task(name="poolapp.square")
def square(x):
    return x * x


@app.task(name="poolapp.hog")
def hog(mib):
    """Touches mib MiB and keeps it: past the share this child is killed."""
    global kept
    kept = bytearray(mib << 20)
    for i in range(0, len(kept), 4096):
        kept[i] = 1
    return os.environ.get("MEMGUARD_TASK")
