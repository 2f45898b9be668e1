/* memguardd's service guard (service.h): each watched unit is looked at on
 * its own interval (its memory.stat, memory.events and limits), judged
 * (verdict.c) and, when it leaks or is stuck, restarted through systemd
 * (bus.c), paced, said in the journal, in --status and in the metrics. */
#include "service/service.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#include "memguard/cgroup.h"
#include "memguard/event.h"
#include "memguard/log.h"
#include "memguard/meminfo.h"
#include "memguard/units.h"
#include "memguard/util.h"
#include "service/bus.h"
#include "service/verdict.h"

#define SEC ((uint64_t)1000000)
/* A unit not loaded, or systemd not answering, is asked again this often. */
#define RETRY_USEC (30 * SEC)
/* A restart that systemd has not answered within this failed: a stop
 * waits 90 s at most by default (TimeoutStopSec=), a start as long. */
#define RESTART_DEADLINE_USEC (5 * 60 * SEC)
/* A verdict memguardd does not act on (action = log, a dry run, a restart
 * held back) is said once, and again this often while it holds. */
#define SAY_AGAIN_USEC (3600 * SEC)
/* Below the pressure sources (priority 0), as the guard's rescans. */
#define SERVICE_EVENT_PRIORITY 10
/* A status file older than this was not written by a running memguardd. */
#define STATUS_STALE_SEC ((long long)(2 * MG_SERVICE_INTERVAL_MAX_USEC / SEC + 30))

enum where {
	UNIT_LOOKING,     /* not looked up yet, or systemd did not answer */
	UNIT_NOT_LOADED,  /* no such unit (LoadState not-found, masked, ...): looked for again */
	UNIT_NOT_RUNNING, /* loaded, but its cgroup holds no process */
	UNIT_WATCHED,
};

enum restart {
	RESTART_NONE,
	RESTART_PENDING,  /* RestartUnit sent; its job has not ended */
	RESTART_STOPPING, /* it failed: SIGTERM sent, SIGKILL after kill_grace */
};

/* What was said last of a verdict not acted on, so it is said once. */
enum said { SAID_NOTHING, SAID_LOG, SAID_BACKOFF, SAID_LIMIT };

struct unit {
	struct mg_service_config cfg;
	struct mg_services *s; /* for its timer */
	enum where where;
	bool looking;           /* a lookup is under way */
	uint64_t look_for_usec; /* the next lookup, while not watched */
	char load_state[32];
	char cgroup[512]; /* below the mount; "" until systemd names it */
	int read_error;   /* the last look's, said once */
	struct mg_service_sample samples[MG_SERVICE_SAMPLES];
	size_t n;
	uint64_t next_usec;          /* the next look */
	uint64_t current, high, max; /* at the latest look */
	bool judged;
	struct mg_service_verdict verdict;
	uint64_t restarts[MG_SERVICE_RESTARTS_MAX]; /* memguardd's, monotonic, oldest first */
	size_t n_restarts;
	uint64_t restarts_total, failures_total;
	enum restart restart;
	char restart_verdict[16]; /* leaking, stuck or pressure: why the restart under way */
	uint64_t restart_usec;
	char job[256];
	sd_event_source *timer; /* the restart's deadline, or SIGKILL after SIGTERM */
	bool failed;            /* its last restart failed: it falls to the outsider rule */
	enum said said;
	uint64_t said_usec;
};

struct mg_services {
	sd_event *event;
	int mountfd, procfd;
	struct mg_services_rules rules;
	struct mg_svcbus *bus;
	uint64_t bus_retry_usec;
	char bus_error[256]; /* said once until it changes */
	struct unit **u;     /* each allocated alone: its timer holds it */
	size_t n;
	sd_event_source *timer;
	bool acted;
	uint64_t mem_available;
};

static void refresh(struct mg_services *s);

static struct unit *find(const struct mg_services *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (strcmp(s->u[i]->cfg.unit, name) == 0)
			return s->u[i];
	return NULL;
}

/* The unit whose cgroup is path or holds it. */
static struct unit *unit_at(const struct mg_services *s, const char *path)
{
	for (size_t i = 0; s && i < s->n; i++) {
		const char *cg = s->u[i]->cgroup;
		size_t len = strlen(cg);
		if (len && strncmp(path, cg, len) == 0 && (path[len] == '\0' || path[len] == '/'))
			return s->u[i];
	}
	return NULL;
}

/* One journal entry for an action on u, under MG_SERVICE_MESSAGE_ID, with
 * its numbers as fields; on stderr the message alone. */
static void entry(const struct unit *u, int level, const char *action, const char *verdict, const char *fmt,
                  ...) __attribute__((format(printf, 5, 6)));
