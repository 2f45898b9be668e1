/* libFuzzer target: joblogs read back for --resume (mg_joblog_parse), and
 * the resume plan from what it parsed (mg_resume_decide). */
#include <errno.h>

#include "farm/joblog.h"
#include "fuzz.h"

#define NTASKS 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size), *copy;
	struct mg_joblog_entry *e = NULL;
	size_t n = 0;
	char err[512] = "";
	static char *commands[NTASKS] = {"a", "b", "c", "d", "e", "f", "g", "h"};
	struct mg_resume_plan plan[NTASKS];
	int r;

	if (!text)
		return 0;
	if (!(copy = strdup(text))) {
		free(text);
		return 0;
	}
	r = mg_joblog_parse(text, "j", &e, &n, err, sizeof(err));
	check(r == 0 || r == -EBADMSG || r == -ENOMEM, "mg_joblog_parse errors", copy);
	check(r != -EBADMSG || strncmp(err, "joblog j: line ", 15) == 0, "a bad joblog names its line", copy);
	for (size_t i = 0; r == 0 && i < n; i++) {
		check(e[i].seq >= 1 && e[i].attempt >= 1, "Seq and Attempt from 1", copy);
		check(e[i].lineno >= 2, "entries come after the header", copy);
		check(!strchr(e[i].outcome, ' ') && *e[i].outcome, "Outcome is one word", copy);
		check(!strchr(e[i].command, '\n'), "Command is one line", copy);
		check(e[i].command >= text && e[i].command < text + size, "Command points into the text",
		      copy);
	}
	if (r == 0) {
		struct mg_resume_input in = {.mode = n % 2 ? MG_RESUME : MG_RESUME_FAILED,
		                             .commands = commands,
		                             .ntasks = NTASKS,
		                             .entries = e,
		                             .nentries = n,
		                             .retries = 2,
		                             .budget = 1u << 30,
		                             .page_size = 4096};
		r = mg_resume_decide(&in, plan, err, sizeof(err));
		check(r == 0 || r == -EBADMSG || r == -ENOMEM, "mg_resume_decide errors", copy);
		for (size_t i = 0; r == 0 && i < NTASKS; i++) {
			check(plan[i].attempt >= 1, "an attempt from 1", copy);
			check(plan[i].share <= in.budget, "a retry's share within the budget", copy);
			check(!plan[i].run || plan[i].attempt == plan[i].prior + 1,
			      "a run follows its last attempt", copy);
		}
	}
	free(e);
	free(text);
	free(copy);
	return 0;
}
