/* The tasks' output, grouped, by line, in order, tagged (output.h). */
#include "farm/output.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "memguard/log.h"
#include "memguard/util.h"

#define CHUNK (64u * 1024)
/* How long an ending task's pipes may take to reach their end: its
 * processes are gone or being killed by then. */
#define DRAIN_MSEC 200

/* Output held in the spool, in order. */
struct chunk {
	off_t off;
	size_t len;
};

struct mg_output_stream {
	struct mg_output *o;
	struct mg_output_task *t;
	int which; /* 0: stdout, 1: stderr */
	int fd;    /* the pipe's read end, -1 */
	int tee;   /* the --results file, -1 */
	sd_event_source *src;
	struct chunk *chunks;
	size_t nchunks;
	char *partial; /* --line-buffer: a line not ended yet */
	size_t npartial;
	bool line_start; /* where --tag's next tag goes */
};

enum task_state { T_IDLE, T_RUNNING, T_DONE, T_PRINTED, T_SKIPPED };

/* A task's streams, while it runs or its output waits. */
struct mg_output_task {
	size_t index;
	struct mg_output_stream s[2];
};

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			(void)poll(&pfd, 1, -1);
			continue;
		}
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int mg_output_tagged(int fd, const char *prefix, const char *data, size_t len, bool *line_start)
{
	char buf[CHUNK];
	size_t used = 0, plen = prefix ? strlen(prefix) : 0;
	int r;

	if (!prefix) {
		if (len)
			*line_start = data[len - 1] == '\n';
		return write_all(fd, data, len);
	}
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t n = nl ? (size_t)(nl - data) + 1 : len;
		size_t need = (*line_start ? plen + 1 : 0) + n;
		if (used && used + need > sizeof(buf)) {
			if ((r = write_all(fd, buf, used)) < 0)
				return r;
			used = 0;
		}
		if (need > sizeof(buf)) {
			/* A long line: its tag, then the line itself. */
			if (*line_start &&
			    ((r = write_all(fd, prefix, plen)) < 0 || (r = write_all(fd, "\t", 1)) < 0))
				return r;
			if ((r = write_all(fd, data, n)) < 0)
				return r;
		} else {
			if (*line_start) {
				memcpy(buf + used, prefix, plen);
				buf[used + plen] = '\t';
				used += plen + 1;
			}
			memcpy(buf + used, data, n);
			used += n;
		}
		*line_start = nl != NULL;
		data += n;
		len -= n;
	}
	return used ? write_all(fd, buf, used) : 0;
}