static void entry(const struct unit *u, int level, const char *action, const char *verdict, const char *fmt,
                  ...)
{
	const struct mg_service_verdict *v = &u->verdict;
	char msg[1536], f_unit[300], f_cgroup[560], f_verdict[48], f_trend[64], f_left[64], f_floor[64],
	        f_held[64], f_limit[64], f_kind[48], f_action[48];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(f_unit, sizeof(f_unit), "MEMGUARD_UNIT=%s", u->cfg.unit);
	snprintf(f_cgroup, sizeof(f_cgroup), "MEMGUARD_CGROUP=%s", u->cgroup);
	snprintf(f_verdict, sizeof(f_verdict), "MEMGUARD_VERDICT=%s", verdict);
	snprintf(f_trend, sizeof(f_trend), "MEMGUARD_TREND_MIB_PER_HOUR=%.1f",
	         v->trend_bps * 3600 / (1 << 20));
	if (v->left_usec == UINT64_MAX)
		snprintf(f_left, sizeof(f_left), "MEMGUARD_TIME_LEFT_SEC=never");
	else
		snprintf(f_left, sizeof(f_left), "MEMGUARD_TIME_LEFT_SEC=%" PRIu64, v->left_usec / SEC);
	snprintf(f_floor, sizeof(f_floor), "MEMGUARD_FLOOR=%" PRIu64, v->floor);
	snprintf(f_held, sizeof(f_held), "MEMGUARD_CURRENT=%" PRIu64, v->held);
	snprintf(f_limit, sizeof(f_limit), "MEMGUARD_LIMIT=%" PRIu64, v->limit);
	snprintf(f_kind, sizeof(f_kind), "MEMGUARD_LIMIT_KIND=%s",
	         v->limit_kind == MG_SERVICE_LIMIT_NODE ? "node" : mg_service_limit_name(v->limit_kind));
	snprintf(f_action, sizeof(f_action), "MEMGUARD_ACTION=%s", action);
	const char *fields[] = {"MESSAGE_ID=" MG_SERVICE_MESSAGE_ID,
	                        f_unit,
	                        f_cgroup,
	                        f_verdict,
	                        f_trend,
	                        f_left,
	                        f_floor,
	                        f_held,
	                        f_limit,
	                        f_kind,
	                        f_action,
	                        NULL};
	mg_log_fields(level, fields, "%s", msg);
}

/* Starts u over: a new process warms up anew. */
static void forget_looks(struct unit *u)
{
	u->n = 0;
	u->judged = false;
	u->said = SAID_NOTHING;
}

/* --- the fallback: SIGTERM, then SIGKILL --- */

struct signal_walk {
	int sig;
	int count;
};

static int signal_pid(pid_t pid, void *userdata)
{
	struct signal_walk *w = userdata;
	_cleanup_close_ int fd = mg_pidfd_open(pid);

	if (fd >= 0 && mg_pidfd_signal(fd, w->sig) == 0)
		w->count++;
	return 0;
}

static int signal_tree(int cgfd, const char *name, void *userdata)
{
	(void)name;
	(void)mg_cg_for_each_pid(cgfd, signal_pid, userdata);
	return mg_cg_for_each_child(cgfd, signal_tree, userdata);
}

/* sig to every process of u's cgroup: how many were signalled. */
static int signal_unit(const struct mg_services *s, const struct unit *u, int sig)
{
	_cleanup_close_ int cg = u->cgroup[0] ? mg_cg_open(s->mountfd, u->cgroup) : -ENOENT;
	struct signal_walk w = {.sig = sig};

	if (cg >= 0)
		(void)signal_tree(cg, ".", &w);
	return w.count;
}

static void restart_over(struct unit *u)
{
	u->restart = RESTART_NONE;
	u->timer = sd_event_source_disable_unref(u->timer);
	forget_looks(u);
	u->next_usec = mg_now_usec();
}

static int on_kill(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct unit *u = userdata;
	_cleanup_close_ int cg = u->cgroup[0] ? mg_cg_open(u->s->mountfd, u->cgroup) : -ENOENT;
	char g[MG_SERVICE_DURATION_STRLEN];

	if (cg >= 0 && mg_cg_populated(cg) > 0) {
		int r = mg_cg_kill(cg);
		u->s->acted = true;
		if (r < 0)
			mg_log_errno(LOG_ERR, r, "kill what is left of %s (cgroup %s): %m", u->cfg.unit,
			             u->cgroup);
		else
			entry(u, LOG_ERR, "kill", u->restart_verdict,
			      "%s: processes left %s after SIGTERM: killed them (SIGKILL to its whole "
			      "cgroup)",
			      u->cfg.unit, mg_service_format_duration(u->s->rules.kill_grace_usec, g));
	}
	restart_over(u);
	refresh(u->s);
	return 0;
}

static int arm_unit_timer(struct unit *u, uint64_t usec, sd_event_time_handler_t cb)
{
	/* A new source each time: the callback differs. */
	u->timer = sd_event_source_disable_unref(u->timer);
	int r = mg_event_arm_timer(u->s->event, &u->timer, usec, SEC / 10, cb, u);

	if (r >= 0)
		r = sd_event_source_set_priority(u->timer, SERVICE_EVENT_PRIORITY);
	return r;
}

