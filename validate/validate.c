/*
 * validate — `tierplan validate`: every recorded measurement replayed through the code users
 * run, predicted against measured, per category.
 *
 * Recorded cases live in JSON files under traces/published (and traces/calibration for local runs): each
 * has an id, a confidence tag (A primary ... D derived), its source, the measured value with its
 * unit, the quantity predicted, and the simulate flags that describe the setting. A case runs as
 * `tierplan simulate` with those flags; the quantity is read from the result (parameter counts,
 * peak bytes per tier, step time, throughput, hardware TFLOPS, drive-array bandwidth).
 * Only A and B cases count towards a category's mean absolute percentage error and its bias
 * (the mean signed error, positive where the predictions favour the user: case_sense); C and D
 * cases are shown for context. A category whose MAPE exceeds its threshold in
 * validate/thresholds.json (the accuracy we have, plus a margin: a regression guard, not a
 * target) fails: exit 1. Within a category the same figures are tallied per source, the first
 * word of the case ids (the framework, benchmark or system a run comes from), so a weak source
 * shows under a category that passes.
 * --report DIR draws predicted against measured per category with gnuplot.
 * Failure: exit 3 for an unreadable or malformed trace (naming the file and case), 4 for I/O.
 */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../reports/report.h"
#include "../model/catalog.h"
#include "../sim/engine.h"
#include "../model/file.h"
#include "../sim/opts.h"
#include "calibrate.h"
#include "validate.h"

/* recorded cases at most, all files together (a bound on the table, ~0.7 kB a case on the heap) */
#define MAX_CASES 1024
#define MAX_CATS 12
#define MAX_SOURCES 32 /* sources tallied apart per category; later ones are not tallied */

struct vcase {
	char id[128], category[32], unit[16], source[256], confidence[4], quantity[40];
	double measured, predicted, error; /* measured and predicted in SI units */
	bool used, failed;
	bool nofit; /* predicted not to fit where the measured run ran: counts as 100 % wrong */
	char err[256];
};

struct vcat {
	char name[32];
	int n;
	double mape, max, threshold;
	double bias; /* mean signed error, oriented by what the quantity is (case_sense) */
	int sense;   /* its counted cases': SENSE_SPEED, SENSE_MEMORY, SENSE_COUNT or, where they
		      * differ (validate --run's user_runs: steps and peaks), SENSE_MIXED */
	bool pass;
	const char *worst;
	/* what 90 % of its counted cases measured over what was predicted, of a step's time (a
	 * rate's case turned over) or a peak's bytes: the 5th and 95th percentiles, nearest rank
	 * (with fewer than 20 cases, the least and the most); cases predicted not to fit left out
	 * (nbanded counts the rest). What plan and simulate print beside a prediction of the kind
	 * (configs/accuracy.json, written by --accuracy). */
	double band_lo, band_hi;
	int nbanded;
	/* its counted cases by where they come from: the first word of their ids, which names
	 * the framework, benchmark or system (MosaicML, torchtune, DGXC, LitGPT, ZeRO-Offload)
	 * by this project's convention; the first MAX_SOURCES met */
	struct vsource {
		char name[32];
		int n;
		double mape, bias;
	} src[MAX_SOURCES];
	int nsrc;
};

/*
 * Which way a quantity errs when it errs in the user's favour. A planner that predicts a step
 * shorter, a rate higher or a peak smaller than the run had is optimistic: the job takes longer
 * or does not fit. The bias of a category is the mean of its counted cases' errors turned that
 * way (positive: optimistic); a case predicted not to fit where it ran is pessimistic by
 * 100 %, as it counts 100 % in the MAPE. Counts (parameters) have no favourable side: their
 * bias is plain (positive: more than measured).
 */
enum { SENSE_SPEED, SENSE_MEMORY, SENSE_COUNT, SENSE_MIXED };

static int case_sense(const char *q, double *sign)
{
	if (strstr(q, "params")) {
		*sign = 1;
		return SENSE_COUNT;
	}
	if (strstr(q, "bytes")) {
		*sign = -1; /* less memory than measured */
		return SENSE_MEMORY;
	}
	/* step_seconds and seconds_per_layer: shorter is optimistic; the rates (tokens_per_second*,
	 * TFLOPS, MFU, drive bandwidth) say "second" but never "seconds": higher is */
	*sign = strstr(q, "seconds") ? -1 : 1;
	return SENSE_SPEED;
}

