/*
 * runlog — `tierplan validate --run LOG`: a user's own training run becomes a recorded case.
 *
 * The log is read for what the frameworks print (their source is the format's reference):
 * - Megatron-LM (training.py training_log): "elapsed time per iteration (ms): X" per logged
 *   interval, and report_memory's "memory (MB) | ... | max allocated: X" (MB = 2^20 bytes);
 * - DeepSpeed (utils/timer.py ThroughputTimer): "RunningAvgSamplesPerSec=X" and
 *   "MaxMemAllocated=YGB" (GB = 2^30 bytes, get_accelerator().max_memory_allocated() / 1024**3);
 * - Hugging Face Trainer: the final "'train_steps_per_second': X" (over the whole run);
 * - torchtune (training/_distributed.py log_memory_stats and the recipes' metric logger):
 *   "tokens_per_second_per_gpu:X" and "peak_memory_alloc:Y" (GiB).
 * Step times take the median of the logged intervals after the first (warm-up); memory the
 * largest report, compared with the simulator's max_memory_allocated figure (all three print
 * PyTorch's allocated peak). An nvidia-smi CSV (--query-gpu=memory.used --format=csv) gives the
 * largest memory.used instead, which counts the CUDA context and the allocator's cache as the
 * simulator's GPU peak does. The case keeps the simulate flags the user gives after "--", is
 * predicted once to check them, and is written (merged by id) into a trace file of category
 * user_runs that `tierplan validate --traces DIR` replays.
 * Failure: a log with nothing recognised, flags simulate refuses, or an unwritable file: the
 * exit code with one line naming the file.
 */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/file.h"
#include "../sim/engine.h"
#include "../sim/opts.h"
#include "../sim/sim.h"
#include "validate.h"

#define LOG_MAX_BYTES (256u << 20) /* a long run's log; a larger one is refused, naming it */
#define MAX_SAMPLES 4096

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The number after the first occurrence of key in line; NAN when absent. */
static double after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	char *end;
	if (!p)
		return NAN;
	double v = strtod(p + strlen(key), &end);
	return end == p + strlen(key) ? NAN : v;
}

struct measured {
	double step_seconds;  /* NAN when the log had none */
	double samples_per_s; /* DeepSpeed: per step = global batch / this */
	double tokens_per_gpu;
	double peak_bytes;
	char how[256];
};

static void parse_log(char *text, struct measured *m)
{
	double *steps = malloc(MAX_SAMPLES * sizeof *steps);
	int n = 0;

	m->step_seconds = m->samples_per_s = m->tokens_per_gpu = m->peak_bytes = NAN;
	m->how[0] = '\0';
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		double v;
		if (!isnan(v = after(line, "elapsed time per iteration (ms):")) && steps &&
		    n < MAX_SAMPLES)
			steps[n++] = v / 1000.0;
		if (!isnan(v = after(line, "max allocated:")) && strstr(line, "memory (MB)"))
			m->peak_bytes = fmax(isnan(m->peak_bytes) ? 0 : m->peak_bytes, v * 1048576.0);
		if (!isnan(v = after(line, "RunningAvgSamplesPerSec=")))
			m->samples_per_s = v;
		if (!isnan(v = after(line, "MaxMemAllocated=")))
			m->peak_bytes =
				fmax(isnan(m->peak_bytes) ? 0 : m->peak_bytes, v * 1073741824.0);
		if (!isnan(v = after(line, "'train_steps_per_second': ")) && v > 0)
			m->step_seconds = 1.0 / v;
		if (!isnan(v = after(line, "tokens_per_second_per_gpu:")))
			m->tokens_per_gpu = v;
		if (!isnan(v = after(line, "peak_memory_alloc:")))
			m->peak_bytes =
				fmax(isnan(m->peak_bytes) ? 0 : m->peak_bytes, v * 1073741824.0);
	}
	if (n > 0) { /* Megatron: the median interval after the first */
		int first = n > 1 ? 1 : 0;
		qsort(steps + first, (size_t)(n - first), sizeof *steps, by_value);
		m->step_seconds = steps[first + (n - first) / 2];
		snprintf(m->how, sizeof m->how, "Megatron-LM: median of %d logged iterations",
			 n - first);
	} else if (!isnan(m->samples_per_s)) {
		snprintf(m->how, sizeof m->how, "DeepSpeed: RunningAvgSamplesPerSec %.4g",
			 m->samples_per_s);
	} else if (!isnan(m->step_seconds)) {
		snprintf(m->how, sizeof m->how, "Hugging Face Trainer: train_steps_per_second "
						"over the whole run");
	} else if (!isnan(m->tokens_per_gpu)) {
		snprintf(m->how, sizeof m->how, "torchtune: tokens_per_second_per_gpu");
	}
	free(steps);
}

