/* A small file written from a thread of its own, for the bench's probes.
 * In the guest their records live on the 9p share, which under load can
 * take a second or more to open a file (the host serves it on the same
 * two cores as the guest's CPUs); a probe that wrote inline would measure
 * that, not the node. The caller posts the whole text; the thread writes
 * the newest one to PATH.tmp and renames it over PATH. */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define BGWRITE_MAX 65536 /* the sampler's 256 tasks take about 16 KiB */

struct bgwrite {
	pthread_mutex_t lock;
	pthread_cond_t posted;
	pthread_t thread;
	const char *path;
	char draft[BGWRITE_MAX]; /* the caller's, between bgwrite_begin and bgwrite_commit */
	char text[BGWRITE_MAX];  /* the newest posted text, under lock */
	char out[BGWRITE_MAX];   /* the writer's copy */
	bool pending, closing, running;
};

static void bgwrite_file(const char *path, const char *text)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (!(f = fopen(tmp, "w")))
		return;
	fputs(text, f);
	if (fclose(f) == 0)
		rename(tmp, path);
}

static void *bgwrite_loop(void *arg)
{
	struct bgwrite *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->pending && !w->closing)
			pthread_cond_wait(&w->posted, &w->lock);
		if (!w->pending)
			break;
		memcpy(w->out, w->text, sizeof(w->out));
		w->pending = false;
		pthread_mutex_unlock(&w->lock);
		bgwrite_file(w->path, w->out);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

/* Starts the writer; without a thread, texts are written inline. */
static void bgwrite_start(struct bgwrite *w, const char *path)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->posted, NULL);
	w->path = path;
	w->running = pthread_create(&w->thread, NULL, bgwrite_loop, w) == 0;
}

/* A stream into the draft: the next text. */
static FILE *bgwrite_begin(struct bgwrite *w)
{
	return fmemopen(w->draft, sizeof(w->draft), "w");
}

/* Closes the draft's stream and hands its text to the writer, replacing a
 * text it has not written yet; with final, waits until it is written. A
 * draft that did not fit is dropped: the file keeps the last whole text. */
static void bgwrite_commit(struct bgwrite *w, FILE *f, bool final)
{
	bool whole = f && !ferror(f) && ftell(f) < (long)sizeof(w->draft) - 1;

	if (f && fclose(f) != 0)
		whole = false;
	if (!w->running) {
		if (whole)
			bgwrite_file(w->path, w->draft);
		return;
	}
	pthread_mutex_lock(&w->lock);
	if (whole) {
		memcpy(w->text, w->draft, sizeof(w->text));
		w->pending = true;
	}
	w->closing = final;
	pthread_cond_signal(&w->posted);
	pthread_mutex_unlock(&w->lock);
	if (final)
		pthread_join(w->thread, NULL);
}
