/* memguardd: watches memory pressure (PSI triggers, MemAvailable) and kills
 * the guarded cgroup furthest over its share before the node stalls. This
 * file starts it: the options, the configuration and its reloads, the
 * guard's own protection, the event loop, and its three services, the guard
 * (guard.h), the placement service (placesvc.h) and the service guard
 * (service.h). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "guard/guard.h"
#include "memguard/cgroup.h"
#include "memguard/config.h"
#include "memguard/locate.h"
#include "memguard/log.h"
#include "memguard/meminfo.h"
#include "memguard/paths.h"
#include "memguard/procstat.h"
#include "memguard/util.h"
#include "place/placesvc.h"
#include "guard/policy.h"
#include "guard/sense.h"
#include "service/service.h"

/* Placed runs one ordinary user may have at once. */
#define PLACE_MAX_RUNS_PER_UID 32

/* What main.c keeps beside the two services it starts. */
struct daemon {
	const char *config_path;
	const char *dropin_dir;
	bool cli_dry_run; /* -n and -v outlive a reload */
	int cli_verbose;
	struct mg_guard guard;
	struct mg_placesvc *placesvc;
	bool node_daemon; /* the pid file's holder: it serves placements and watches services */
	struct mg_services *services;
};

static int load_config(struct daemon *d, struct mg_config *ret, struct mg_policy *ret_policy)
{
	char err[512];
	int r;

	mg_config_defaults(ret);
	r = mg_config_load(ret, d->config_path, d->dropin_dir == NULL, d->dropin_dir, err, sizeof(err));
	ret->dry_run |= d->cli_dry_run;
	if (r == 0)
		r = mg_policy_from_config(ret, d->guard.mem.mem_total, ret_policy, err, sizeof(err));
	if (r < 0)
		log_err("%s", err);
	else if (ret->service_error[0])
		return log_err("%s", ret->service_error), -EINVAL;
	return r;
}

/* The service guard's settings from the rest of the configuration. */
static struct mg_services_rules services_rules(const struct mg_config *cfg, const struct mg_policy *policy)
{
	return (struct mg_services_rules){
	        .available_min = policy->available_min,
	        .available_pressure = policy->available_pressure,
	        .kill_grace_usec = cfg->kill_grace_usec,
	        .dry_run = policy->dry_run,
	};
}

/* Starts the service guard, or hands it a reloaded configuration. */
static void configure_services(struct daemon *d)
{
	struct mg_services_rules rules = services_rules(&d->guard.cfg, &d->guard.policy);
	int r;

	if (!d->node_daemon)
		return;
	if (d->services)
		mg_services_configure(d->services, &d->guard.cfg, &rules);
	else if ((r = mg_services_start(d->guard.event, d->guard.mountfd, d->guard.procfd, &d->guard.cfg,
	                                &rules, &d->services)) < 0)
		mg_log_errno(LOG_ERR, r, "start the service guard: %m");
	/* The outsider rule asks it first. */
	d->guard.services = d->services;
}

static int on_reload(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata)
{
	struct daemon *d = userdata;
	struct mg_config cfg;
	struct mg_policy policy;

	sd_notify(false, "RELOADING=1");
	if (load_config(d, &cfg, &policy) < 0) {
		log_err("reload failed: keeping the running configuration");
	} else {
		mg_log_set_level(d->cli_verbose ? LOG_DEBUG : cfg.log_level);
		mg_guard_configure(&d->guard, &cfg, &policy);
		if (d->placesvc)
			mg_placesvc_configure(d->placesvc, cfg.kill_grace_usec, PLACE_MAX_RUNS_PER_UID,
			                      cfg.place_beside);
		configure_services(d);
		log_notice("configuration reloaded");
		mg_guard_rescan_now(&d->guard);
	}
	sd_notify(false, "READY=1");
	return 0;
}

/* Whether CapEff in procfd/self/status has CAP_KILL (bit 5); true when it
 * cannot tell. Root without it may only signal its own uid's processes. */
static bool has_cap_kill(int procfd)
{
	_cleanup_free_ char *text = NULL;
	const char *cap;

	if (mg_read_file_at(procfd, "self/status", &text) < 0 || !(cap = mg_status_field(text, "CapEff")))
		return true;
	return strtoull(cap, NULL, 16) & (1ull << 5);
}