/* The largest memory.used of an nvidia-smi CSV, bytes; NAN when none. */
static double smi_peak(char *text)
{
	double peak = NAN;
	int col = -1;

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *save, *f;
		int c = 0;
		if (col < 0) {
			for (f = strtok_r(line, ",", &save); f; f = strtok_r(NULL, ",", &save), c++)
				if (strstr(f, "memory.used"))
					col = c;
			continue;
		}
		for (f = strtok_r(line, ",", &save); f && c < col; f = strtok_r(NULL, ",", &save))
			c++;
		double v = f ? strtod(f, NULL) : NAN;
		if (f && v > 0)
			peak = fmax(isnan(peak) ? 0 : peak, v * 1048576.0); /* MiB */
	}
	return peak;
}

/* One case object of the trace format. */
static cJSON *make_case(const char *id, const char *src, const char *quantity, double value,
			const char *unit, const cJSON *flags)
{
	cJSON *c = cJSON_CreateObject(), *m;
	cJSON_AddStringToObject(c, "id", id);
	cJSON_AddStringToObject(c, "confidence", "A");
	cJSON_AddStringToObject(c, "source", src);
	cJSON_AddStringToObject(c, "quantity", quantity);
	m = cJSON_AddObjectToObject(c, "measured");
	cJSON_AddNumberToObject(m, "value", value);
	cJSON_AddStringToObject(m, "unit", unit);
	cJSON_AddItemToObject(c, "flags", cJSON_Duplicate(flags, 1));
	return c;
}

/* Adds c to cases, replacing a case of the same id. */
static void merge(cJSON *cases, cJSON *c)
{
	const char *id = cJSON_GetObjectItemCaseSensitive(c, "id")->valuestring;
	int i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, cases)
	{
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(it, "id");
		if (cJSON_IsString(x) && strcmp(x->valuestring, id) == 0) {
			cJSON_ReplaceItemInArray(cases, i, c);
			return;
		}
		i++;
	}
	cJSON_AddItemToArray(cases, c);
}

