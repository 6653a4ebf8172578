/*
 * cmd_sweep — `tierplan sweep --grid FILE`: many exact configurations through the simulator.
 *
 * The grid file is JSON: "base" holds simulate flags (without "--") every point shares, "grid"
 * holds the flags that vary, each a list of values; the points are the Cartesian product, the
 * last key varying fastest. Each point runs as `tierplan simulate` would, on all cores (one
 * engine per thread, in chunks so memory stays bounded), and becomes one output row in point
 * order: CSV (a header, then a row per point) or JSON lines. A point that is invalid (a layout a
 * policy cannot run, a bad value) gets a row with its error; the sweep goes on.
 * --shard I/N takes the I-th of N contiguous slices of the points, and only shard 1 prints the
 * CSV header, so the shards' outputs concatenated in order are the whole sweep's (Slurm job
 * arrays). Progress goes to stderr when stderr is a terminal.
 * Failure: exit 3 for a bad grid (naming the key), 4 for a system error.
 */
#include <cjson/cJSON.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../reports/report.h"
#include "../model/catalog.h"
#include "cli.h"
#include "../sim/engine.h"
#include "../model/file.h"
#include "../sim/opts.h"
#include "../sim/plan.h"

#define MAX_KEYS 24
#define CHUNK 256

struct axis {
	const char *key;
	int n;
	char **vals;
};

struct grid {
	cJSON *root;
	int nbase, naxes;
	const char *base_key[MAX_KEYS];
	char *base_val[MAX_KEYS];
	struct axis ax[MAX_KEYS];
	uint64_t points;
};

struct row {
	int rc;
	char err[256];
	struct sim_option o;
};

struct job {
	const struct grid *g;
	uint64_t first, count;
	struct row *rows;
	uint64_t next; /* atomic */
};

static void help(FILE *fp)
{
	fprintf(fp,
		"usage: tierplan sweep --grid FILE [--format csv|jsonl] [--shard I/N] [--threads N]\n\n"
		"Runs every point of a grid of simulate flags through the simulator, one row per\n"
		"point. FILE: {\"base\": {\"model\": \"70b\", \"seq\": 4096}, \"grid\": {\"gpus\": [1, 2, "
		"4, 8],\n\"policy\": [\"gpu\", \"tiered\"]}}; the last key varies fastest.\n\n"
		"options:\n"
		"  --grid FILE        the grid (required)\n"
		"  --format F         csv (default) or jsonl (one JSON object per line)\n"
		"  --shard I/N        the I-th of N contiguous slices of the points (1-based)\n"
		"  --threads N        worker threads (default: the online CPUs)\n");
}

/* A JSON scalar as a flag value. */
static char *value_str(const cJSON *v)
{
	char buf[64];
	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	if (cJSON_IsNumber(v)) {
		if (v->valuedouble == (double)(long long)v->valuedouble)
			snprintf(buf, sizeof buf, "%lld", (long long)v->valuedouble);
		else
			snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
		return strdup(buf);
	}
	return NULL;
}

static bool forbidden(const char *key)
{
	return !strcmp(key, "trace") || !strcmp(key, "format") || !strcmp(key, "help");
}