/* Protect the guard itself: no paging out, never the OOM killer's choice. */
static void protect_self(int procfd)
{
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0 && mlockall(MCL_CURRENT | MCL_FUTURE) < 0)
		log_warn("mlockall: %s: memguardd may be paged out under pressure", strerror(errno));
	if (mg_write_file_at(procfd, "self/oom_score_adj", "-1000") < 0)
		log_warn("cannot set oom_score_adj to -1000: the kernel might kill memguardd");
	if (!has_cap_kill(procfd))
		log_warn("no CAP_KILL: kills of other users' tasks will fail");
	/* A pidfd per process of a victim, and a fork bomb has thousands: more
	 * than the usual soft limit of 1024 descriptors. */
	struct rlimit nofile;
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
			log_debug("raise RLIMIT_NOFILE: %s", strerror(errno));
	}
}

/* Writes our pid for the launcher and holds a lock on the file for life, so
 * a second memguardd (say memguardd -n by hand) neither overwrites nor
 * removes the running one's. Returns the locked fd, or -1. */
static int write_pidfile(void)
{
	char buf[32], dir[] = MG_DAEMON_PIDFILE;

	/* systemd's RuntimeDirectory= makes it; without systemd we do. */
	*strrchr(dir, '/') = '\0';
	(void)mkdir(dir, 0755);
	int fd = open(MG_DAEMON_PIDFILE, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);

	if (fd < 0) {
		log_debug("write %s: %s", MG_DAEMON_PIDFILE, strerror(errno));
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		log_warn("%s is held by another memguardd: not writing it", MG_DAEMON_PIDFILE);
		close(fd);
		return -1;
	}
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) < 0 || write(fd, buf, (size_t)len) != len)
		log_debug("write %s: %s", MG_DAEMON_PIDFILE, strerror(errno));
	return fd;
}