int val_record_run(const struct val_run_opts *ro, FILE *out, char *err, size_t errlen)
{
	struct measured m;
	char *text = cfg_read_file(ro->log, "--run", LOG_MAX_BYTES, err, errlen);
	int rc = EXIT_INVALID;
	cJSON *flags = NULL, *root = NULL;
	struct eng *e = NULL;

	if (!text)
		return EXIT_INVALID;
	parse_log(text, &m);
	free(text);
	if (ro->smi) {
		char *csv = cfg_read_file(ro->smi, "--smi", LOG_MAX_BYTES, err, errlen);
		if (!csv)
			return EXIT_INVALID;
		double p = smi_peak(csv);
		free(csv);
		if (isnan(p))
			return snprintf(err, errlen, "--smi '%.300s': no memory.used column with values",
					ro->smi),
			       EXIT_INVALID;
		m.peak_bytes = p;
	}
	if (isnan(m.step_seconds) && isnan(m.samples_per_s) && isnan(m.tokens_per_gpu) &&
	    isnan(m.peak_bytes))
		return snprintf(err, errlen,
				"--run '%.300s': no step time, throughput or memory line of "
				"Megatron-LM, DeepSpeed, the Hugging Face Trainer or torchtune",
				ro->log),
		       EXIT_INVALID;
	/* the flags as a JSON object, checked by predicting the run once */
	flags = cJSON_CreateObject();
	for (int i = 0; i < ro->nflags; i++) {
		const char *k = ro->flags[i];
		if (strncmp(k, "--", 2) != 0 || i + 1 >= ro->nflags) {
			snprintf(err, errlen, "after --: simulate flags come as --flag value pairs, "
					      "got '%.60s'",
				 k);
			goto out;
		}
		/* files by absolute path: the trace is replayed from wherever it is kept */
		const char *v = ro->flags[++i];
		char abs[4096 + 16]; /* a path, and --flash's :COUNT after it */
		if (tp_input_file_abs(k + 2, v, abs, sizeof abs) == 0)
			v = abs;
		cJSON_AddStringToObject(flags, k + 2, v);
	}
	struct sim_option o;
	struct mdl_hw hw;
	e = eng_new();
	if (!e || !flags) {
		snprintf(err, errlen, "out of memory");
		rc = EXIT_SYSTEM;
		goto out;
	}
	if ((rc = tp_simulate_json(flags, e, &o, NULL, &hw, err, errlen)))
		goto out;
	/* the node --host auto took is written down: the run stays on the machine it ran on
	 * when the GPU's usual node changes */
	if (hw.host_auto) {
		cJSON_DeleteItemFromObjectCaseSensitive(flags, "host");
		cJSON_AddStringToObject(flags, "host", hw.host.name);
	}
	if (isnan(m.step_seconds) && !isnan(m.samples_per_s))
		m.step_seconds = (double)o.sequences_per_step / m.samples_per_s;

	/* the trace file: an existing one of user runs gains or replaces these cases */
	char src[512];
	snprintf(src, sizeof src, "run log %s (%s)", ro->log, m.how[0] ? m.how : "memory only");
	char *old = NULL;
	FILE *probe = fopen(ro->out, "r");
	if (probe) {
		fclose(probe);
		if (!(old = cfg_read_file(ro->out, "--out", 16u << 20, err, errlen)))
			goto out;
		root = cJSON_Parse(old);
		free(old);
		const cJSON *cat = cJSON_GetObjectItemCaseSensitive(root, "category");
		if (!cJSON_IsString(cat) || strcmp(cat->valuestring, "user_runs") != 0 ||
		    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "cases"))) {
			snprintf(err, errlen, "--out '%.300s' exists and is not a trace file of user "
					      "runs: not overwritten",
				 ro->out);
			rc = EXIT_INVALID;
			goto out;
		}
	} else {
		root = cJSON_CreateObject();
		cJSON_AddStringToObject(root, "_comment",
					"Your own training runs, recorded by tierplan validate --run; "
					"replay them with tierplan validate --traces DIR.");
		cJSON_AddStringToObject(root, "category", "user_runs");
		cJSON_AddItemToObject(root, "cases", cJSON_CreateArray());
	}
	cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
	char id[300];
	int added = 0;
	if (!isnan(m.step_seconds)) {
		snprintf(id, sizeof id, "%s step", ro->id);
		merge(cases, make_case(id, src, "step_seconds", m.step_seconds, "s", flags));
		fprintf(out, "  %-40s measured %10.4g s      predicted %10.4g s  %+6.1f %%\n", id,
			m.step_seconds, o.step_seconds,
			100.0 * (o.step_seconds - m.step_seconds) / m.step_seconds);
		added++;
	} else if (!isnan(m.tokens_per_gpu)) {
		double p = o.tokens_per_second / o.gpus;
		snprintf(id, sizeof id, "%s throughput", ro->id);
		merge(cases, make_case(id, src, "tokens_per_second_per_gpu", m.tokens_per_gpu,
				       "tokens/s", flags));
		fprintf(out, "  %-40s measured %10.4g tok/s  predicted %10.4g tok/s %+6.1f %%\n", id,
			m.tokens_per_gpu, p, 100.0 * (p - m.tokens_per_gpu) / m.tokens_per_gpu);
		added++;
	}
	if (!isnan(m.peak_bytes)) {
		/* nvidia-smi sees the device (CUDA context included); the logs print PyTorch's
		 * max allocated, which does not */
		double p = ro->smi ? o.peak_gpu : o.peak_gpu_allocated;
		snprintf(id, sizeof id, "%s memory", ro->id);
		merge(cases, make_case(id, ro->smi ? "nvidia-smi memory.used" : src,
				       ro->smi ? "peak_gpu_bytes" : "peak_gpu_allocated_bytes",
				       m.peak_bytes / 1073741824.0, "GiB", flags));
		fprintf(out, "  %-40s measured %10.4g GiB    predicted %10.4g GiB  %+6.1f %%\n", id,
			m.peak_bytes / 1073741824.0, p / 1073741824.0,
			100.0 * (p - m.peak_bytes) / m.peak_bytes);
		added++;
	}
	char *json = cJSON_Print(root);
	struct cfg_out f;
	if (!json) {
		snprintf(err, errlen, "out of memory");
		rc = EXIT_SYSTEM;
		goto out;
	}
	rc = cfg_out_open(&f, ro->out, "--out", err, errlen);
	if (rc == 0) {
		fprintf(f.fp, "%s\n", json);
		rc = cfg_out_close(&f, "--out", err, errlen);
	}
	free(json);
	if (rc) {
		rc = rc == CFG_OUT_REFUSED ? EXIT_INVALID : EXIT_SYSTEM;
		goto out;
	}
	fprintf(out, "recorded %d case%s in %s (%s); replay with tierplan validate --traces DIR\n",
		added, added == 1 ? "" : "s", ro->out, m.how[0] ? m.how : "memory");
	rc = EXIT_OK;
out:
	cJSON_Delete(flags);
	cJSON_Delete(root);
	if (e)
		eng_free(e);
	return rc;
}
