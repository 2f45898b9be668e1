/* The service guard's line to systemd (bus.h). */
#include "service/bus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>

#include "memguard/config.h"
#include "memguard/util.h"

#define SYSTEMD "org.freedesktop.systemd1"
#define MANAGER_PATH "/org/freedesktop/systemd1"
#define MANAGER "org.freedesktop.systemd1.Manager"
#define PRIVATE_SOCKET "unix:path=/run/systemd/private"

struct mg_svcbus {
	sd_bus *bus;
	sd_bus_slot *job_removed;
	mg_svcbus_job_cb on_job;
	void *userdata;
};

/* One call under way: what its reply is for. Freed with its slot. */
struct call {
	struct mg_svcbus *b;
	char unit[MG_SERVICE_UNIT_MAX];
	char load_state[32];
	union {
		mg_svcbus_unit_cb unit_cb;
		mg_svcbus_restart_cb restart_cb;
	};
	void *userdata;
};

static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct mg_svcbus *b = userdata;
	const char *job, *unit, *result;
	uint32_t id;

	if (sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) >= 0)
		b->on_job(b->userdata, unit, job, result);
	return 0;
}

int mg_svcbus_open(sd_event *e, int priority, mg_svcbus_job_cb on_job, void *userdata, struct mg_svcbus **ret,
                   char *why, size_t size)
{
	struct mg_svcbus *b = calloc(1, sizeof(*b));
	int r, r_private;

	if (!b)
		return -ENOMEM;
	b->on_job = on_job;
	b->userdata = userdata;
	if ((r_private = sd_bus_new(&b->bus)) >= 0 &&
	    (r_private = sd_bus_set_address(b->bus, PRIVATE_SOCKET)) >= 0)
		r_private = sd_bus_start(b->bus);
	if (r_private < 0) {
		b->bus = sd_bus_unref(b->bus);
		if ((r = sd_bus_open_system(&b->bus)) < 0) {
			snprintf(why, size,
			         "neither systemd's private socket (%s) nor the system bus (%s) answers",
			         strerror(-r_private), strerror(-r));
			free(b);
			return r;
		}
		/* On the system bus systemd sends its signals only to subscribers. */
		(void)sd_bus_call_method_async(b->bus, NULL, SYSTEMD, MANAGER_PATH, MANAGER, "Subscribe",
		                               NULL, NULL, "");
	}
	if ((r = sd_bus_attach_event(b->bus, e, priority)) < 0 ||
	    (r = sd_bus_match_signal_async(b->bus, &b->job_removed, NULL, MANAGER_PATH, MANAGER, "JobRemoved",
	                                   on_job_removed, NULL, b)) < 0) {
		snprintf(why, size, "set up the connection to systemd: %s", strerror(-r));
		mg_svcbus_free(b);
		return r;
	}
	*ret = b;
	return 0;
}

bool mg_svcbus_usable(struct mg_svcbus *b)
{
	return b && sd_bus_is_open(b->bus) > 0;
}

/* Starts a call whose reply goes to handler with c, which the call owns
 * from here on (freed with its slot, or now when it could not start). */
static int call(struct call *c, const char *path, const char *interface, const char *member,
                sd_bus_message_handler_t handler, const char *types, const char *a, const char *b)
{
	sd_bus_slot *slot = NULL;
	int r = sd_bus_call_method_async(c->b->bus, &slot, SYSTEMD, path, interface, member, handler, c,
	                                 types, a, b);

	if (r < 0) {
		free(c);
		return r;
	}
	(void)sd_bus_slot_set_destroy_callback(slot, free);
	(void)sd_bus_slot_set_floating(slot, 1);
	sd_bus_slot_unref(slot);
	return 0;
}

static struct call *new_call(struct mg_svcbus *b, const char *unit, void *userdata)
{
	struct call *c = calloc(1, sizeof(*c));

	if (c) {
		c->b = b;
		snprintf(c->unit, sizeof(c->unit), "%s", unit);
		c->userdata = userdata;
	}
	return c;
}

/* A reply that is an error: its errno (EIO when it has none) and message. */
static int reply_error(sd_bus_message *m, const char **ret_why)
{
	const sd_bus_error *e = sd_bus_message_get_error(m);
	int r = sd_bus_message_get_errno(m);

	*ret_why = e && e->message ? e->message : e && e->name ? e->name : "no reason given";
	return -(r > 0 ? r : EIO);
}