static void usage(void)
{
	puts("Usage: memguardd [OPTIONS]\n"
	     "Watches memory pressure and, before the node stalls, fences in the guarded\n"
	     "cgroup furthest over its share and kills it if it keeps growing.\n\n"
	     "  -c, --config FILE   read FILE instead of " MG_CONFIG_FILE " and conf.d\n"
	     "  -n, --dry-run       decide and log, never kill\n"
	     "  -s, --status        print node pressure, guarded cgroups and recent kills, then exit\n"
	     "  -v, --verbose       debug messages\n"
	     "  -h, --help          this text");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
	        {"config", required_argument, NULL, 'c'}, {"dry-run", no_argument, NULL, 'n'},
	        {"status", no_argument, NULL, 's'},       {"verbose", no_argument, NULL, 'v'},
	        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct daemon d = {
	        .config_path = MG_CONFIG_FILE, .dropin_dir = MG_CONFIG_DROPIN_DIR, .guard = MG_GUARD_INIT};
	struct mg_cgroup_mount m = {0};
	bool status = false, dry_run = false;
	int verbose = 0, c, r;

	mg_log_setup("memguardd", MG_LOG_AUTO, LOG_INFO);
	opterr = 0; /* one message of our own, naming the option */
	while ((c = getopt_long(argc, argv, ":c:nsvh", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			d.config_path = optarg;
			d.dropin_dir = NULL;
			break;
		case 'n':
			dry_run = true;
			break;
		case 's':
			status = true;
			break;
		case 'v':
			verbose++;
			break;
		case 'h':
			usage();
			return 0;
		case ':':
			log_err("option %s needs an argument", argv[optind - 1]);
			return 2;
		default:
			if (optopt)
				log_err("unknown option -%c (see memguardd --help)", optopt);
			else
				log_err("unknown option %s (see memguardd --help)", argv[optind - 1]);
			return 2;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument \"%s\": memguardd takes options only (see memguardd --help)",
		        argv[optind]);
		return 2;
	}
	const char *proc_path = getenv(MG_PROC_PATH_ENV) ?: MG_PROC_PATH;
	struct mg_guard *guard = &d.guard;
	guard->procfd = open(proc_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (guard->procfd < 0)
		return mg_log_errno(LOG_ERR, -errno, "open %s: %m", proc_path), 1;
	if ((r = mg_meminfo_read(guard->procfd, &guard->mem)) < 0)
		return mg_log_errno(LOG_ERR, r, "read %s/meminfo: %m", proc_path), 1;
	d.cli_dry_run = dry_run;
	d.cli_verbose = verbose;
	if (load_config(&d, &guard->cfg, &guard->policy) < 0)
		return 1;
	mg_log_set_level(verbose ? LOG_DEBUG : guard->cfg.log_level);

	r = mg_cgroup_find_memory_mount(guard->procfd, &m);
	if (r < 0 || !m.unified) {
		if (r < 0)
			log_err("memguardd needs the memory controller on cgroup v2: no hierarchy carries it "
			        "(%s)",
			        strerror(-r));
		else
			log_err("memguardd needs the memory controller on cgroup v2: it is on cgroup v1 at "
			        "%s (boot with systemd.unified_cgroup_hierarchy=1 to switch the node to v2)",
			        m.path);
		return 1;
	}
	snprintf(guard->mount, sizeof(guard->mount), "%s", m.path);
	mg_cgroup_mount_done(&m);
	guard->mountfd = mg_cg_open(AT_FDCWD, guard->mount);
	if (guard->mountfd < 0)
		return log_err("open %s: %s", guard->mount, strerror(-guard->mountfd)), 1;
	if (sd_event_new(&guard->event) < 0)
		return 1;
	if ((r = mg_sense_open(&guard->sense, guard->procfd)) < 0)
		return mg_log_errno(LOG_ERR, r, "read %s/pressure/memory: %m", proc_path), 1;
	if (status) {
		mg_guard_print_status(guard);
		mg_services_print_status(&guard->cfg, stdout);
		return 0;
	}

	protect_self(guard->procfd);
	if ((r = mg_guard_arm_trigger(guard)) < 0)
		return mg_log_errno(LOG_ERR, r, "arm a PSI trigger on %s/pressure/memory: %m", proc_path), 1;
	if (!guard->sense.psi)
		mg_log_errno(LOG_WARNING, guard->sense.psi_error, "%s/pressure/memory: %m. %s", proc_path,
		             mg_sense_psi_note(&guard->sense));
	if (mg_guard_watch(guard) < 0)
		return 1;
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	if ((r = sd_event_add_signal(guard->event, NULL, SIGHUP, on_reload, &d)) < 0 ||
	    (r = sd_event_add_signal(guard->event, NULL, SIGTERM, NULL, NULL)) < 0 ||
	    (r = sd_event_add_signal(guard->event, NULL, SIGINT, NULL, NULL)) < 0 ||
	    (r = sd_event_set_watchdog(guard->event, true)) < 0)
		return mg_log_errno(LOG_ERR, r, "set up the event loop: %m"), 1;

	int pidfile = write_pidfile();
	/* Only the node's memguardd (the pid file's holder) serves placements. */
	if (pidfile >= 0) {
		struct mg_placesvc_config pc = {
		        .socket_path = getenv(MG_PLACE_SOCKET_ENV) ?: MG_PLACE_SOCKET,
		        .mount = guard->mount,
		        .grace_usec = guard->cfg.kill_grace_usec,
		        .max_runs_per_uid = PLACE_MAX_RUNS_PER_UID,
		        .registry = MG_PLACE_REGISTRY,
		        .watch_fd = guard->inotify_fd,
		        .watches = &guard->watches,
		        .beside = guard->cfg.place_beside,
		};
		if ((r = mg_placesvc_start(guard->event, guard->mountfd, guard->procfd, &pc, &d.placesvc)) <
		    0)
			mg_log_errno(LOG_WARNING, r,
			             "placement service on %s: %m; ordinary users' runs stay degraded",
			             pc.socket_path);
		else
			log_info("placing ordinary users' runs on request at %s, each beside its caller's "
			         "task cgroup (%s)",
			         pc.socket_path, pc.beside);
	}
	/* The guard follows the placed runs. */
	guard->placesvc = d.placesvc;
	d.node_daemon = pidfile >= 0;
	configure_services(&d);
	mg_guard_begin(guard);
	char policy[256];
	log_notice("watching %s and %zu guarded cgroups (%s); %s%s", proc_path, guard->nw, guard->cfg.guard,
	           mg_policy_describe(&guard->policy, policy, sizeof(policy)),
	           guard->cfg.dry_run ? " (dry run)" : "");
	sd_notify(false, "READY=1\nSTATUS=watching memory pressure");
	r = sd_event_loop(guard->event);
	sd_notify(false, "STOPPING=1");
	mg_services_free(d.services);
	mg_placesvc_free(d.placesvc);
	if (pidfile >= 0) {
		unlink(MG_DAEMON_PIDFILE);
		close(pidfile);
	}
	mg_guard_done(guard);
	sd_event_unref(guard->event);
	return r < 0 ? 1 : 0;
}