/* The restart failed (why): SIGTERM to what the unit runs, then SIGKILL
 * after kill_grace. It falls to the outsider rule until a restart works. */
static void restart_failed(struct mg_services *s, struct unit *u, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
static void restart_failed(struct mg_services *s, struct unit *u, const char *fmt, ...)
{
	char why[512], g[MG_SERVICE_DURATION_STRLEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	u->failures_total++;
	u->failed = true;
	s->acted = true;
	int n = signal_unit(s, u, SIGTERM);
	if (n == 0) {
		entry(u, LOG_ERR, "none", u->restart_verdict,
		      "restart of %s failed (%s); nothing of it runs now", u->cfg.unit, why);
		restart_over(u);
		return;
	}
	entry(u, LOG_ERR, "term", u->restart_verdict,
	      "restart of %s failed (%s): SIGTERM to its %d process%s, SIGKILL to what is left in %s; "
	      "systemd "
	      "starts it again only if its Restart= says so",
	      u->cfg.unit, why, n, n == 1 ? "" : "es",
	      mg_service_format_duration(s->rules.kill_grace_usec, g));
	u->restart = RESTART_STOPPING;
	int r = arm_unit_timer(u, s->rules.kill_grace_usec, on_kill);
	if (r < 0) {
		mg_log_errno(LOG_ERR, r, "arm the kill of %s: %m; killing it now", u->cfg.unit);
		on_kill(NULL, 0, u);
	}
}

static int on_deadline(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct unit *u = userdata;
	char d[MG_SERVICE_DURATION_STRLEN];

	if (u->restart == RESTART_PENDING)
		restart_failed(u->s, u, "no word from systemd within %s",
		               mg_service_format_duration(RESTART_DEADLINE_USEC, d));
	refresh(u->s);
	return 0;
}

/* --- the restart --- */

static void on_restart_reply(void *userdata, const char *unit, int error, const char *job, const char *why)
{
	struct mg_services *s = userdata;
	struct unit *u = find(s, unit);

	if (!u || u->restart != RESTART_PENDING)
		return;
	if (error < 0)
		restart_failed(s, u, "RestartUnit: %s", why);
	else
		snprintf(u->job, sizeof(u->job), "%s", job);
	refresh(s);
}

static void lookup(struct mg_services *s, struct unit *u, uint64_t now);

static void on_job(void *userdata, const char *unit, const char *job, const char *result)
{
	struct mg_services *s = userdata;
	struct unit *u = find(s, unit);
	char a[MG_SIZE_STRLEN];

	if (!u)
		return;
	/* Someone else's job on it, a start most often: its cgroup is asked for
	 * now, not at its next look, so that the outsider rule knows a service
	 * that takes its memory as it starts. */
	if (u->restart != RESTART_PENDING) {
		if (u->where != UNIT_WATCHED && !u->looking)
			lookup(s, u, mg_now_usec());
		return;
	}
	/* Its job; before RestartUnit's reply, the unit's name has to do. */
	if (u->job[0] && strcmp(job, u->job) != 0)
		return;
	if (strcmp(result, "done") != 0) {
		restart_failed(s, u, "its restart job ended \"%s\"", result);
	} else {
		log_notice("%s restarted in %.1f s (it held %s of anon and shmem before)", u->cfg.unit,
		           (double)(mg_now_usec() - u->restart_usec) / SEC,
		           mg_size_format(u->verdict.held, a));
		u->restarts_total++;
		u->failed = false;
		restart_over(u);
	}
	refresh(s);
}

/* Restarts u through systemd, said first: verdict (leaking, stuck,
 * pressure) and why. */
static void restart(struct mg_services *s, struct unit *u, uint64_t now, const char *verdict, const char *why)
{
	int r;

	entry(u, LOG_WARNING, "restart", verdict, "restarting %s: %s", u->cfg.unit, why);
	if (u->n_restarts == MG_SERVICE_RESTARTS_MAX)
		memmove(u->restarts, u->restarts + 1, (MG_SERVICE_RESTARTS_MAX - 1) * sizeof(u->restarts[0]));
	else
		u->n_restarts++;
	u->restarts[u->n_restarts - 1] = now;
	u->restart = RESTART_PENDING;
	u->restart_usec = now;
	u->job[0] = '\0';
	snprintf(u->restart_verdict, sizeof(u->restart_verdict), "%s", verdict);
	s->acted = true;
	r = mg_svcbus_usable(s->bus) ? mg_svcbus_restart(s->bus, u->cfg.unit, on_restart_reply, s)
	                             : -ENOTCONN;
	if (r < 0) {
		restart_failed(s, u, "RestartUnit could not be sent: %s", strerror(-r));
		return;
	}
	if ((r = arm_unit_timer(u, RESTART_DEADLINE_USEC, on_deadline)) < 0)
		mg_log_errno(LOG_WARNING, r, "arm the deadline of %s's restart: %m", u->cfg.unit);
}

/* Whether a verdict not acted on (what) is to be said now: once, and
 * again every SAY_AGAIN_USEC. */
static bool say_due(struct unit *u, enum said what, uint64_t now)
{
	if (u->said == what && now - u->said_usec < SAY_AGAIN_USEC)
		return false;
	u->said = what;
	u->said_usec = now;
	return true;
}

/* Acts on u's verdict. */
static void act(struct mg_services *s, struct unit *u, uint64_t now)
{
	const struct mg_service_verdict *v = &u->verdict;
	const char *verdict = mg_service_state_name(v->state);
	char what[640], d[MG_SERVICE_DURATION_STRLEN], e[MG_SERVICE_DURATION_STRLEN];
	bool limited;

	if (v->state != MG_SERVICE_LEAKING && v->state != MG_SERVICE_STUCK) {
		u->said = SAID_NOTHING;
		return;
	}
	snprintf(what, sizeof(what), "%s: %s", v->state == MG_SERVICE_LEAKING ? "it leaks" : "it is stuck",
	         v->why);
	if (u->cfg.action == MG_SERVICE_LOG || s->rules.dry_run) {
		if (say_due(u, SAID_LOG, now))
			entry(u, LOG_WARNING, "log", verdict, "%s: %s; %s", u->cfg.unit, what,
			      s->rules.dry_run ? "dry run: not restarting it"
			                       : "action = log: not restarting it");
		return;
	}
	uint64_t at = mg_service_restart_at(&u->cfg, u->restarts, u->n_restarts, now, &limited);
	if (at <= now) {
		restart(s, u, now, verdict, what);
		return;
	}
	if (!say_due(u, limited ? SAID_LIMIT : SAID_BACKOFF, now))
		return;
	if (limited)
		entry(u, LOG_WARNING, "none", verdict,
		      "%s: %s; restarted %u time%s within %s (restart_limit): not restarting it for %s; "
		      "until "
		      "then it falls to the outsider rule ([daemon] kill_outside) as any process outside the "
		      "guard",
		      u->cfg.unit, what, u->cfg.restart_limit, u->cfg.restart_limit == 1 ? "" : "s",
		      mg_service_format_duration(u->cfg.restart_limit_interval_usec, d),
		      mg_service_format_duration(at - now, e));
	else
		entry(u, LOG_NOTICE, "none", verdict,
		      "%s: %s; restarted %s ago: not restarting it for %s more (restart_backoff)",
		      u->cfg.unit, what, mg_service_format_duration(now - u->restarts[u->n_restarts - 1], d),
		      mg_service_format_duration(at - now, e));
}

/* --- looking --- */

static void not_running(struct unit *u)
{
	if (u->where == UNIT_WATCHED)
		log_info("%s runs no process (cgroup %s): watching it again when it does", u->cfg.unit,
		         u->cgroup);
	u->where = UNIT_NOT_RUNNING;
	forget_looks(u);
}

/* Reads u's cgroup into a look; < 0 when it cannot. */
static int read_look(struct mg_services *s, struct unit *u, int cg, uint64_t now,
                     struct mg_service_sample *ret)
{
	_cleanup_free_ char *stat = NULL;
	struct mg_memory_events ev;
	uint64_t anon, shmem;
	ssize_t r;

	if ((r = mg_read_file_at(cg, "memory.stat", &stat)) < 0 ||
	    (r = mg_keyed_u64(stat, "anon", &anon)) < 0 || (r = mg_keyed_u64(stat, "shmem", &shmem)) < 0 ||
	    (r = mg_cg_read_memory_events(cg, &ev)) < 0 ||
	    (r = mg_cg_read_u64(cg, "memory.high", &u->high)) < 0 ||
	    (r = mg_cg_read_u64(cg, "memory.max", &u->max)) < 0 ||
	    (r = mg_cg_read_u64(cg, "memory.current", &u->current)) < 0)
		return (int)r;
	*ret = (struct mg_service_sample){
	        .usec = now, .held = anon + shmem, .high_events = ev.high, .max_events = ev.max};
	return 0;
}

static void look(struct mg_services *s, struct unit *u, uint64_t now)
{
	_cleanup_close_ int cg = mg_cg_open(s->mountfd, u->cgroup);
	struct mg_service_sample one;
	int r;

	/* Stopped (systemd removes a service's cgroup), or between two processes. */
	if (cg < 0 || mg_cg_populated(cg) <= 0) {
		not_running(u);
		return;
	}
	if ((r = read_look(s, u, cg, now, &one)) < 0) {
		if (r != u->read_error)
			mg_log_errno(
			        LOG_WARNING, r,
			        "read the memory of %s (cgroup %s): %m; is MemoryAccounting= off for it?",
			        u->cfg.unit, u->cgroup);
		u->read_error = r;
		return;
	}
	if (u->read_error)
		log_notice("the memory of %s is read again", u->cfg.unit);
	u->read_error = 0;
	if (u->where != UNIT_WATCHED)
		log_info("%s runs (cgroup %s): watching it", u->cfg.unit, u->cgroup);
	u->where = UNIT_WATCHED;
	mg_service_samples_add(u->samples, &u->n, MG_SERVICE_SAMPLES, &one, mg_service_merge_usec(&u->cfg));
	struct mg_service_bounds b = {
	        .high = u->high,
	        .max = u->max,
	        .mem_available = s->mem_available,
	        .available_min = s->rules.available_min,
	        .available_pressure = s->rules.available_pressure,
	};
	mg_service_judge(&u->cfg, u->samples, u->n, &b, &u->verdict);
	/* The latest look's anon and shmem, not the least of those merged into the sample. */
	u->verdict.held = one.held;
	u->judged = true;
	act(s, u, now);
}

static void on_lookup(void *userdata, const char *unit, int error, const char *load_state, const char *cgroup,
                      const char *why)
{
	struct mg_services *s = userdata;
	struct unit *u = find(s, unit);
	char w[MG_SERVICE_DURATION_STRLEN], h[MG_SERVICE_DURATION_STRLEN], t[MG_SERVICE_DURATION_STRLEN];
	uint64_t now = mg_now_usec();

	if (!u)
		return;
	u->looking = false;
	u->look_for_usec = now + RETRY_USEC;
	if (error < 0) {
		mg_log_errno(LOG_WARNING, error, "ask systemd about %s: %s; asking again in 30s", u->cfg.unit,
		             why);
	} else if (strcmp(load_state, "loaded") != 0) {
		if (u->where != UNIT_NOT_LOADED || strcmp(u->load_state, load_state) != 0)
			log_notice("[service %s]: no such unit is loaded (LoadState %s); looking for it "
			           "every 30s",
			           u->cfg.unit, load_state);
		u->where = UNIT_NOT_LOADED;
	} else if (!cgroup[0]) {
		/* Loaded, not running: asked again at its interval, as it may start any time. */
		if (u->where != UNIT_NOT_RUNNING)
			log_info("%s runs no process: watching it when it does", u->cfg.unit);
		u->where = UNIT_NOT_RUNNING;
		u->look_for_usec = now + mg_service_interval_usec(&u->cfg);
	} else {
		if (strcmp(u->cgroup, cgroup) != 0 || u->where == UNIT_LOOKING ||
		    u->where == UNIT_NOT_LOADED) {
			snprintf(u->cgroup, sizeof(u->cgroup), "%s", cgroup);
			forget_looks(u);
			log_info("watching %s (cgroup %s): window %s, horizon %s, stuck_time %s, action %s",
			         u->cfg.unit, u->cgroup, mg_service_format_duration(u->cfg.window_usec, w),
			         mg_service_format_duration(u->cfg.horizon_usec, h),
			         mg_service_format_duration(u->cfg.stuck_usec, t),
			         u->cfg.action == MG_SERVICE_RESTART ? "restart" : "log");
		}
		u->where = UNIT_WATCHED;
		u->next_usec = now;
	}
	snprintf(u->load_state, sizeof(u->load_state), "%s", load_state ?: "");
	refresh(s);
}

static void lookup(struct mg_services *s, struct unit *u, uint64_t now)
{
	int r;

	if (!mg_svcbus_usable(s->bus)) {
		u->look_for_usec = s->bus_retry_usec;
		return;
	}
	if ((r = mg_svcbus_lookup(s->bus, u->cfg.unit, on_lookup, s)) < 0) {
		mg_log_errno(LOG_WARNING, r, "ask systemd about %s: %m", u->cfg.unit);
		u->look_for_usec = now + RETRY_USEC;
		return;
	}
	u->looking = true;
}

/* Connects to systemd when not connected (again, after it re-executed),
 * every RETRY_USEC at most; says a failure once. */
static void ensure_bus(struct mg_services *s, uint64_t now)
{
	char why[256];
	int r;

	if (mg_svcbus_usable(s->bus) || now < s->bus_retry_usec)
		return;
	mg_svcbus_free(s->bus);
	s->bus = NULL;
	s->bus_retry_usec = now + RETRY_USEC;
	if ((r = mg_svcbus_open(s->event, SERVICE_EVENT_PRIORITY, on_job, s, &s->bus, why, sizeof(why))) <
	    0) {
		if (strcmp(why, s->bus_error) != 0)
			log_warn("[service] sections wait for systemd: %s; trying again every 30s", why);
		snprintf(s->bus_error, sizeof(s->bus_error), "%s", why);
		return;
	}
	if (s->bus_error[0])
		log_notice("systemd answers again");
	s->bus_error[0] = '\0';
	for (size_t i = 0; i < s->n; i++) {
		struct unit *u = s->u[i];
		/* A restart whose answer went with the old connection: its deadline says how it went. */
		u->look_for_usec = now;
		u->looking = false;
	}
}

/* --- the loop --- */

static int on_tick(sd_event_source *src, uint64_t usec, void *userdata)
{
	struct mg_services *s = userdata;
	uint64_t now = mg_now_usec();
	struct mg_meminfo mem;
	int r;

	ensure_bus(s, now);
	if ((r = mg_meminfo_read(s->procfd, &mem)) == 0)
		s->mem_available = mem.mem_available;
	else
		mg_log_errno(LOG_WARNING, r,
		             "read meminfo: %m; the services are judged by the last MemAvailable");
	for (size_t i = 0; i < s->n; i++) {
		struct unit *u = s->u[i];
		if (u->restart != RESTART_NONE)
			continue;
		if (u->cgroup[0] && (u->where == UNIT_WATCHED || u->where == UNIT_NOT_RUNNING)) {
			if (now >= u->next_usec) {
				u->next_usec = now + mg_service_interval_usec(&u->cfg);
				look(s, u, now);
			}
		} else if (!u->looking && now >= u->look_for_usec) {
			lookup(s, u, now);
		}
	}
	refresh(s);
	return 0;
}

/* A line of --status for u. */
static void status_line(const struct unit *u, uint64_t now, char *buf, size_t size)
{
	const struct mg_service_verdict *v = &u->verdict;
	char a[MG_SIZE_STRLEN], f[MG_SIZE_STRLEN], l[MG_SIZE_STRLEN], t[MG_SERVICE_TREND_STRLEN];
	char left[MG_SERVICE_DURATION_STRLEN], ago[MG_SERVICE_DURATION_STRLEN], limit[64], state[80],
	        notes[160];
	int n;

	/* Its restarts by memguardd, whatever is known of the rest. */
	n = snprintf(notes, sizeof(notes), "%" PRIu64, u->restarts_total);
	if (u->n_restarts)
		n += snprintf(notes + n, sizeof(notes) - (size_t)n, " (last %s ago)",
		              mg_service_format_duration(now - u->restarts[u->n_restarts - 1], ago));
	if (u->failures_total)
		snprintf(notes + n, sizeof(notes) - (size_t)n, ", %" PRIu64 " failed%s", u->failures_total,
		         u->failed ? " (the last: left to the outsider rule)" : "");
	if (u->restart == RESTART_NONE && (u->where != UNIT_WATCHED || !u->judged)) {
		if (u->where == UNIT_NOT_LOADED)
			snprintf(state, sizeof(state), "not loaded (LoadState %s)", u->load_state);
		else
			snprintf(state, sizeof(state), "%s",
			         u->where == UNIT_LOOKING       ? "not found yet (systemd has not answered)"
			         : u->where == UNIT_NOT_RUNNING ? "runs no process"
			                                        : "not judged yet");
		snprintf(buf, size, "  %-28s %-82s  %s\n", u->cfg.unit, state, notes);
		return;
	}
	if (v->limit_kind == MG_SERVICE_LIMIT_NODE)
		snprintf(limit, sizeof(limit), "node (+%s)",
		         mg_size_format(v->limit > v->held ? v->limit - v->held : 0, l));
	else
		snprintf(limit, sizeof(limit), "%s %s", mg_service_limit_name(v->limit_kind),
		         mg_size_format(v->limit, l));
	snprintf(state, sizeof(state), "%s%s",
	         u->restart != RESTART_NONE ? "restarting" : mg_service_state_name(v->state),
	         v->early && u->restart == RESTART_NONE ? " (early)" : "");
	snprintf(buf, size, "  %-28s %-14s %10s %10s %13s %-22s %8s  %s\n", u->cfg.unit, state,
	         mg_size_format(v->held, a), mg_size_format(v->floor, f),
	         mg_service_format_trend(v->trend_bps, t), limit,
	         mg_service_format_duration(v->left_usec, left), notes);
}

/* The status file for --status, replaced whole. */
static void write_status(const struct mg_services *s)
{
	static char buf[MG_SERVICE_MAX * 400 + 256];
	struct timespec ts;
	uint64_t now = mg_now_usec();
	size_t len;

	clock_gettime(CLOCK_REALTIME, &ts);
	len = (size_t)snprintf(buf, sizeof(buf), "# memguardd %d %lld\n", (int)getpid(),
	                       (long long)ts.tv_sec);
	for (size_t i = 0; i < s->n && len < sizeof(buf); i++) {
		status_line(s->u[i], now, buf + len, sizeof(buf) - len);
		len += strlen(buf + len);
	}
	int r = mg_atomic_write(MG_SERVICE_STATUS_FILE, buf, len, 0644, false);
	if (r < 0)
		mg_log_errno(LOG_DEBUG, r, "write %s: %m", MG_SERVICE_STATUS_FILE);
}

/* The status file, and the timer for what comes next. */
static void refresh(struct mg_services *s)
{
	uint64_t now = mg_now_usec(), next = UINT64_MAX, accuracy = SEC;
	int r;

	write_status(s);
	for (size_t i = 0; i < s->n; i++) {
		const struct unit *u = s->u[i];
		uint64_t at = UINT64_MAX, interval = mg_service_interval_usec(&u->cfg);
		if (u->restart != RESTART_NONE)
			continue;
		if (u->cgroup[0] && (u->where == UNIT_WATCHED || u->where == UNIT_NOT_RUNNING))
			at = u->next_usec;
		else if (!u->looking)
			at = u->look_for_usec;
		if (at < next)
			next = at;
		if (interval / 8 < accuracy)
			accuracy = interval / 8;
	}
	if (!mg_svcbus_usable(s->bus) && s->bus_retry_usec < next)
		next = s->bus_retry_usec;
	if (next == UINT64_MAX)
		next = now + RETRY_USEC;
	r = mg_event_arm_timer(s->event, &s->timer, next > now ? next - now : 0, accuracy, on_tick, s);
	if (r >= 0)
		r = sd_event_source_set_time_accuracy(s->timer, accuracy);
	if (r < 0)
		mg_log_errno(LOG_ERR, r, "arm the service guard's timer: %m");
}

/* --- starting, reloading, stopping --- */

static void unit_free(struct unit *u)
{
	if (u) {
		sd_event_source_disable_unref(u->timer);
		free(u);
	}
}

void mg_services_configure(struct mg_services *s, const struct mg_config *cfg,
                           const struct mg_services_rules *rules)
{
	struct unit **u = calloc(cfg->n_services ?: 1, sizeof(*u));
	size_t n = 0;

	if (!u) {
		log_err("configure the service guard: out of memory; keeping the units it watched");
		return;
	}
	s->rules = *rules;
	for (size_t i = 0; i < cfg->n_services; i++) {
		struct unit *old = find(s, cfg->services[i].unit);
		if (old) {
			/* Dropped from the old list: it moves to the new one. */
			for (size_t j = 0; j < s->n; j++)
				if (s->u[j] == old)
					s->u[j] = NULL;
			old->cfg = cfg->services[i];
			u[n++] = old;
			continue;
		}
		struct unit *fresh = calloc(1, sizeof(*fresh));
		if (!fresh) {
			log_err("watch %s: out of memory", cfg->services[i].unit);
			continue;
		}
		fresh->cfg = cfg->services[i];
		fresh->s = s;
		u[n++] = fresh;
	}
	for (size_t j = 0; j < s->n; j++) {
		if (s->u[j])
			log_info("%s: no longer watched", s->u[j]->cfg.unit);
		unit_free(s->u[j]);
	}
	free(s->u);
	s->u = u;
	s->n = n;
	refresh(s);
}

/* "a.service, b.service" of cfg's units, into buf. */
static const char *unit_names(const struct mg_config *cfg, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < cfg->n_services && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? ", " : "", cfg->services[i].unit);
	return buf;
}

int mg_services_start(sd_event *e, int mountfd, int procfd, const struct mg_config *cfg,
                      const struct mg_services_rules *rules, struct mg_services **ret)
{
	char names[512];

	*ret = NULL;
	if (!cfg->n_services)
		return 0;
	if (sd_booted() <= 0) {
		log_warn("%zu [service] section%s (%s) cannot apply on this node: its init is not systemd, "
		         "through "
		         "which memguardd restarts services",
		         cfg->n_services, cfg->n_services == 1 ? "" : "s",
		         unit_names(cfg, names, sizeof(names)));
		return 0;
	}
	struct mg_services *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->event = e;
	s->mountfd = mountfd;
	s->procfd = procfd;
	ensure_bus(s, mg_now_usec());
	mg_services_configure(s, cfg, rules);
	log_info("watching %zu service%s for leaks (%s)", cfg->n_services, cfg->n_services == 1 ? "" : "s",
	         unit_names(cfg, names, sizeof(names)));
	*ret = s;
	return 0;
}

void mg_services_free(struct mg_services *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->n; i++)
		unit_free(s->u[i]);
	free(s->u);
	sd_event_source_disable_unref(s->timer);
	mg_svcbus_free(s->bus);
	free(s);
}