/* A category names files and chart titles: a lowercase identifier of at most 31 characters. */
static bool valid_category(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > 31 || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* measured unit -> SI factor */
static int unit_factor(const char *u, double *f)
{
	static const struct {
		const char *u;
		double f;
	} t[] = {{"GiB", 1073741824.0}, {"MiB", 1048576.0}, {"TiB", 1099511627776.0},
		 {"GB", 1e9},           {"MB", 1e6},        {"TB", 1e12},
		 {"s", 1},              {"tokens/s", 1},    {"TFLOPS", 1e12},
		 {"params", 1},         {"GB/s", 1e9},      {"%", 0.01}};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(u, t[i].u))
			return *f = t[i].f, 0;
	return -1;
}

static int predict(struct vcase *c, const cJSON *flags, struct eng *e)
{
	struct sim_option o;
	struct sim_workload w;
	struct mdl_hw hw;

	if (tp_simulate_json(flags, e, &o, &w, &hw, c->err, sizeof c->err))
		return -1;
	struct mdl_counts cnt;
	mdl_arch_counts(&w.arch, &cnt);
	const char *q = c->quantity;
	/* every recorded case is a run that ran: one predicted not to fit is wrong, whatever its
	 * number (parameter counts and drive bandwidths do not depend on fitting) */
	c->nofit = !o.fits && strstr(q, "params") == NULL && strncmp(q, "flash_", 6) != 0;
	if (!strcmp(q, "params"))
		c->predicted = (double)cnt.params;
	else if (!strcmp(q, "active_params"))
		c->predicted = (double)cnt.active_params;
	else if (!strcmp(q, "trainable_params"))
		c->predicted = (double)mdl_job_trainable(&w.arch, &w.job);
	else if (!strcmp(q, "peak_gpu_bytes"))
		c->predicted = o.peak_gpu;
	else if (!strcmp(q, "peak_gpu_reserved_bytes"))
		c->predicted = o.peak_gpu_reserved;
	else if (!strcmp(q, "peak_gpu_allocated_bytes"))
		c->predicted = o.peak_gpu_allocated;
	else if (!strcmp(q, "peak_dram_bytes"))
		c->predicted = o.peak_dram;
	else if (!strcmp(q, "host_state_bytes"))
		c->predicted = o.peak_dram + o.peak_flash - o.host_fixed;
	else if (!strcmp(q, "step_seconds"))
		c->predicted = o.step_seconds;
	else if (strcmp(q, "update_seconds") == 0 || strcmp(q, "micro_batches_seconds") == 0) {
		/* the step split at the end of its last backward (sim_option.update_seconds) */
		if (o.update_seconds < 0)
			return snprintf(c->err, sizeof c->err, "the run did not time its update"),
			       -1;
		c->predicted = strcmp(q, "update_seconds") == 0 ? o.update_seconds
							      : o.step_seconds - o.update_seconds;
	}
	else if (!strcmp(q, "tokens_per_second"))
		c->predicted = o.tokens_per_second;
	else if (!strcmp(q, "tokens_per_second_per_gpu"))
		c->predicted = o.gpus ? o.tokens_per_second / o.gpus : 0;
	else if (!strcmp(q, "model_tflops_per_gpu"))
		c->predicted = o.model_tflops_per_gpu * 1e12;
	else if (!strcmp(q, "mfu")) /* model FLOPs utilisation: of the job's dense peak */
		c->predicted = o.mfu;
	else if (!strcmp(q, "hardware_tflops_per_gpu")) {
		struct mdl_job j = w.job;
		j.recompute = o.recompute;
		c->predicted = o.model_tflops_per_gpu * 1e12 * mdl_job_hardware_flops(&w.arch, &j) /
			       mdl_job_model_flops(&w.arch, &j);
	} else if (!strcmp(q, "flash_read_bandwidth"))
		c->predicted = mdl_flash_bandwidth(&hw, true);
	else if (!strcmp(q, "flash_write_bandwidth"))
		c->predicted = mdl_flash_bandwidth(&hw, false);
	else
		return snprintf(c->err, sizeof c->err, "unknown quantity '%s'", q), -1;
	return 0;
}

/*
 * A calibration profile (traces/calibration): when it measured the tiering kernel, the engine
 * predicts the kernel again from the profile's fits (cal_replay_tiering: today's code, the
 * recorded measurements) against the measured seconds per layer: the helper's own case (copy-
 * bound on PCIe GPUs) and, where it ran one, its balanced case (GEMMs about as long as the copy,
 * where the overlap and the GEMM rate both count). Host-only profiles predict nothing and add no
 * case.
 */
