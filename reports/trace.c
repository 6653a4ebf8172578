/*
 * trace — the simulated step as a Chrome trace event file (JSON object format), which Perfetto
 * and chrome://tracing open: one process per run, one thread per engine stream (tasks without a
 * stream on a "host events" track), complete events ("X") in microseconds, counter events ("C")
 * for each memory pool (bytes, scaled to what the pool stands for) and each node's power.
 * Only the simulated micro-batches are in the trace; the steady ones the step extrapolates are
 * repeats of the second. Written through cfg_out (model/file.h): a file through a unique
 * temporary renamed on success, a device or FIFO in place, "-" to stdout; names are JSON-escaped.
 */
#include <stdio.h>
#include <string.h>

#include "../sim/engine.h"
#include "report.h"

void rpt_json_string(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(fp, "\\%c", c);
		else if (c < 0x20)
			fprintf(fp, "\\u%04x", c);
		else
			fputc(c, fp);
	}
	fputc('"', fp);
}

static void name_event(FILE *fp, bool *first, const char *kind, int tid, const char *name)
{
	fprintf(fp, "%s{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"%s\",\"args\":{\"name\":",
		*first ? "" : ",\n", tid, kind);
	rpt_json_string(fp, name);
	fputs("}}", fp);
	*first = false;
}

int rpt_sim_trace(const char *path, const struct rpt_sim *r, char *err, size_t errlen)
{
	const struct eng *e = r->e;
	struct cfg_out out;
	bool first = true;

	int rc = cfg_out_open(&out, path, "--trace", err, errlen);
	if (rc)
		return rc;
	FILE *fp = out.fp;
	int ns = eng_nstreams(e);
	fprintf(fp, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"tool\":\"tierplan %s\",\"model\":",
		TIERPLAN_VERSION);
	rpt_json_string(fp, r->model_name);
	fputs(",\"policy\":", fp);
	rpt_json_string(fp, r->o->policy);
	fprintf(fp, ",\"micro_batches_per_step\":%llu,\"micro_batches_simulated\":%llu,"
		    "\"step_seconds\":%.6g,\"note\":\"the timeline holds the simulated micro-batches; "
		    "the marker at its end says what the rest of the step repeats\"},"
		    "\"traceEvents\":[\n",
		(unsigned long long)r->o->grad_accum, (unsigned long long)r->o->micro_simulated,
		r->o->step_seconds);
	name_event(fp, &first, "process_name", 0, "tierplan simulate");
	for (int s = 0; s < ns; s++)
		name_event(fp, &first, "thread_name", s, eng_stream_name(e, s));
	name_event(fp, &first, "thread_name", ns, "host events");
	double last = 0;
	for (int i = 0; i < eng_ntasks(e); i++) {
		const struct eng_task *t = eng_task_at(e, i);
		if (t->t_end == t->t_start && t->work == 0)
			continue;
		fprintf(fp, ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":",
			t->stream >= 0 ? t->stream : ns);
		rpt_json_string(fp, t->name);
		fprintf(fp, ",\"ts\":%.3f,\"dur\":%.3f,\"args\":{\"work\":%.6g,\"unit\":",
			t->t_start / 1e3, (t->t_end - t->t_start) / 1e3, t->work);
		rpt_json_string(fp, t->nres ? eng_resource_at(e, t->res[0])->unit : "");
		fputs("}}", fp);
		if (t->t_end > last)
			last = t->t_end;
	}
	if (r->o->grad_accum > r->o->micro_simulated) {
		/* the step's remainder is the steady period repeated: say so on the timeline */
		char msg[200];
		snprintf(msg, sizeof msg,
			 "%llu more micro-batches repeat the steady period: the step ends at %.3f s",
			 (unsigned long long)(r->o->grad_accum - r->o->micro_simulated),
			 r->o->step_seconds);
		fprintf(fp, ",\n{\"ph\":\"i\",\"s\":\"g\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"name\":",
			ns, last / 1e3);
		rpt_json_string(fp, msg);
		fputs("}", fp);
	}
	for (int p = 0; p < eng_npools(e); p++) {
		const struct eng_pool *pl = eng_pool_at(e, p);
		char name[256];
		snprintf(name, sizeof name, "%s bytes", pl->name);
		for (uint32_t h = 0; h < pl->hist_n; h++) {
			fputs(",\n{\"ph\":\"C\",\"pid\":1,\"name\":", fp);
			rpt_json_string(fp, name);
			fprintf(fp, ",\"ts\":%.3f,\"args\":{\"bytes\":%.0f}}", pl->hist[h].t_ns / 1e3,
				pl->hist[h].value * pl->scale);
		}
	}
	for (int n = 0; n < eng_nnodes(e); n++) {
		uint32_t count;
		const struct eng_sample *s = eng_power_history(e, n, &count);
		char name[256];
		snprintf(name, sizeof name, "%s power W", eng_node_name(e, n));
		for (uint32_t h = 0; h < count; h++) {
			fputs(",\n{\"ph\":\"C\",\"pid\":1,\"name\":", fp);
			rpt_json_string(fp, name);
			fprintf(fp, ",\"ts\":%.3f,\"args\":{\"watts\":%.1f}}", s[h].t_ns / 1e3,
				s[h].value);
		}
	}
	fprintf(fp, "\n]}\n");
	return cfg_out_close(&out, "--trace", err, errlen);
}
