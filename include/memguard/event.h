/* Helpers over sd-event shared by memguard and memguardd. */
#pragma once

#include <stdint.h>
#include <systemd/sd-event.h>

/* Arms a one-shot CLOCK_MONOTONIC timer usec from now. When *src is a timer
 * already, re-arms it (cb and userdata stay as they were); else adds one to
 * e with accuracy_usec of slack, calling cb with userdata, and stores it in
 * *src. Returns 0, or -errno from sd-event (the caller logs it). */
int mg_event_arm_timer(sd_event *e, sd_event_source **src, uint64_t usec, uint64_t accuracy_usec,
                       sd_event_time_handler_t cb, void *userdata);
