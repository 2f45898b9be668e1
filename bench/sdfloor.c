/* sdfloor: the least an idle daemon built on libsystemd's sd-event costs, for bench/idle.sh.
 *   sdfloor
 * Does what memguardd does before it has any work: loads libsystemd (and what it links), makes the
 * default event loop, locks its memory as memguardd does (mlockall with MCL_ONFAULT), and waits on the
 * loop until SIGTERM. Its RSS is the floor under any sd-event daemon on this system. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <systemd/sd-event.h>

int main(void)
{
	sd_event *loop = NULL;
	sigset_t term;
	int r;

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	sigprocmask(SIG_BLOCK, &term, NULL);
	r = sd_event_default(&loop);
	if (r >= 0)
		r = sd_event_add_signal(loop, NULL, SIGTERM, NULL, NULL);
	if (r < 0) {
		fprintf(stderr, "sdfloor: cannot make an event loop: %s\n", strerror(-r));
		return 1;
	}
	if (mlockall(MCL_CURRENT | MCL_FUTURE | MCL_ONFAULT) < 0)
		perror("sdfloor: mlockall");
	r = sd_event_loop(loop);
	sd_event_unref(loop);
	return r < 0 ? 1 : 0;
}