/* --- what the pressure guard and the metrics ask --- */

static bool spared(const struct mg_services *s, const struct unit *u, uint64_t now)
{
	bool limited;

	if (u->cfg.action != MG_SERVICE_RESTART || s->rules.dry_run || u->failed || !mg_svcbus_usable(s->bus))
		return false;
	return u->restart == RESTART_PENDING ||
	       mg_service_restart_at(&u->cfg, u->restarts, u->n_restarts, now, &limited) <= now;
}

bool mg_services_spares(const struct mg_services *s, const char *path)
{
	const struct unit *u = unit_at(s, path);

	return u && spared(s, u, mg_now_usec());
}

int mg_services_restart_for(struct mg_services *s, const char *path, const char *why)
{
	struct unit *u = unit_at(s, path);
	uint64_t now = mg_now_usec();
	char reason[800];

	if (!u || !spared(s, u, now))
		return 0;
	if (u->restart == RESTART_NONE) {
		snprintf(reason, sizeof(reason),
		         "memory is short through it, and the outsider rule would kill in it: %s", why);
		restart(s, u, now, "pressure", reason);
		refresh(s);
	}
	return 1;
}

bool mg_services_take_acted(struct mg_services *s)
{
	bool acted = s && s->acted;

	if (s)
		s->acted = false;
	return acted;
}

