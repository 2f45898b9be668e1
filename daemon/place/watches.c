/* memguardd's inotify watches per uid. */
#include "place/watches.h"

#include <stdlib.h>

static struct mg_watches_uid *find(const struct mg_watches *w, uid_t uid)
{
	for (size_t i = 0; i < w->n; i++)
		if (w->e[i].uid == uid)
			return &w->e[i];
	return NULL;
}

bool mg_watches_take(struct mg_watches *w, uid_t uid, unsigned n)
{
	struct mg_watches_uid *e = find(w, uid);

	if (e && uid != 0 && e->n + n > MG_WATCHES_PER_UID)
		return false;
	if (!e && uid != 0 && n > MG_WATCHES_PER_UID)
		return false;
	if (!e) {
		if (w->n == w->cap) {
			size_t cap = w->cap ? 2 * w->cap : 16;
			struct mg_watches_uid *bigger = realloc(w->e, cap * sizeof(*bigger));
			if (!bigger)
				return false;
			w->e = bigger;
			w->cap = cap;
		}
		e = &w->e[w->n++];
		*e = (struct mg_watches_uid){.uid = uid};
	}
	e->n += n;
	return true;
}

void mg_watches_give(struct mg_watches *w, uid_t uid, unsigned n)
{
	struct mg_watches_uid *e = find(w, uid);

	if (!e)
		return;
	e->n = e->n > n ? e->n - n : 0;
	if (e->n == 0)
		*e = w->e[--w->n];
}

unsigned mg_watches_of(const struct mg_watches *w, uid_t uid)
{
	const struct mg_watches_uid *e = find(w, uid);

	return e ? e->n : 0;
}

void mg_watches_done(struct mg_watches *w)
{
	free(w->e);
	*w = (struct mg_watches)MG_WATCHES_INIT;
}