static void tiering_case(const char *path, const char *which, double predicted, double measured,
			 struct vcase *cs, int *nc)
{
	if (*nc == MAX_CASES)
		return;
	struct vcase *c = &cs[(*nc)++];
	memset(c, 0, sizeof *c);
	const char *base = strrchr(path, '/');
	snprintf(c->id, sizeof c->id, "tiering kernel%s, %.80s", which, base ? base + 1 : path);
	snprintf(c->category, sizeof c->category, "tiering_kernel");
	snprintf(c->unit, sizeof c->unit, "s");
	snprintf(c->source, sizeof c->source, "tierplan calibrate run %.200s", path);
	snprintf(c->confidence, sizeof c->confidence, "A");
	snprintf(c->quantity, sizeof c->quantity, "seconds_per_layer");
	c->measured = measured;
	c->predicted = predicted;
	c->used = true;
	c->error = predicted / measured - 1;
}

static void replay_profile(const char *path, const cJSON *root, struct vcase *cs, int *nc)
{
	struct cal_tiering t;
	if (cal_replay_tiering(root, &t))
		return;
	tiering_case(path, "", t.predicted, t.measured, cs, nc);
	if (t.bal_predicted > 0)
		tiering_case(path, " balanced", t.bal_predicted, t.bal_measured, cs, nc);
}

/* Loads and runs every case of one trace file. */
/* Reads one file of recorded cases (or a calibration profile) into cs; with an engine, each
 * case is predicted too. 0 ok, -1 + err naming the file and case. */
static int run_text(const char *text, const char *path, struct vcase *cs, int *nc, struct eng *e,
		    char *err, size_t errlen)
{
	cJSON *root = cJSON_Parse(text);
	const cJSON *cat = cJSON_GetObjectItemCaseSensitive(root, "category");
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "cases"), *it;
	if (cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(root, "measurements"))) {
		replay_profile(path, root, cs, nc);
		cJSON_Delete(root);
		return 0;
	}
	if (!cJSON_IsString(cat) || !cJSON_IsArray(arr)) {
		snprintf(err, errlen, "trace %.300s: expected {\"category\": ..., \"cases\": [...]}", path);
		cJSON_Delete(root);
		return -1;
	}
	if (!valid_category(cat->valuestring)) {
		snprintf(err, errlen, "trace %.300s: category '%.40s' must be 1 to 31 of a-z, 0-9 and _, "
				      "starting with a letter",
			 path, cat->valuestring);
		cJSON_Delete(root);
		return -1;
	}
	cJSON_ArrayForEach(it, arr)
	{
		struct vcase *c = &cs[*nc];
		const cJSON *id = cJSON_GetObjectItemCaseSensitive(it, "id");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(it, "measured");
		const cJSON *mv = cJSON_GetObjectItemCaseSensitive(m, "value");
		const cJSON *mu = cJSON_GetObjectItemCaseSensitive(m, "unit");
		const cJSON *q = cJSON_GetObjectItemCaseSensitive(it, "quantity");
		const cJSON *cf = cJSON_GetObjectItemCaseSensitive(it, "confidence");
		const cJSON *src = cJSON_GetObjectItemCaseSensitive(it, "source");
		const cJSON *flags = cJSON_GetObjectItemCaseSensitive(it, "flags");
		double f = 1;
		if (*nc == MAX_CASES) {
			snprintf(err, errlen, "trace %.300s: more than %d recorded cases in all", path,
				 MAX_CASES);
			cJSON_Delete(root);
			return -1;
		}
		if (!cJSON_IsString(id) || !cJSON_IsNumber(mv) ||
		    !cJSON_IsString(mu) || !cJSON_IsString(q) || !cJSON_IsString(cf) ||
		    !cJSON_IsString(src) || !cJSON_IsObject(flags) ||
		    unit_factor(mu->valuestring, &f) || !(mv->valuedouble > 0)) {
			snprintf(err, errlen, "trace %.300s: case %d needs id, confidence, source, quantity, "
					      "flags and measured {value > 0, unit: GiB|GB|MiB|s|"
					      "tokens/s|TFLOPS|params|GB/s|%%}",
				 path, cJSON_GetArraySize(arr) ? *nc + 1 : 0);
			cJSON_Delete(root);
			return -1;
		}
		memset(c, 0, sizeof *c);
		snprintf(c->id, sizeof c->id, "%s", id->valuestring);
		snprintf(c->category, sizeof c->category, "%s", cat->valuestring);
		snprintf(c->unit, sizeof c->unit, "%s", mu->valuestring);
		snprintf(c->source, sizeof c->source, "%s", src->valuestring);
		snprintf(c->confidence, sizeof c->confidence, "%s", cf->valuestring);
		snprintf(c->quantity, sizeof c->quantity, "%s", q->valuestring);
		c->measured = mv->valuedouble * f;
		c->used = cf->valuestring[0] == 'A' || cf->valuestring[0] == 'B';
		/* the files the flags name (models/x.json, hosts/y.json) beside the trace file:
		 * validate runs from any directory */
		cJSON *fl = cJSON_Duplicate(flags, 1);
		tp_flags_beside(fl, path);
		if (!e) {
			c->used = false;
		} else if (!fl || predict(c, fl, e)) {
			c->failed = true;
			c->used = false;
		} else {
			c->error = c->predicted / c->measured - 1;
		}
		cJSON_Delete(fl);
		(*nc)++;
	}
	cJSON_Delete(root);
	return 0;
}