static int grid_load(const char *path, struct grid *g, char *err, size_t errlen)
{
	char *text = cfg_read_file(path, "grid", 1 << 22, err, errlen);
	if (!text)
		return -1;
	memset(g, 0, sizeof *g);
	g->root = cJSON_Parse(text);
	free(text);
	if (!g->root) {
		snprintf(err, errlen, "--grid %s: not valid JSON", path);
		return -1;
	}
	const cJSON *base = cJSON_GetObjectItemCaseSensitive(g->root, "base"), *it;
	const cJSON *grid = cJSON_GetObjectItemCaseSensitive(g->root, "grid");
	if ((base && !cJSON_IsObject(base)) || !cJSON_IsObject(grid)) {
		snprintf(err, errlen, "--grid %s: expected {\"base\": {...}, \"grid\": {\"flag\": "
				      "[values], ...}}",
			 path);
		return -1;
	}
	cJSON_ArrayForEach(it, base)
	{
		if (g->nbase == MAX_KEYS || forbidden(it->string) || !(g->base_val[g->nbase] =
									 value_str(it))) {
			snprintf(err, errlen, "--grid %s: base '%s' must be a string or number (and not "
					      "trace, format or help; at most %d keys)",
				 path, it->string, MAX_KEYS);
			return -1;
		}
		g->base_key[g->nbase++] = it->string;
	}
	g->points = 1;
	cJSON_ArrayForEach(it, grid)
	{
		struct axis *a = &g->ax[g->naxes];
		int n = cJSON_GetArraySize(it);
		if (g->naxes == MAX_KEYS || !cJSON_IsArray(it) || n < 1 || forbidden(it->string) ||
		    !strcmp(it->string, "prices")) {
			snprintf(err, errlen, "--grid %s: grid '%s' must be a non-empty list (and not "
					      "trace, format, help or prices; at most %d keys)",
				 path, it->string, MAX_KEYS);
			return -1;
		}
		a->key = it->string;
		a->vals = calloc((size_t)n, sizeof *a->vals);
		if (!a->vals) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		g->naxes++;
		const cJSON *v;
		cJSON_ArrayForEach(v, it)
		{
			if (!(a->vals[a->n] = value_str(v))) {
				snprintf(err, errlen, "--grid %s: grid '%s' value %d must be a string or "
						      "number",
					 path, a->key, a->n + 1);
				return -1;
			}
			a->n++;
		}
		if (g->points > UINT64_MAX / (uint64_t)n) {
			snprintf(err, errlen, "--grid %s: too many points", path);
			return -1;
		}
		g->points *= (uint64_t)n;
	}
	return 0;
}

static void grid_free(struct grid *g)
{
	for (int i = 0; i < g->nbase; i++)
		free(g->base_val[i]);
	for (int i = 0; i < g->naxes; i++) {
		for (int k = 0; k < g->ax[i].n; k++)
			free(g->ax[i].vals[k]);
		free(g->ax[i].vals);
	}
	cJSON_Delete(g->root);
}

/* The value index of each axis for point p (last axis fastest). */
static void coords(const struct grid *g, uint64_t p, int *idx)
{
	for (int i = g->naxes - 1; i >= 0; i--) {
		idx[i] = (int)(p % (uint64_t)g->ax[i].n);
		p /= (uint64_t)g->ax[i].n;
	}
}

static void run_point(const struct grid *g, uint64_t p, struct eng *e, struct row *r)
{
	char *argv[2 + 4 * MAX_KEYS + 1], flags[2 * MAX_KEYS][48];
	int argc = 2, idx[MAX_KEYS], nf = 0;

	argv[0] = "tierplan";
	argv[1] = "simulate";
	coords(g, p, idx);
	for (int i = 0; i < g->nbase; i++) {
		snprintf(flags[nf], sizeof flags[0], "--%s", g->base_key[i]);
		argv[argc++] = flags[nf++];
		argv[argc++] = g->base_val[i];
	}
	for (int i = 0; i < g->naxes; i++) {
		snprintf(flags[nf], sizeof flags[0], "--%s", g->ax[i].key);
		argv[argc++] = flags[nf++];
		argv[argc++] = g->ax[i].vals[idx[i]];
	}
	argv[argc] = NULL;
	r->rc = tp_simulate_argv(argc, argv, e, &r->o, NULL, NULL, r->err, sizeof r->err);
}

static void *worker(void *arg)
{
	struct job *j = arg;
	struct eng *e = eng_new();
	if (e)
		eng_keep_history(e, false); /* rows report peaks only */
	for (;;) {
		uint64_t i = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (i >= j->count)
			break;
		if (!e) {
			j->rows[i].rc = EXIT_SYSTEM;
			snprintf(j->rows[i].err, sizeof j->rows[i].err, "out of memory");
			continue;
		}
		run_point(j->g, j->first + i, e, &j->rows[i]);
	}
	eng_free(e);
	return NULL;
}

static void csv_field(FILE *fp, const char *s)
{
	bool quote = strpbrk(s, ",\"\n") != NULL;
	if (!quote) {
		fputs(s, fp);
		return;
	}
	fputc('"', fp);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', fp);
		fputc(*s, fp);
	}
	fputc('"', fp);
}

static const char *const result_cols =
	"fits,error,policy,gpus,tp,pp,dp,zero,micro_batch,grad_accum,recompute,step_seconds,"
	"tokens_per_second,model_tflops_per_gpu,peak_gpu_bytes,peak_dram_bytes,peak_flash_bytes,"
	"peak_power_watts,energy_joules_per_step,flash_bytes_written_per_step,runtime_seconds,"
	"cost_total_usd,cost_cloud_usd,overflow";

