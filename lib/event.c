/* Helpers over sd-event: one way to arm a timer. */
#include "memguard/event.h"

#include <time.h>

int mg_event_arm_timer(sd_event *e, sd_event_source **src, uint64_t usec, uint64_t accuracy_usec,
                       sd_event_time_handler_t cb, void *userdata)
{
	int r;

	if (*src) {
		if ((r = sd_event_source_set_time_relative(*src, usec)) < 0 ||
		    (r = sd_event_source_set_enabled(*src, SD_EVENT_ONESHOT)) < 0)
			return r;
		return 0;
	}
	r = sd_event_add_time_relative(e, src, CLOCK_MONOTONIC, usec, accuracy_usec, cb, userdata);
	return r < 0 ? r : 0;
}