static int run_file(const char *path, struct vcase *cs, int *nc, struct eng *e, char *err,
		    size_t errlen)
{
	char *text = cfg_read_file(path, "trace", 1 << 22, err, errlen);
	if (!text)
		return -1;
	int rc = run_text(text, path, cs, nc, e, err, errlen);
	free(text);
	return rc;
}

int val_trace_check(const char *text, const char *path, int *ncases, char *err, size_t errlen)
{
	struct vcase *cs = calloc(MAX_CASES, sizeof *cs);
	int nc = 0, rc = -1;
	if (!cs) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	rc = run_text(text, path, cs, &nc, NULL, err, errlen);
	*ncases = nc;
	free(cs);
	return rc;
}

static double threshold(const cJSON *th, const char *cat)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(th, cat);
	/* no threshold: NAN, which no MAPE passes (the category fails, saying why) */
	return cJSON_IsNumber(v) && v->valuedouble >= 0 ? v->valuedouble / 100.0 : NAN;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Measured over predicted, as a time or bytes: a rate's error turned over (a rate predicted 10 %
 * high is a step that takes 1.1x the predicted time). */
static double measured_ratio(const struct vcase *c)
{
	double sign;
	int sense = case_sense(c->quantity, &sign);
	return sense == SENSE_SPEED && sign > 0 ? 1 + c->error : 1 / (1 + c->error);
}

/* The 5th and 95th percentiles (nearest rank) of the category's counted, fitting cases. */
static void band(const struct vcase *cs, int nc, struct vcat *cat)
{
	double *r = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *r);
	int n = 0;
	for (int i = 0; r && i < nc; i++)
		if (cs[i].used && !cs[i].nofit && !strcmp(cs[i].category, cat->name))
			r[n++] = measured_ratio(&cs[i]);
	cat->nbanded = n;
	if (n) {
		qsort(r, (size_t)n, sizeof *r, by_value);
		cat->band_lo = r[(int)ceil(0.05 * n) - 1];
		cat->band_hi = r[(int)ceil(0.95 * n) - 1];
	}
	free(r);
}

/* The source entry of a case id (its first word) in cat, added where new; NULL once
 * MAX_SOURCES are taken. */
static struct vsource *source_of(struct vcat *cat, const char *id)
{
	size_t w = strcspn(id, " ");
	if (w >= sizeof cat->src[0].name)
		w = sizeof cat->src[0].name - 1;
	for (int j = 0; j < cat->nsrc; j++)
		if (strlen(cat->src[j].name) == w && !strncmp(cat->src[j].name, id, w))
			return &cat->src[j];
	if (cat->nsrc == MAX_SOURCES)
		return NULL;
	struct vsource *v = &cat->src[cat->nsrc++];
	memset(v, 0, sizeof *v);
	memcpy(v->name, id, w);
	return v;
}

/* Most cases first, then by name: the order validate prints them in. */
static int by_cases(const void *a, const void *b)
{
	const struct vsource *x = a, *y = b;
	return x->n != y->n ? (x->n < y->n ? 1 : -1) : strcmp(x->name, y->name);
}

