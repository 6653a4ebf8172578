/*
 * trace — the simulated step as a Chrome trace event file (JSON object format), which Perfetto
 * and chrome://tracing open: one process per run, one thread per engine stream (tasks without a
 * stream on a "host events" track), complete events ("X") in microseconds, counter events ("C")
 * for each memory pool (bytes, scaled to what the pool stands for) and each node's power.
 * Only the simulated micro-batches are in the trace; the steady ones the step extrapolates are
 * repeats of the second. Written to PATH.tmp, then renamed: no half-written file on failure.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../sim/engine.h"
#include "report.h"

static void name_event(FILE *fp, bool *first, const char *kind, int tid, const char *name)
{
	fprintf(fp, "%s{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"%s\",\"args\":{\"name\":\"%s\"}}",
		*first ? "" : ",\n", tid, kind, name);
	*first = false;
}

int rpt_sim_trace(const char *path, const struct rpt_sim *r, char *err, size_t errlen)
{
	const struct eng *e = r->e;
	char tmp[4096];
	bool first = true;

	if (snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
		snprintf(err, errlen, "--trace: path too long");
		return -1;
	}
	FILE *fp = fopen(tmp, "w");
	if (!fp) {
		snprintf(err, errlen, "--trace: cannot write %s: %s", tmp, strerror(errno));
		return -1;
	}
	int ns = eng_nstreams(e);
	fprintf(fp, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"tierplan %s\","
		    "\"model\":\"%s\",\"policy\":\"%s\",\"note\":\"simulated micro-batches only\"},"
		    "\"traceEvents\":[\n",
		TIERPLAN_VERSION, r->model_name, r->o->policy);
	name_event(fp, &first, "process_name", 0, "tierplan simulate");
	for (int s = 0; s < ns; s++)
		name_event(fp, &first, "thread_name", s, eng_stream_name(e, s));
	name_event(fp, &first, "thread_name", ns, "host events");
	for (int i = 0; i < eng_ntasks(e); i++) {
		const struct eng_task *t = eng_task_at(e, i);
		if (t->t_end == t->t_start && t->work == 0)
			continue;
		fprintf(fp, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"%s\",\"ts\":%.3f,"
			    "\"dur\":%.3f,\"args\":{\"work\":%.6g}}",
			t->stream >= 0 ? t->stream : ns, t->name, t->t_start / 1e3,
			(t->t_end - t->t_start) / 1e3, t->work);
	}
	for (int p = 0; p < eng_npools(e); p++) {
		const struct eng_pool *pl = eng_pool_at(e, p);
		for (uint32_t h = 0; h < pl->hist_n; h++)
			fprintf(fp, ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"%s bytes\",\"ts\":%.3f,"
				    "\"args\":{\"bytes\":%.0f}}",
				pl->name, pl->hist[h].t_ns / 1e3, pl->hist[h].value * pl->scale);
	}
	for (int n = 0; n < eng_nnodes(e); n++) {
		uint32_t count;
		const struct eng_sample *s = eng_power_history(e, n, &count);
		for (uint32_t h = 0; h < count; h++)
			fprintf(fp, ",\n{\"ph\":\"C\",\"pid\":1,\"name\":\"%s power W\",\"ts\":%.3f,"
				    "\"args\":{\"watts\":%.1f}}",
				eng_node_name(e, n), s[h].t_ns / 1e3, s[h].value);
	}
	fprintf(fp, "\n]}\n");
	if (fflush(fp) != 0 || ferror(fp)) {
		fclose(fp);
		remove(tmp);
		snprintf(err, errlen, "--trace: cannot write %s", tmp);
		return -1;
	}
	if (fclose(fp) != 0 || rename(tmp, path) != 0) {
		remove(tmp);
		snprintf(err, errlen, "--trace: cannot create %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