static void emit_csv(FILE *fp, const struct grid *g, uint64_t p, const struct row *r)
{
	int idx[MAX_KEYS];
	const struct sim_option *o = &r->o;
	coords(g, p, idx);
	fprintf(fp, "%llu", (unsigned long long)p);
	for (int i = 0; i < g->naxes; i++) {
		fputc(',', fp);
		csv_field(fp, g->ax[i].vals[idx[i]]);
	}
	if (r->rc) {
		fprintf(fp, ",false,");
		csv_field(fp, r->err);
		fprintf(fp, ",,,,,,,,,,,,,,,,,,,,,,\n");
		return;
	}
	fprintf(fp, ",%s,,%s,%u,%u,%u,%u,%u,%llu,%llu,%s,%.6g,%.6g,%.6g,%.0f,%.0f,%.0f,%.6g,%.6g,"
		    "%.6g,%.6g,%.6g,%.6g,",
		o->fits ? "true" : "false", o->policy, o->gpus, o->layout.tp, o->layout.pp,
		o->layout.dp, o->layout.zero, (unsigned long long)o->micro_batch,
		(unsigned long long)o->grad_accum, mdl_recompute_name(o->recompute), o->step_seconds,
		o->tokens_per_second, o->model_tflops_per_gpu, o->peak_gpu, o->peak_dram,
		o->peak_flash, o->peak_power_watts, o->energy_joules_per_step,
		o->flash_bytes_written_per_step, o->runtime_seconds, o->cost_total, o->cost_cloud);
	csv_field(fp, o->fits ? "" : o->overflow);
	fputc('\n', fp);
}

static void emit_jsonl(FILE *fp, const struct grid *g, uint64_t p, const struct row *r)
{
	int idx[MAX_KEYS];
	const struct sim_option *o = &r->o;
	cJSON *j = cJSON_CreateObject(), *pt = cJSON_AddObjectToObject(j, "point");
	coords(g, p, idx);
	cJSON_AddNumberToObject(j, "index", (double)p);
	for (int i = 0; i < g->naxes; i++)
		cJSON_AddStringToObject(pt, g->ax[i].key, g->ax[i].vals[idx[i]]);
	if (r->rc) {
		cJSON_AddStringToObject(j, "error", r->err);
	} else {
		cJSON *pk;
		cJSON_AddBoolToObject(j, "fits", o->fits);
		cJSON_AddStringToObject(j, "policy", o->policy);
		cJSON_AddNumberToObject(j, "gpus", o->gpus);
		cJSON_AddNumberToObject(j, "tp", o->layout.tp);
		cJSON_AddNumberToObject(j, "pp", o->layout.pp);
		cJSON_AddNumberToObject(j, "dp", o->layout.dp);
		cJSON_AddNumberToObject(j, "zero", o->layout.zero);
		cJSON_AddNumberToObject(j, "micro_batch", (double)o->micro_batch);
		cJSON_AddNumberToObject(j, "grad_accum", (double)o->grad_accum);
		cJSON_AddStringToObject(j, "recompute", mdl_recompute_name(o->recompute));
		cJSON_AddNumberToObject(j, "step_seconds", o->step_seconds);
		cJSON_AddNumberToObject(j, "tokens_per_second", o->tokens_per_second);
		cJSON_AddNumberToObject(j, "model_tflops_per_gpu", o->model_tflops_per_gpu);
		pk = cJSON_AddObjectToObject(j, "peak_bytes");
		cJSON_AddNumberToObject(pk, "gpu", o->peak_gpu);
		cJSON_AddNumberToObject(pk, "dram", o->peak_dram);
		cJSON_AddNumberToObject(pk, "flash", o->peak_flash);
		cJSON_AddNumberToObject(j, "peak_power_watts", o->peak_power_watts);
		cJSON_AddNumberToObject(j, "energy_joules_per_step", o->energy_joules_per_step);
		cJSON_AddNumberToObject(j, "flash_bytes_written_per_step",
					o->flash_bytes_written_per_step);
		cJSON_AddNumberToObject(j, "runtime_seconds", o->runtime_seconds);
		cJSON_AddNumberToObject(j, "cost_total_usd", o->cost_total);
		cJSON_AddNumberToObject(j, "cost_cloud_usd", o->cost_cloud);
		if (!o->fits)
			cJSON_AddStringToObject(j, "overflow", o->overflow);
	}
	char *s = cJSON_PrintUnformatted(j);
	if (s)
		fprintf(fp, "%s\n", s);
	free(s);
	cJSON_Delete(j);
}