static int summarise(struct vcase *cs, int nc, const cJSON *th, struct vcat *cats)
{
	int ncat = 0;
	for (int i = 0; i < nc; i++) {
		int k;
		for (k = 0; k < ncat; k++)
			if (!strcmp(cats[k].name, cs[i].category))
				break;
		if (k == ncat) {
			if (ncat == MAX_CATS)
				continue;
			memset(&cats[k], 0, sizeof cats[k]);
			snprintf(cats[k].name, sizeof cats[k].name, "%s", cs[i].category);
			cats[k].threshold = threshold(th, cs[i].category);
			ncat++;
		}
		if (!cs[i].used)
			continue;
		double a = cs[i].nofit ? 1.0 : fabs(cs[i].error), sign;
		int sense = case_sense(cs[i].quantity, &sign);
		if (!cats[k].n)
			cats[k].sense = sense;
		else if (cats[k].sense != sense)
			cats[k].sense = SENSE_MIXED;
		double b = cs[i].nofit ? -1.0 : sign * cs[i].error;
		cats[k].mape += a;
		cats[k].bias += b;
		cats[k].n++;
		struct vsource *v = source_of(&cats[k], cs[i].id);
		if (v) {
			v->mape += a;
			v->bias += b;
			v->n++;
		}
		if (a >= cats[k].max) {
			cats[k].max = a;
			cats[k].worst = cs[i].id;
		}
	}
	for (int k = 0; k < ncat; k++) {
		if (cats[k].n) {
			cats[k].mape /= cats[k].n;
			cats[k].bias /= cats[k].n;
		}
		for (int j = 0; j < cats[k].nsrc; j++) {
			cats[k].src[j].mape /= cats[k].src[j].n;
			cats[k].src[j].bias /= cats[k].src[j].n;
		}
		qsort(cats[k].src, (size_t)cats[k].nsrc, sizeof cats[k].src[0], by_cases);
		band(cs, nc, &cats[k]);
		cats[k].pass = cats[k].mape <= cats[k].threshold;
	}
	return ncat;
}

static void print_text(FILE *fp, const struct vcase *cs, int nc, const struct vcat *cats,
		       int ncat)
{
	for (int k = 0; k < ncat; k++) {
		fprintf(fp, "%s\n  %-52s %4s %12s %12s %8s %8s\n", cats[k].name, "case", "conf",
			"predicted", "measured", "unit", "error");
		for (int i = 0; i < nc; i++) {
			const struct vcase *c = &cs[i];
			double f = 1;
			if (strcmp(c->category, cats[k].name))
				continue;
			unit_factor(c->unit, &f);
			if (c->failed)
				fprintf(fp, "  %-52.52s %4s %12s %12.4g %8s   failed: %s\n", c->id,
					c->confidence, "-", c->measured / f, c->unit, c->err);
			else
				fprintf(fp, "  %-52.52s %4s %12.4g %12.4g %8s %+7.1f%%%s%s\n", c->id,
					c->confidence, c->predicted / f, c->measured / f, c->unit,
					100 * c->error,
					c->nofit ? "  does not fit: counted as 100 %" : "",
					c->used ? "" : "  (context)");
		}
		if (cats[k].n == 0) {
			fprintf(fp, "  no A/B case was predicted: nothing checked\n\n");
			continue;
		}
		fprintf(fp, "  MAPE %.1f %% over %d A/B cases, worst %.1f %% (%s); ", 100 * cats[k].mape,
			cats[k].n, 100 * cats[k].max, cats[k].worst ? cats[k].worst : "-");
		if (isnan(cats[k].threshold))
			fprintf(fp, "no threshold: FAIL\n");
		else
			fprintf(fp, "threshold %.1f %%: %s\n", 100 * cats[k].threshold,
				cats[k].pass ? "pass" : "FAIL");
		static const char *const side[4][2] = {
		    {"optimistic: faster than measured", "pessimistic: slower than measured"},
		    {"optimistic: less memory than measured",
		     "pessimistic: more memory than measured"},
		    {"more than measured", "less than measured"},
		    {"optimistic: faster or less memory than measured",
		     "pessimistic: slower or more memory than measured"}};
		double b = cats[k].bias;
		if (fabs(b) < 5e-4) /* what prints as 0.0 % has no side */
			fprintf(fp, "  bias 0.0 %%");
		else
			fprintf(fp, "  bias %+.1f %% (%s)", 100 * b, side[cats[k].sense][b < 0]);
		if (cats[k].nbanded && cats[k].sense != SENSE_COUNT)
			fprintf(fp,
				"; measured %.2f-%.2fx the predicted %s (5th-95th percentile "
				"of %d cases)",
				cats[k].band_lo, cats[k].band_hi,
				cats[k].sense == SENSE_MEMORY	? "bytes"
				: cats[k].sense == SENSE_SPEED ? "time"
							       : "time or bytes",
				cats[k].nbanded);
		fprintf(fp, "\n");
		/* by source, where two or more sources have two or more cases each (a source of
		 * one case is its own row above) */
		int many = 0;
		for (int j = 0; j < cats[k].nsrc; j++)
			many += cats[k].src[j].n >= 2;
		if (many >= 2) {
			fprintf(fp, "  by source (the ids' first word)   cases    MAPE    bias\n");
			for (int j = 0; j < cats[k].nsrc && cats[k].src[j].n >= 2; j++)
				fprintf(fp, "    %-32.32s %5d %6.1f %% %+6.1f %%\n",
					cats[k].src[j].name, cats[k].src[j].n,
					100 * cats[k].src[j].mape, 100 * cats[k].src[j].bias);
		}
		fprintf(fp, "\n");
	}
}