void mg_services_metrics(const struct mg_services *s, struct mg_metrics *out)
{
	if (!s || !s->n)
		return;
	mg_metrics_family(
	        out, "memguardd_service_watched", "gauge",
	        "1 when memguardd watches the unit of a [service] section (loaded, running), else 0.");
	for (size_t i = 0; i < s->n; i++) {
		const char *labels[] = {"unit", s->u[i]->cfg.unit, NULL};
		mg_metrics_sample_u64(out, "memguardd_service_watched", labels,
		                      s->u[i]->where == UNIT_WATCHED);
	}
	static const struct {
		const char *name, *type, *help;
	} families[] = {
	        {"memguardd_service_held_bytes", "gauge",
	         "The unit's anonymous and shared memory at the latest look."},
	        {"memguardd_service_floor_bytes", "gauge",
	         "The least of its anonymous and shared memory in the latest quarter of its window."},
	        {"memguardd_service_trend_bytes_per_second", "gauge",
	         "How fast its floor rose over its window (negative: fell)."},
	        {"memguardd_service_limit_bytes", "gauge",
	         "What limits it: its memory.high or memory.max, else what the node lets it hold before "
	         "MemAvailable reaches available_min (the label says which)."},
	        {"memguardd_service_seconds_left", "gauge",
	         "Until its floor reaches that limit at its trend; +Inf when it does not rise."},
	        {"memguardd_service_restarts_total", "counter",
	         "Restarts of the unit by memguardd that worked."},
	        {"memguardd_service_restart_failures_total", "counter",
	         "Restarts of the unit by memguardd that failed (then SIGTERM and SIGKILL)."},
	};
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		const char *name = families[f].name;
		mg_metrics_family(out, name, families[f].type, families[f].help);
		for (size_t i = 0; i < s->n; i++) {
			const struct unit *u = s->u[i];
			const struct mg_service_verdict *v = &u->verdict;
			const char *labels[] = {"unit", u->cfg.unit, NULL, NULL, NULL};
			if (f == 5 || f == 6) {
				mg_metrics_sample_u64(out, name, labels,
				                      f == 5 ? u->restarts_total : u->failures_total);
			} else if (!u->judged) {
				continue; /* nothing known yet */
			} else if (f == 0 || f == 1) {
				mg_metrics_sample_u64(out, name, labels, f == 0 ? v->held : v->floor);
			} else if (f == 2) {
				mg_metrics_sample(out, name, labels, v->trend_bps);
			} else if (f == 3) {
				labels[2] = "limit";
				labels[3] = v->limit_kind == MG_SERVICE_LIMIT_NODE
				                    ? "node"
				                    : mg_service_limit_name(v->limit_kind);
				mg_metrics_sample_u64(out, name, labels, v->limit);
			} else {
				mg_metrics_sample(out, name, labels,
				                  v->left_usec == UINT64_MAX ? INFINITY
				                                             : (double)v->left_usec / SEC);
			}
		}
	}
}