int cmd_sweep(int argc, char **argv)
{
	const char *gridpath = NULL, *format = "csv";
	long shard = 1, nshards = 1, threads = sysconf(_SC_NPROCESSORS_ONLN);
	struct grid g;
	char err[512];
	int rc = EXIT_OK;

	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			help(stdout);
			return EXIT_OK;
		}
		if (i + 1 >= argc) {
			snprintf(err, sizeof err, "%s: unknown option or missing value", a);
			return cli_fail(EXIT_USAGE, "sweep", err);
		}
		const char *v = argv[++i];
		char *end;
		if (!strcmp(a, "--grid")) {
			gridpath = v;
		} else if (!strcmp(a, "--format")) {
			format = v;
		} else if (!strcmp(a, "--shard")) {
			shard = strtol(v, &end, 10);
			if (*end != '/' || (nshards = strtol(end + 1, &end, 10)) < 1 || *end ||
			    shard < 1 || shard > nshards)
				return cli_fail(EXIT_INVALID, "sweep",
						"--shard: expected I/N with 1 <= I <= N, e.g. 2/8");
		} else if (!strcmp(a, "--threads")) {
			threads = strtol(v, &end, 10);
			if (*end || threads < 1 || threads > 1024)
				return cli_fail(EXIT_INVALID, "sweep", "--threads: 1 to 1024");
		} else {
			snprintf(err, sizeof err, "unknown option '%s'", a);
			return cli_fail(EXIT_USAGE, "sweep", err);
		}
	}
	if (!gridpath)
		return cli_fail(EXIT_USAGE, "sweep", "--grid FILE is required");
	if (strcmp(format, "csv") && strcmp(format, "jsonl"))
		return cli_fail(EXIT_INVALID, "sweep", "--format: unknown format (allowed: csv, jsonl)");
	if (grid_load(gridpath, &g, err, sizeof err)) {
		grid_free(&g);
		return cli_fail(EXIT_INVALID, "sweep", err);
	}
	for (int i = 0; i < g.nbase; i++)
		if (!strcmp(g.base_key[i], "prices"))
			cfg_set_prices(g.base_val[i]); /* once, before the threads */
	(void)cfg_dir();

	uint64_t per = g.points / (uint64_t)nshards, extra = g.points % (uint64_t)nshards;
	uint64_t first = (uint64_t)(shard - 1) * per + ((uint64_t)(shard - 1) < extra
								 ? (uint64_t)(shard - 1)
								 : extra);
	uint64_t count = per + ((uint64_t)(shard - 1) < extra ? 1 : 0);
	bool csv = !strcmp(format, "csv"), tty = isatty(2);
	if (csv && shard == 1) {
		fprintf(stdout, "index");
		for (int i = 0; i < g.naxes; i++)
			fprintf(stdout, ",point.%s", g.ax[i].key);
		fprintf(stdout, ",%s\n", result_cols);
	}
	size_t chunk = (size_t)CHUNK * (size_t)threads;
	struct row *rows = calloc(chunk, sizeof *rows);
	pthread_t *tid = calloc((size_t)threads, sizeof *tid);
	if (!rows || !tid) {
		rc = cli_fail(EXIT_SYSTEM, "sweep", "out of memory");
		goto out;
	}
	for (uint64_t done = 0; done < count;) {
		struct job j = {&g, first + done, count - done < chunk ? count - done : chunk, rows,
				0};
		long started = 0;
		for (long t = 0; t < threads && (uint64_t)t < j.count; t++)
			if (pthread_create(&tid[t], NULL, worker, &j) == 0)
				started++;
		if (started == 0)
			worker(&j);
		for (long t = 0; t < started; t++)
			pthread_join(tid[t], NULL);
		for (uint64_t i = 0; i < j.count; i++) {
			if (csv)
				emit_csv(stdout, &g, j.first + i, &rows[i]);
			else
				emit_jsonl(stdout, &g, j.first + i, &rows[i]);
		}
		done += j.count;
		if (tty)
			fprintf(stderr, "\rsweep: %llu / %llu points", (unsigned long long)done,
				(unsigned long long)count);
	}
	if (tty)
		fprintf(stderr, "\n");
	if (fflush(stdout) != 0 || ferror(stdout))
		rc = cli_fail(EXIT_SYSTEM, "sweep", "cannot write to standard output");
out:
	free(rows);
	free(tid);
	grid_free(&g);
	return rc;
}