/* A category's band as JSON: measured over predicted, 5th and 95th percentiles, and the
 * cases behind them (null where none). */
static void add_band(cJSON *x, const struct vcat *c)
{
	cJSON *b = cJSON_AddObjectToObject(x, "measured_over_predicted");
	if (c->nbanded) {
		cJSON_AddNumberToObject(b, "p05", c->band_lo);
		cJSON_AddNumberToObject(b, "p95", c->band_hi);
	} else {
		cJSON_AddNullToObject(b, "p05");
		cJSON_AddNullToObject(b, "p95");
	}
	cJSON_AddNumberToObject(b, "cases", c->nbanded);
}

static void print_json(FILE *fp, const struct vcase *cs, int nc, const struct vcat *cats,
		       int ncat)
{
	cJSON *root = cJSON_CreateObject(), *arr, *sum;
	cJSON_AddNumberToObject(root, "schema_version", TIERPLAN_SCHEMA_VERSION);
	cJSON_AddStringToObject(root, "tool_version", TIERPLAN_VERSION);
	cJSON_AddStringToObject(root, "command", "validate");
	arr = cJSON_AddArrayToObject(root, "cases");
	for (int i = 0; i < nc; i++) {
		const struct vcase *c = &cs[i];
		double f = 1;
		unit_factor(c->unit, &f);
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "id", c->id);
		cJSON_AddStringToObject(x, "category", c->category);
		cJSON_AddStringToObject(x, "quantity", c->quantity);
		if (c->failed) {
			cJSON_AddNullToObject(x, "predicted");
			cJSON_AddNullToObject(x, "error");
			cJSON_AddStringToObject(x, "failure", c->err);
		} else {
			cJSON_AddNumberToObject(x, "predicted", c->predicted / f);
		}
		cJSON_AddNumberToObject(x, "measured", c->measured / f);
		cJSON_AddStringToObject(x, "unit", c->unit);
		if (!c->failed) {
			cJSON_AddNumberToObject(x, "error", c->error);
			cJSON_AddBoolToObject(x, "fits", !c->nofit);
		}
		cJSON_AddStringToObject(x, "confidence", c->confidence);
		cJSON_AddBoolToObject(x, "counted", c->used);
		cJSON_AddStringToObject(x, "source", c->source);
		cJSON_AddItemToArray(arr, x);
	}
	sum = cJSON_AddObjectToObject(root, "summary");
	for (int k = 0; k < ncat; k++) {
		cJSON *x = cJSON_AddObjectToObject(sum, cats[k].name);
		cJSON_AddNumberToObject(x, "mape", cats[k].mape);
		cJSON_AddNumberToObject(x, "max", cats[k].max);
		cJSON_AddNumberToObject(x, "bias", cats[k].bias);
		cJSON_AddNumberToObject(x, "n", cats[k].n);
		if (!isnan(cats[k].threshold))
			cJSON_AddNumberToObject(x, "threshold", cats[k].threshold);
		else
			cJSON_AddNullToObject(x, "threshold");
		cJSON_AddBoolToObject(x, "pass", cats[k].pass);
		add_band(x, &cats[k]);
		cJSON *by = cJSON_AddArrayToObject(x, "by_source");
		for (int j = 0; j < cats[k].nsrc; j++) {
			cJSON *v = cJSON_CreateObject();
			cJSON_AddStringToObject(v, "source", cats[k].src[j].name);
			cJSON_AddNumberToObject(v, "n", cats[k].src[j].n);
			cJSON_AddNumberToObject(v, "mape", cats[k].src[j].mape);
			cJSON_AddNumberToObject(v, "bias", cats[k].src[j].bias);
			cJSON_AddItemToArray(by, v);
		}
	}
	char *s = cJSON_Print(root);
	if (s)
		fprintf(fp, "%s\n", s);
	free(s);
	cJSON_Delete(root);
}