/* A Properties.Get reply holding a string. */
static int read_string(sd_bus_message *m, const char **ret)
{
	int r = sd_bus_message_enter_container(m, 'v', "s");

	return r < 0 ? r : sd_bus_message_read(m, "s", ret);
}

static int on_cgroup(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct call *c = userdata;
	const char *cgroup, *why;
	int r;

	if (sd_bus_message_is_method_error(m, NULL)) {
		r = reply_error(m, &why);
		c->unit_cb(c->userdata, c->unit, r, NULL, NULL, why);
	} else if ((r = read_string(m, &cgroup)) < 0) {
		c->unit_cb(c->userdata, c->unit, r, NULL, NULL, "a ControlGroup that is no string");
	} else {
		c->unit_cb(c->userdata, c->unit, 0, c->load_state, cgroup + strspn(cgroup, "/"), NULL);
	}
	return 0;
}

static int on_load_state(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct call *c = userdata, *next;
	const char *state, *why;
	int r;

	if (sd_bus_message_is_method_error(m, NULL)) {
		r = reply_error(m, &why);
		c->unit_cb(c->userdata, c->unit, r, NULL, NULL, why);
		return 0;
	}
	if ((r = read_string(m, &state)) < 0) {
		c->unit_cb(c->userdata, c->unit, r, NULL, NULL, "a LoadState that is no string");
		return 0;
	}
	if (strcmp(state, "loaded") != 0) {
		c->unit_cb(c->userdata, c->unit, 0, state, "", NULL);
		return 0;
	}
	/* Loaded: where it runs. */
	_cleanup_free_ char *path = NULL;
	if (!(next = new_call(c->b, c->unit, c->userdata)) ||
	    sd_bus_path_encode("/org/freedesktop/systemd1/unit", c->unit, &path) < 0) {
		free(next);
		c->unit_cb(c->userdata, c->unit, -ENOMEM, NULL, NULL, "out of memory");
		return 0;
	}
	next->unit_cb = c->unit_cb;
	snprintf(next->load_state, sizeof(next->load_state), "%s", state);
	if ((r = call(next, path, "org.freedesktop.DBus.Properties", "Get", on_cgroup, "ss",
	              "org.freedesktop.systemd1.Service", "ControlGroup")) < 0)
		c->unit_cb(c->userdata, c->unit, r, NULL, NULL, "cannot ask for its ControlGroup");
	return 0;
}

int mg_svcbus_lookup(struct mg_svcbus *b, const char *unit, mg_svcbus_unit_cb cb, void *userdata)
{
	_cleanup_free_ char *path = NULL;
	struct call *c = new_call(b, unit, userdata);

	if (!c || sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit, &path) < 0) {
		free(c);
		return -ENOMEM;
	}
	c->unit_cb = cb;
	return call(c, path, "org.freedesktop.DBus.Properties", "Get", on_load_state, "ss",
	            "org.freedesktop.systemd1.Unit", "LoadState");
}

static int on_restart(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct call *c = userdata;
	const char *job, *why;
	int r;

	if (sd_bus_message_is_method_error(m, NULL)) {
		r = reply_error(m, &why);
		c->restart_cb(c->userdata, c->unit, r, NULL, why);
	} else if ((r = sd_bus_message_read(m, "o", &job)) < 0) {
		c->restart_cb(c->userdata, c->unit, r, NULL, "a reply without a job");
	} else {
		c->restart_cb(c->userdata, c->unit, 0, job, NULL);
	}
	return 0;
}

int mg_svcbus_restart(struct mg_svcbus *b, const char *unit, mg_svcbus_restart_cb cb, void *userdata)
{
	struct call *c = new_call(b, unit, userdata);

	if (!c)
		return -ENOMEM;
	c->restart_cb = cb;
	return call(c, MANAGER_PATH, MANAGER, "RestartUnit", on_restart, "ss", unit, "replace");
}

void mg_svcbus_free(struct mg_svcbus *b)
{
	if (!b)
		return;
	sd_bus_slot_unref(b->job_removed);
	sd_bus_flush_close_unref(b->bus);
	free(b);
}