int mg_output_init(struct mg_output *o, enum mg_output_mode mode, bool keep_order, const char *const *tags,
                   size_t ntasks)
{
	*o = (struct mg_output){.mode = mode,
	                        .keep_order = keep_order,
	                        .tag = tags != NULL,
	                        .fd = {STDOUT_FILENO, STDERR_FILENO},
	                        .tags = tags,
	                        .ntasks = ntasks,
	                        .spool = -1};
	if (mode == MG_OUTPUT_PASS)
		return 0;
	if (!(o->task = calloc(ntasks ? ntasks : 1, sizeof(*o->task))) ||
	    !(o->state = calloc(ntasks ? ntasks : 1, 1))) {
		free(o->task);
		o->task = NULL;
		return -ENOMEM;
	}
	/* A reader gone (memguard ... | head) ends the output, not memguard. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static struct mg_output_task *task_of(struct mg_output *o, size_t index)
{
	struct mg_output_task *t = o->task[index];

	if (t)
		return t;
	if (!(t = calloc(1, sizeof(*t))))
		return NULL;
	t->index = index;
	for (int w = 0; w < 2; w++)
		t->s[w] = (struct mg_output_stream){
		        .o = o, .t = t, .which = w, .fd = -1, .tee = -1, .line_start = true};
	o->task[index] = t;
	return t;
}

/* Writes to memguard's stdout or stderr, tagged; a failed write (a reader
 * gone) is said once, and nothing more goes there. */
static void print(struct mg_output_stream *s, const char *data, size_t len)
{
	struct mg_output *o = s->o;
	int r;

	if (o->gone[s->which] || o->halted || !len)
		return;
	r = mg_output_tagged(o->fd[s->which], o->tag && o->tags ? o->tags[s->t->index] : NULL, data, len,
	                     &s->line_start);
	if (r < 0) {
		o->gone[s->which] = true;
		mg_log_errno(LOG_WARNING, r,
		             "cannot write the tasks' output to %s: %m; the rest of it is dropped",
		             s->which ? "standard error" : "standard output");
	}
}

/* Prints data; hold: keep what follows the last newline for later, so that
 * tasks printing at once never split each other's lines. */
static void emit(struct mg_output_stream *s, const char *data, size_t len, bool hold)
{
	const char *nl = hold ? memrchr(data, '\n', len) : NULL;

	if (hold && !nl) {
		char *bigger = realloc(s->partial, s->npartial + len);
		if (bigger) {
			memcpy(bigger + s->npartial, data, len);
			s->partial = bigger;
			s->npartial += len;
			return;
		}
		/* No memory to hold it: out it goes. */
	}
	if (s->npartial) {
		print(s, s->partial, s->npartial);
		free(s->partial);
		s->partial = NULL;
		s->npartial = 0;
	}
	size_t now = nl ? (size_t)(nl - data) + 1 : len;
	print(s, data, now);
	if (now < len)
		emit(s, data + now, len - now, true);
}

/* Whether a stream's data is printed as it comes. */
static bool live(const struct mg_output_stream *s)
{
	const struct mg_output *o = s->o;

	return o->mode == MG_OUTPUT_LINE && (!o->keep_order || s->t->index == o->next);
}

static int open_spool(struct mg_output *o)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int fd;

	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		/* No O_TMPFILE there (NFS): a named file, unlinked at once. */
		snprintf(path, sizeof(path), "%s/memguard-output-XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
	}
	if (fd < 0)
		return mg_log_errno(LOG_WARNING, -errno,
		                    "cannot create a file in %s to hold the tasks' output: %m; it is printed "
		                    "as it comes",
		                    dir);
	o->spool = fd;
	return 0;
}

/* Holds data for later in the spool; without one, prints it now. */
static void hold(struct mg_output_stream *s, const char *data, size_t len)
{
	struct mg_output *o = s->o;

	if (o->spool < 0 && (o->spool == -2 || open_spool(o) < 0)) {
		o->spool = -2;
		print(s, data, len);
		return;
	}
	ssize_t w = 0;
	for (size_t done = 0; done < len; done += (size_t)w) {
		w = pwrite(o->spool, data + done, len - done, o->spool_end + (off_t)done);
		if (w < 0 && errno == EINTR) {
			w = 0;
			continue;
		}
		if (w <= 0) {
			mg_log_errno(LOG_WARNING, w < 0 ? -errno : -EIO,
			             "cannot hold the tasks' output: %m; it is printed as it comes");
			print(s, data + done, len - done);
			return;
		}
	}
	struct chunk *last = s->nchunks ? &s->chunks[s->nchunks - 1] : NULL;
	if (last && last->off + (off_t)last->len == o->spool_end) {
		last->len += len;
	} else {
		struct chunk *more = realloc(s->chunks, (s->nchunks + 1) * sizeof(*more));
		if (!more) {
			print(s, data, len);
			return;
		}
		s->chunks = more;
		s->chunks[s->nchunks++] = (struct chunk){.off = o->spool_end, .len = len};
		if (s->nchunks == 1 && !s->t->s[!s->which].nchunks)
			o->spooled++;
	}
	o->spool_end += (off_t)len;
}

/* Drops what a stream holds; the spool's space is given back. */
static void release(struct mg_output_stream *s)
{
	struct mg_output *o = s->o;
	bool had = s->nchunks > 0;

	for (size_t i = 0; i < s->nchunks; i++)
		(void)fallocate(o->spool, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, s->chunks[i].off,
		                (off_t)s->chunks[i].len);
	free(s->chunks);
	s->chunks = NULL;
	s->nchunks = 0;
	free(s->partial);
	s->partial = NULL;
	s->npartial = 0;
	if (had && !s->t->s[!s->which].nchunks && --o->spooled == 0 && o->spool >= 0) {
		(void)ftruncate(o->spool, 0);
		o->spool_end = 0;
	}
}

