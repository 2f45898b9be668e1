/* memguardd's signal sources (sense.h). */
#include "sense.h"

#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

#define PRESSURE_FILE "pressure/memory"

int mg_sense_psi_state(int r)
{
	if (r >= 0)
		return 1;
	return r == -ENOENT || r == -EOPNOTSUPP ? 0 : r;
}

int mg_sense_open(struct mg_sense *s, int procfd)
{
	struct mg_psi psi;
	int r = mg_psi_read(procfd, PRESSURE_FILE, &psi);
	int state = mg_sense_psi_state(r);

	*s = (struct mg_sense)MG_SENSE_INIT;
	s->procfd = procfd;
	if (state < 0)
		return state;
	s->psi = state == 1;
	s->psi_error = s->psi ? 0 : r;
	return 0;
}

int mg_sense_arm(struct mg_sense *s, sd_event *e, uint64_t stall_usec, uint64_t window_usec,
                 sd_event_io_handler_t cb, void *userdata)
{
	sd_event_source *src = NULL;
	int fd, r;

	if (!s->psi)
		return 0;
	fd = mg_psi_trigger_open(s->procfd, PRESSURE_FILE, MG_PSI_SOME, stall_usec, window_usec);
	if (fd < 0)
		return fd;
	if ((r = sd_event_add_io(e, &src, fd, EPOLLPRI, cb, userdata)) < 0) {
		close(fd);
		return r;
	}
	sd_event_source_disable_unref(s->trigger_src);
	if (s->trigger_fd >= 0)
		close(s->trigger_fd);
	s->trigger_src = src;
	s->trigger_fd = fd;
	return 0;
}

int mg_sense_pressure(const struct mg_sense *s, struct mg_psi *ret)
{
	*ret = (struct mg_psi){0};
	return s->psi ? mg_psi_read(s->procfd, PRESSURE_FILE, ret) : 0;
}

const char *mg_sense_psi_note(const struct mg_sense *s)
{
	if (s->psi)
		return "";
	return "PSI is off: memguardd decides on MemAvailable and how fast it falls alone, polling it; "
	       "a node that stalls on reclaim while MemAvailable still looks high (page cache thrashing) "
	       "is not seen until MemAvailable falls, and nothing wakes memguardd between polls. "
	       "Boot with psi=1 (RHEL: grubby --update-kernel=ALL --args=psi=1) to turn it on";
}

void mg_sense_close(struct mg_sense *s)
{
	s->trigger_src = sd_event_source_disable_unref(s->trigger_src);
	if (s->trigger_fd >= 0)
		close(s->trigger_fd);
	s->trigger_fd = -1;
}