/* The accuracy record (--accuracy FILE; configs/accuracy.json is make accuracy's): each
 * category's band, rounded as plan and simulate print it, so that a record stays equal to
 * what validate computes until a prediction or a case changes (make validate compares). */
static int write_accuracy(const char *path, const struct vcat *cats, int ncat, char *err,
			  size_t errlen)
{
	struct cfg_out o;
	int rc = cfg_out_open(&o, path, "--accuracy", err, errlen);
	if (rc)
		return rc;
	fprintf(o.fp, "{\n  \"_comment\": \"What published runs measured over what tierplan "
		      "predicted (a step's time, a peak's bytes), the 5th and 95th percentiles of "
		      "each validate category's counted cases that fit: written by `tierplan "
		      "validate --accuracy FILE` (make accuracy); make validate fails where it no "
		      "longer matches. plan, compare and simulate print the band of a prediction's "
		      "kind beside it.\",\n  \"categories\": {");
	const char *sep = "\n";
	for (int k = 0; k < ncat; k++) {
		if (!cats[k].nbanded || cats[k].sense == SENSE_COUNT)
			continue;
		fprintf(o.fp, "%s    \"%s\": {\"measured_over_predicted\": [%.2f, %.2f], "
			      "\"cases\": %d}",
			sep, cats[k].name, cats[k].band_lo, cats[k].band_hi, cats[k].nbanded);
		sep = ",\n";
	}
	fprintf(o.fp, "\n  }\n}\n");
	return cfg_out_close(&o, "--accuracy", err, errlen);
}

/* Predicted against measured, one chart per category (log-log, the y = x line). */
static int report(const char *dir, bool force, const struct vcase *cs, int nc,
		  const struct vcat *cats, int ncat, char *err, size_t errlen)
{
	int rc;

	if ((rc = rpt_dir_prepare(dir, force, "--report", err, errlen)))
		return rc;
	/* category names are checked at load (valid_category): they are safe in file names */
	for (int k = 0; k < ncat; k++) {
		struct rpt_file d, g;
		char dat[64], gp[64], svg[64], title[160], xl[64], yl[64];
		const char *unit = "";
		snprintf(dat, sizeof dat, "validate_%.31s.dat", cats[k].name);
		snprintf(gp, sizeof gp, "validate_%.31s.gp", cats[k].name);
		snprintf(svg, sizeof svg, "validate_%.31s.svg", cats[k].name);
		if ((rc = rpt_file_open(&d, dir, dat, "--report", err, errlen)))
			return rc;
		fprintf(d.fp, "# measured predicted (case units) counted id\n");
		for (int i = 0; i < nc; i++) {
			double f = 1;
			if (strcmp(cs[i].category, cats[k].name) || cs[i].failed)
				continue;
			unit_factor(cs[i].unit, &f);
			unit = cs[i].unit;
			fprintf(d.fp, "%.6g %.6g %d ", cs[i].measured / f, cs[i].predicted / f,
				cs[i].used);
			rpt_dat_string(d.fp, cs[i].id);
			fputc('\n', d.fp);
		}
		if ((rc = rpt_file_close(&d, err, errlen)) ||
		    (rc = rpt_file_open(&g, dir, gp, "--report", err, errlen)))
			return rc;
		snprintf(title, sizeof title, "%.31s: predicted against measured (MAPE %.1f %%)",
			 cats[k].name, 100 * cats[k].mape);
		snprintf(xl, sizeof xl, "measured (%s)", unit);
		snprintf(yl, sizeof yl, "predicted (%s)", unit);
		rpt_gnuplot_preamble(g.fp, title, xl, yl);
		fprintf(g.fp, "set logscale xy\nset size square\n"
			      "plot x with lines dt 2 title 'predicted = measured', ");
		rpt_gnuplot_string(g.fp, dat);
		fprintf(g.fp, " using 1:2 with points pt 7 ps 1.3 title 'cases'\n");
		if ((rc = rpt_file_close(&g, err, errlen)) ||
		    (rc = rpt_gnuplot(dir, gp, "svg", svg, err, errlen)))
			return rc;
	}
	return 0;
}