void mg_services_print_status(const struct mg_config *cfg, FILE *out)
{
	_cleanup_free_ char *text = NULL;
	char names[512];
	int pid;
	long long written;

	if (!cfg->n_services)
		return;
	if (mg_read_file(MG_SERVICE_STATUS_FILE, &text) < 0 ||
	    sscanf(text, "# memguardd %d %lld", &pid, &written) != 2) {
		fprintf(out,
		        "%zu watched service%s (%s): nothing known, as %s is missing (memguardd not running, "
		        "or "
		        "not on a systemd node)\n",
		        cfg->n_services, cfg->n_services == 1 ? "" : "s",
		        unit_names(cfg, names, sizeof(names)), MG_SERVICE_STATUS_FILE);
		return;
	}
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	long long age = (long long)ts.tv_sec - written;
	bool alive = kill(pid, 0) == 0 || errno == EPERM;
	fprintf(out, "watched services (as memguardd %d said %llds ago%s):\n", pid, age,
	        !alive || age > STATUS_STALE_SEC ? "; stale: it is not running" : "");
	fprintf(out, "  %-28s %-14s %10s %10s %13s %-22s %8s  %s\n", "UNIT", "STATE", "ANON+SHMEM", "FLOOR",
	        "TREND", "LIMIT", "LEFT", "RESTARTS");
	fputs(strchr(text, '\n') ? strchr(text, '\n') + 1 : "", out);
}
