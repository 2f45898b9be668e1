/* memguard.conf: one INI file plus conf.d/NAME.conf drop-ins, read in order.
 * Defaults live in mg_config_defaults() (and a [service] section's in
 * mg_service_config_defaults()) and nowhere else; conf/memguard.conf
 * documents every key. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MG_CONFIG_FILE "/etc/memguard/memguard.conf"
#define MG_CONFIG_DROPIN_DIR "/etc/memguard/conf.d"
/* A configuration file larger than this is refused. */
#define MG_CONFIG_MAX_BYTES (1u << 20)

enum mg_rlimit_as_mode { MG_RLIMIT_AS_AUTO, MG_RLIMIT_AS_ON, MG_RLIMIT_AS_OFF };

/* [service UNIT] sections: memguardd restarts a leaking systemd service
 * (docs/daemon.md, "Leaking services"). At most MG_SERVICE_MAX of them; a
 * unit's name is at most 255 bytes, as systemd's are. */
#define MG_SERVICE_MAX 32
#define MG_SERVICE_UNIT_MAX 256
/* restart_limit is at most this: memguardd keeps the times of that many restarts. */
#define MG_SERVICE_RESTARTS_MAX 16

/* restart: through systemd (RestartUnit); log: only say so in the journal. */
enum mg_service_action { MG_SERVICE_RESTART, MG_SERVICE_LOG };

struct mg_service_config {
	char unit[MG_SERVICE_UNIT_MAX]; /* "slurmctld.service": "[service slurmctld]" gets the suffix */
	enum mg_service_action action;
	uint64_t window_usec;   /* the floor is judged over this, in four parts */
	uint64_t horizon_usec;  /* a floor that rises to its limit within this is a leak */
	uint64_t stuck_usec;    /* at its limit, throttled or failing, this long: stuck */
	unsigned restart_limit; /* restarts by memguardd within restart_limit_interval */
	uint64_t restart_limit_interval_usec;
	uint64_t restart_backoff_usec; /* after a restart, the next waits this long, doubled for each
	                                  restart within restart_limit_interval */
};

/* strict: memory.max = the share. elastic: memory.max well above it, and
 * memguardd takes memory back under pressure. auto: elastic when memguardd
 * runs, else strict. */
enum mg_share_mode { MG_SHARE_AUTO, MG_SHARE_STRICT, MG_SHARE_ELASTIC };

struct mg_config {
	/* [budget] */
	char reserve[32];   /* size or percent of MemTotal kept for the OS and daemons */
	bool reserve_shmem; /* also keep back what Shmem (tmpfs, a RAM-resident OS image) holds */
	uint64_t min_share; /* a share below this is an error */
	/* [task] */
	unsigned high_percent; /* memory.high as a percentage of the share; 0 = not set */
	uint64_t swap_max;     /* memory.swap.max per task */
	bool oom_group;        /* memory.oom.group: a task and its children die together */
	enum mg_rlimit_as_mode rlimit_as;
	bool heap_flags;          /* set runtime heap flags from the share */
	uint64_t kill_grace_usec; /* after forwarding SIGTERM, wait this long, then kill */
	enum mg_share_mode mode;
	/* [cgroup] */
	char parent[64]; /* memguard's own cgroup under the root, when running as root */
	/* [log] */
	int log_level; /* syslog level */
	/* [daemon] */
	char guard[512];              /* cgroup path globs below the mount that memguardd may kill */
	char place_beside[512];       /* globs of the jobs' task cgroups a placed run goes beside */
	char protect[512];            /* process names whose cgroups are never killed */
	char available_min[32];       /* size or percent of MemTotal: act below this MemAvailable */
	char available_pressure[32];  /* under PSI pressure, act below this MemAvailable */
	unsigned pressure_full_avg10; /* percent: full avg10 that counts as pressure; 0 = off */
	uint64_t trigger_stall_usec;  /* PSI trigger: a stall this long ... */
	uint64_t trigger_window_usec; /* ... within this window */
	uint64_t settle_usec;         /* after a kill, wait this long before the next */
	uint64_t poll_max_usec;       /* longest sleep between MemAvailable checks */
	uint64_t lead_usec;           /* act this long before MemAvailable reaches available_min; 0 = off */
	char outside_due[32];         /* size or percent of MemTotal a top-level cgroup outside the guard may
	                                 hold before it is to blame, not a task within its share; 0 = off */
	bool kill_outside;            /* below available_min through such a cgroup, kill its process with
	                                 the highest OOM score rather than wait for the kernel */
	bool dry_run;                 /* decide and log, never kill */
	bool throttle;                /* first lower the victim's memory.high; kill if that is not enough */
	bool lead_kill;               /* with throttle: kill, not fence, when the hard floor is a lead away */
	char kill_log[256];           /* JSON lines, one per kill */
	char metrics_file[256];       /* Prometheus text file for node_exporter; "" = none */
	uint64_t metrics_interval_usec; /* at idle, write it at most this often */
	/* [service UNIT], in the order first seen; a later section for the same
	 * unit changes it key by key, as for the other sections. */
	struct mg_service_config services[MG_SERVICE_MAX];
	size_t n_services;
	/* The first mistake in a [service] section ("file:line: reason"), "" for
	 * none. It fails no parse: the launcher never reads these sections, and
	 * no job may fail for them; memguardd refuses a configuration with one. */
	char service_error[512];
};

void mg_config_defaults(struct mg_config *cfg);
/* The defaults of a [service] section for unit. */
void mg_service_config_defaults(struct mg_service_config *svc, const char *unit);

/* Parses INI text; origin names it in messages ("file"). On error returns
 * -EINVAL and writes a one-line "origin:line: reason" into err. */
int mg_config_parse_string(struct mg_config *cfg, const char *text, const char *origin, char *err,
                           size_t errsize);

/* Loads path (a missing file is fine unless required) and then every
 * dropin_dir/NAME.conf in lexical order. Either argument may be NULL. */
int mg_config_load(struct mg_config *cfg, const char *path, bool required, const char *dropin_dir, char *err,
                   size_t errsize);