int val_validate(const struct val_validate_opts *vo, FILE *out, FILE *log, char *err,
		 size_t errlen)
{
	const char *dirs[VAL_MAX_TRACE_DIRS + 2] = {NULL}, *thfile = vo->thresholds;
	int ndirs = 0;
	char path[4200];

	for (int d = 0; d < vo->ndirs && d < VAL_MAX_TRACE_DIRS; d++)
		dirs[ndirs++] = vo->dirs[d];
	/* the repository root is the configs directory's parent */
	char root[4096];
	snprintf(root, sizeof root, "%s/..", cfg_dir());
	char d1[4200], d2[4200], th[4200];
	if (!ndirs) {
		snprintf(d1, sizeof d1, "%s/traces/published", root);
		snprintf(d2, sizeof d2, "%s/traces/calibration", root);
		dirs[ndirs++] = d1;
		dirs[ndirs++] = d2;
	}
	if (!thfile) {
		snprintf(th, sizeof th, "%s/validate/thresholds.json", root);
		thfile = th;
	}
	/* a record that cannot be written is refused before anything runs */
	if (vo->accuracy && cfg_out_check(vo->accuracy, "--accuracy", err, errlen))
		return EXIT_INVALID;
	char *thtext = cfg_read_file(thfile, "thresholds", 1 << 16, err, errlen);
	if (!thtext)
		return EXIT_INVALID;
	cJSON *thj = cJSON_Parse(thtext);
	free(thtext);
	if (!cJSON_IsObject(thj)) {
		snprintf(err, errlen, "thresholds '%.300s': expected {\"category\": percent, ...}", thfile);
		cJSON_Delete(thj);
		return EXIT_INVALID;
	}

	struct vcase *cs = calloc(MAX_CASES, sizeof *cs);
	struct eng *e = eng_new();
	int nc = 0, rc = EXIT_OK;
	if (!cs || !e) {
		snprintf(err, errlen, "out of memory");
		rc = EXIT_SYSTEM;
		goto out;
	}
	for (int d = 0; d < ndirs; d++) {
		char **names;
		int nn = cfg_list_json(dirs[d], &names);
		if (nn < 0 && d < vo->ndirs && rc == EXIT_OK) { /* a default one may not exist yet */
			snprintf(err, errlen, "--traces '%.300s': %s", dirs[d], strerror(errno));
			rc = EXIT_INVALID;
		}
		for (int i = 0; i < nn; i++) {
			snprintf(path, sizeof path, "%s/%s", dirs[d], names[i]);
			if (rc == EXIT_OK && run_file(path, cs, &nc, e, err, errlen))
				rc = EXIT_INVALID;
		}
		cfg_list_free(names, nn > 0 ? nn : 0);
	}
	if (rc == EXIT_OK && nc == 0) {
		snprintf(err, errlen, "no recorded cases under %s%s%s", dirs[0], ndirs > 1 ? " or " : "",
			 ndirs > 1 ? dirs[1] : "");
		rc = EXIT_INVALID;
	}
	if (rc)
		goto out;
	struct vcat cats[MAX_CATS];
	int ncat = summarise(cs, nc, thj, cats);
	if (vo->json)
		print_json(out, cs, nc, cats, ncat);
	else
		print_text(out, cs, nc, cats, ncat);
	int wrc = vo->report ? report(vo->report, vo->force, cs, nc, cats, ncat, err, errlen) : 0;
	if (!wrc && vo->accuracy)
		wrc = write_accuracy(vo->accuracy, cats, ncat, err, errlen);
	if (wrc) {
		rc = wrc == CFG_OUT_REFUSED ? EXIT_INVALID : EXIT_SYSTEM;
		goto out;
	}
	for (int k = 0; k < ncat; k++) {
		if (isnan(cats[k].threshold))
			fprintf(log, "tierplan validate: category '%s' has no threshold in %s\n",
				cats[k].name, thfile);
		if (!cats[k].pass)
			rc = EXIT_INFEASIBLE;
	}
	for (int i = 0; i < nc; i++)
		if (cs[i].failed && cs[i].confidence[0] <= 'B') {
			fprintf(log, "tierplan validate: case '%s' failed: %s\n", cs[i].id, cs[i].err);
			rc = EXIT_INFEASIBLE;
		}
out:
	cJSON_Delete(thj);
	eng_free(e);
	free(cs);
	return rc;
}