/* Prints what a stream holds, then gives its space back. */
static void replay(struct mg_output_stream *s)
{
	char buf[CHUNK];

	for (size_t i = 0; i < s->nchunks; i++)
		for (size_t done = 0; done < s->chunks[i].len;) {
			size_t want =
			        s->chunks[i].len - done < sizeof(buf) ? s->chunks[i].len - done : sizeof(buf);
			ssize_t n = pread(s->o->spool, buf, want, s->chunks[i].off + (off_t)done);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			print(s, buf, (size_t)n);
			done += (size_t)n;
		}
	release(s);
}

static void deliver(struct mg_output_stream *s, const char *data, size_t len)
{
	if (s->tee >= 0 && write_all(s->tee, data, len) < 0) {
		mg_log_errno(LOG_WARNING, -errno, "cannot copy task %zu's output to its --results file: %m",
		             s->t->index + 1);
		close(s->tee);
		s->tee = -1;
	}
	if (s->o->halted)
		return;
	if (live(s))
		emit(s, data, len, !s->o->keep_order);
	else
		hold(s, data, len);
}

static void close_stream(struct mg_output_stream *s)
{
	s->src = sd_event_source_disable_unref(s->src);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Reads what the pipe has. Returns 1 at its end, 0 when it may have more. */
static int drain(struct mg_output_stream *s)
{
	char buf[CHUNK];

	for (;;) {
		ssize_t n = read(s->fd, buf, sizeof(buf));
		if (n > 0) {
			deliver(s, buf, (size_t)n);
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n < 0)
			mg_log_errno(LOG_WARNING, -errno, "read task %zu's output: %m", s->t->index + 1);
		close_stream(s);
		return 1;
	}
}

static int on_readable(sd_event_source *src, int fd, uint32_t revents, void *userdata)
{
	(void)drain(userdata);
	return 0;
}

static int watch(struct mg_output_stream *s)
{
	int r;

	if (!s->o->event || s->fd < 0)
		return 0;
	r = sd_event_add_io(s->o->event, &s->src, s->fd, EPOLLIN, on_readable, s);
	return r < 0 ? mg_log_errno(LOG_ERR, r, "watch task %zu's output: %m", s->t->index + 1) : 0;
}

void mg_output_attach(struct mg_output *o, sd_event *e)
{
	o->event = e;
	for (size_t i = 0; o->task && e && i < o->ntasks; i++)
		for (int w = 0; o->task[i] && w < 2; w++)
			if (!o->task[i]->s[w].src)
				(void)watch(&o->task[i]->s[w]);
}

/* -k: prints, in order, every task whose turn has come. */
static void advance(struct mg_output *o)
{
	while (o->keep_order && o->next < o->ntasks) {
		size_t i = o->next;
		struct mg_output_task *t = o->task[i];
		if (o->state[i] == T_SKIPPED || o->state[i] == T_PRINTED) {
			o->next++;
			continue;
		}
		if (!t || (o->state[i] != T_DONE && o->mode != MG_OUTPUT_LINE))
			break;
		/* Its turn: what it holds now, and with --line-buffer the rest as it comes. */
		replay(&t->s[0]);
		replay(&t->s[1]);
		if (o->state[i] != T_DONE)
			break;
		o->state[i] = T_PRINTED;
		o->task[i] = NULL;
		free(t);
		o->next++;
	}
}

int mg_output_start(struct mg_output *o, size_t index, int *out, int *err)
{
	int *ends[2] = {out, err}, pipes[2][2] = {{-1, -1}, {-1, -1}};
	struct mg_output_task *t;

	if (o->mode == MG_OUTPUT_PASS)
		return 0;
	if (!(t = task_of(o, index)))
		return mg_log_errno(LOG_ERR, -ENOMEM, "task %zu's output: %m", index + 1);
	for (int w = 0; w < 2; w++)
		if (pipe2(pipes[w], O_CLOEXEC) < 0 || fcntl(pipes[w][0], F_SETFL, O_NONBLOCK) < 0) {
			int r = -errno;
			for (int k = 0; k < 2; k++)
				for (int e = 0; e < 2; e++)
					if (pipes[k][e] >= 0)
						close(pipes[k][e]);
			return mg_log_errno(LOG_ERR, r, "cannot make the pipes for task %zu's output: %m",
			                    index + 1);
		}
	for (int w = 0; w < 2; w++) {
		struct mg_output_stream *s = &t->s[w];
		release(s);
		s->fd = pipes[w][0];
		s->tee = *ends[w];
		s->line_start = true;
		*ends[w] = pipes[w][1];
		(void)watch(s);
	}
	o->state[index] = T_RUNNING;
	/* --line-buffer -k: a task whose turn it is prints as it runs. */
	advance(o);
	return 0;
}

void mg_output_feed(struct mg_output *o, size_t index, int which, const char *data, size_t len)
{
	struct mg_output_task *t = o->mode == MG_OUTPUT_PASS ? NULL : o->task[index];

	if (t && which >= 0 && which < 2)
		deliver(&t->s[which], data, len);
}

void mg_output_end(struct mg_output *o, size_t index, bool keep)
{
	struct mg_output_task *t = o->mode == MG_OUTPUT_PASS ? NULL : o->task[index];

	if (!t)
		return;
	/* What is still in the pipes: their writers are dead or dying. */
	for (int w = 0; w < 2; w++) {
		struct mg_output_stream *s = &t->s[w];
		for (int waited = 0; s->fd >= 0 && !drain(s) && waited < DRAIN_MSEC; waited += 10) {
			struct pollfd pfd = {.fd = s->fd, .events = POLLIN};
			(void)poll(&pfd, 1, 10);
		}
		close_stream(s);
		if (s->tee >= 0)
			close(s->tee);
		s->tee = -1;
	}
	if (!keep || o->halted) {
		/* A retry prints its own; what --line-buffer printed stays printed. */
		release(&t->s[0]);
		release(&t->s[1]);
		o->state[index] = o->halted ? T_PRINTED : T_IDLE;
		t->s[0].line_start = t->s[1].line_start = true;
		return;
	}
	/* A line --line-buffer held back ends with the task. */
	for (int w = 0; w < 2; w++)
		if (t->s[w].npartial && live(&t->s[w]))
			emit(&t->s[w], "", 0, false);
	o->state[index] = T_DONE;
	if (o->keep_order) {
		advance(o);
		return;
	}
	replay(&t->s[0]);
	replay(&t->s[1]);
	o->state[index] = T_PRINTED;
	o->task[index] = NULL;
	free(t);
}

void mg_output_skip(struct mg_output *o, size_t index)
{
	if (o->mode == MG_OUTPUT_PASS || index >= o->ntasks)
		return;
	o->state[index] = T_SKIPPED;
	advance(o);
}

void mg_output_halt(struct mg_output *o)
{
	o->halted = true;
	for (size_t i = 0; o->task && i < o->ntasks; i++)
		if (o->task[i]) {
			release(&o->task[i]->s[0]);
			release(&o->task[i]->s[1]);
		}
}

void mg_output_done(struct mg_output *o)
{
	for (size_t i = 0; o->task && i < o->ntasks; i++) {
		struct mg_output_task *t = o->task[i];
		if (!t)
			continue;
		/* -k: what waited behind a task that never ended. */
		if (o->state[i] == T_DONE && !o->halted) {
			replay(&t->s[0]);
			replay(&t->s[1]);
		}
		for (int w = 0; w < 2; w++) {
			close_stream(&t->s[w]);
			if (t->s[w].tee >= 0)
				close(t->s[w].tee);
			release(&t->s[w]);
		}
		free(t);
	}
	free(o->task);
	free(o->state);
	if (o->spool >= 0)
		close(o->spool);
	*o = (struct mg_output){.spool = -1};
}
