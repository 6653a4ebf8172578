/*
 * regress — `tierplan regress`: golden predictions guard against silent changes.
 *
 * A scenario is a named set of simulate flags (JSON files in tests/scenarios: {"scenarios": [{"name",
 * "flags"}]}); its prediction is stored in tests/golden/NAME.json. regress recomputes every
 * scenario and compares: counts and bytes exactly, times, power, energy and costs within 0.5 %
 * relative. On a mismatch it prints a table (scenario, field, golden, new, change) and exits 1.
 * --update rewrites the goldens (each file written to a temporary name and renamed); the commit
 * that does so says why the numbers moved. A scenario that errors is a failure too. Scenario
 * files that do not parse and a --golden that is not a directory are refused (exit 3) before
 * any scenario runs.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../reports/report.h"
#include "../sim/engine.h"
#include "../model/file.h"
#include "../sim/opts.h"
#include "validate.h"

#define REL_TOL 0.005

struct field {
	const char *name;
	bool exact;
};

/* The fields a golden holds: exact ones are counts and bytes. */
static const struct field fields[] = {
	{"fits", true},
	{"gpus", true},
	{"tp", true},
	{"pp", true},
	{"dp", true},
	{"zero", true},
	{"micro_batch", true},
	{"grad_accum", true},
	{"micro_batches_simulated", true},
	{"peak_gpu_bytes", true},
	{"peak_dram_bytes", true},
	{"peak_flash_bytes", true},
	{"step_seconds", false},
	{"tokens_per_second", false},
	{"model_tflops_per_gpu", false},
	{"peak_power_watts", false},
	{"energy_joules_per_step", false},
	{"flash_bytes_written_per_step", false},
	{"runtime_seconds", false},
	{"cost_total_usd", false},
	{"cost_cloud_usd", false},
};
#define NFIELDS (int)(sizeof fields / sizeof fields[0])

static void values(const struct sim_option *o, double *v)
{
	double x[] = {o->fits,
		      o->gpus,
		      o->layout.tp,
		      o->layout.pp,
		      o->layout.dp,
		      o->layout.zero,
		      (double)o->micro_batch,
		      (double)o->grad_accum,
		      (double)o->micro_simulated,
		      round(o->peak_gpu),
		      round(o->peak_dram),
		      round(o->peak_flash),
		      o->step_seconds,
		      o->tokens_per_second,
		      o->model_tflops_per_gpu,
		      o->peak_power_watts,
		      o->energy_joules_per_step,
		      o->flash_bytes_written_per_step,
		      o->runtime_seconds,
		      o->cost_total,
		      o->cost_cloud};
	memcpy(v, x, sizeof x);
}

/* Scenario names name golden files: no path separators, quotes or leading dots. */
#define MAX_NAME 100
static bool valid_name(const char *s)
{
	size_t n = strlen(s);
	if (n < 1 || n > MAX_NAME || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

static int write_golden(const char *dir, const char *name, const double *v, char *err,
			size_t errlen)
{
	struct cfg_out f;
	char path[4400];
	snprintf(path, sizeof path, "%s/%s.json", dir, name);
	int rc = cfg_out_open(&f, path, "--golden", err, errlen);
	if (rc)
		return rc;
	fprintf(f.fp, "{\n  \"scenario\": \"%s\"", name);
	for (int i = 0; i < NFIELDS; i++)
		fprintf(f.fp, ",\n  \"%s\": %.17g", fields[i].name, v[i]);
	fprintf(f.fp, "\n}\n");
	return cfg_out_close(&f, "--golden", err, errlen);
}

/* Compares against the stored golden; prints mismatching rows. Returns mismatches, -1 when the
 * golden is missing or unreadable. */
static void header(FILE *fp, bool *done)
{
	if (!*done)
		fprintf(fp, "  %-34s %-28s %16s %16s %10s\n", "scenario", "field", "golden", "new",
			"change");
	*done = true;
}

static int compare(const char *dir, const char *name, const double *v, FILE *fp, bool *hdr)
{
	char path[4400], err[512];
	snprintf(path, sizeof path, "%s/%s.json", dir, name);
	char *text = cfg_read_file(path, "golden", 1 << 16, err, sizeof err);
	if (!text) {
		header(fp, hdr);
		fprintf(fp, "  %-34s %-28s missing golden (%s): regress --update writes it\n", name,
			"-", err);
		return -1;
	}
	cJSON *g = cJSON_Parse(text);
	free(text);
	int bad = 0;
	for (int i = 0; i < NFIELDS; i++) {
		const cJSON *x = cJSON_GetObjectItemCaseSensitive(g, fields[i].name);
		double old = cJSON_IsNumber(x) ? x->valuedouble : NAN;
		bool same = fields[i].exact ? old == v[i]
					    : fabs(v[i] - old) <= REL_TOL * fmax(fabs(old), 1e-300);
		if (same)
			continue;
		header(fp, hdr);
		fprintf(fp, "  %-34s %-28s %16.10g %16.10g %+9.3f%%\n", name, fields[i].name, old, v[i],
			old != 0 ? 100 * (v[i] / old - 1) : INFINITY);
		bad++;
	}
	cJSON_Delete(g);
	return bad;
}

int val_scenarios_add(struct val_scenarios *s, const char *text, const char *path, char *err,
		      size_t errlen)
{
	cJSON *root = cJSON_Parse(text), **roots;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "scenarios"), *it;

	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "scenarios %.300s: expected {\"scenarios\": [{\"name\", \"flags\"}]}",
			 path);
		cJSON_Delete(root);
		return -1;
	}
	if (!(roots = realloc(s->roots, (size_t)(s->nroots + 1) * sizeof *roots))) {
		snprintf(err, errlen, "out of memory");
		cJSON_Delete(root);
		return -1;
	}
	s->roots = roots;
	s->roots[s->nroots++] = root; /* owned from here: val_scenarios_free releases it */
	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
		cJSON *flags = cJSON_GetObjectItemCaseSensitive(it, "flags");
		if (!cJSON_IsString(name) || !cJSON_IsObject(flags)) {
			snprintf(err, errlen, "%.300s: a scenario needs a name and flags", path);
			return -1;
		}
		if (!valid_name(name->valuestring)) {
			snprintf(err, errlen, "%.300s: scenario name '%.60s' must be 1 to %d of A-Z, a-z, "
					      "0-9, '.', '_' and '-', starting with a letter or digit "
					      "(it names the golden file)",
				 path, name->valuestring, MAX_NAME);
			return -1;
		}
		for (int k = 0; k < s->n; k++) /* hundreds at most: a linear search */
			if (!strcmp(s->v[k].name, name->valuestring)) {
				snprintf(err, errlen, "%.300s: scenario '%s' appears twice (names must be "
						      "unique across --scenarios)",
					 path, name->valuestring);
				return -1;
			}
		if (s->n == VAL_MAX_SCENARIOS) {
			snprintf(err, errlen, "%.300s: more than %d scenarios", path, VAL_MAX_SCENARIOS);
			return -1;
		}
		if (s->n == s->cap) {
			int cap = s->cap ? 2 * s->cap : 64;
			struct val_scenario *v = realloc(s->v, (size_t)cap * sizeof *v);
			if (!v) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
			s->v = v;
			s->cap = cap;
		}
		tp_flags_beside(flags, path); /* its files beside the scenario file */
		s->v[s->n++] = (struct val_scenario){name->valuestring, flags};
	}
	return 0;
}

void val_scenarios_free(struct val_scenarios *s)
{
	for (int i = 0; i < s->nroots; i++)
		cJSON_Delete(s->roots[i]);
	free(s->roots);
	free(s->v);
	memset(s, 0, sizeof *s);
}

int val_regress(const char *sdir, const char *gdir, bool update, FILE *out, FILE *log, char *err,
		size_t errlen)
{
	struct val_scenarios sc = {0};
	char path[4400], **names;
	int nn = cfg_list_json(sdir, &names), rc = EXIT_OK, mismatches = 0, missing = 0;
	bool hdr = false;

	if (nn < 0) {
		snprintf(err, errlen, "--scenarios %s: %s", sdir, strerror(errno));
		return EXIT_INVALID;
	}
	/* every file is read and checked before any scenario runs */
	for (int f = 0; f < nn && rc == EXIT_OK; f++) {
		snprintf(path, sizeof path, "%s/%s", sdir, names[f]);
		char *text = cfg_read_file(path, "scenarios", 1 << 22, err, errlen);
		if (!text || val_scenarios_add(&sc, text, path, err, errlen))
			rc = EXIT_INVALID;
		free(text);
	}
	cfg_list_free(names, nn);
	if (rc == EXIT_OK && sc.n == 0) {
		snprintf(err, errlen, "--scenarios %s: no scenarios (JSON files of {\"scenarios\": "
				      "[{\"name\", \"flags\"}]})",
			 sdir);
		rc = EXIT_INVALID;
	}
	struct stat st;
	int gerr = stat(gdir, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
	if (rc == EXIT_OK && gerr) {
		snprintf(err, errlen, "--golden %s: %s", gdir, strerror(gerr));
		rc = EXIT_INVALID;
	}
	struct eng *e = rc == EXIT_OK ? eng_new() : NULL;
	if (rc == EXIT_OK && !e) {
		snprintf(err, errlen, "out of memory");
		rc = EXIT_SYSTEM;
	}
	for (int i = 0; e && i < sc.n; i++) {
		const char *name = sc.v[i].name;
		struct sim_option o;
		double v[NFIELDS];
		if (tp_simulate_json(sc.v[i].flags, e, &o, NULL, NULL, err, errlen)) {
			fprintf(log, "tierplan regress: scenario '%s' failed: %s\n", name, err);
			rc = EXIT_INFEASIBLE;
			continue;
		}
		values(&o, v);
		if (update) {
			int wrc = write_golden(gdir, name, v, err, errlen);
			if (wrc) {
				rc = wrc == CFG_OUT_REFUSED ? EXIT_INVALID : EXIT_SYSTEM;
				break;
			}
			continue;
		}
		int bad = compare(gdir, name, v, out, &hdr);
		if (bad < 0)
			missing++;
		else
			mismatches += bad;
		if (bad)
			rc = EXIT_INFEASIBLE;
	}
	eng_free(e);
	if (update && rc == EXIT_OK)
		fprintf(out, "regress: %d goldens written to %s\n", sc.n, gdir);
	else if (rc == EXIT_OK)
		fprintf(out, "regress: %d scenarios match their goldens\n", sc.n);
	if (missing)
		fprintf(out, "regress: %d of %d scenarios have no golden in %s\n", missing, sc.n,
			gdir);
	if (mismatches)
		fprintf(out, "regress: %d fields differ across %d scenarios (run make golden only if the "
			     "change is meant, and say why)\n",
			mismatches, sc.n);
	val_scenarios_free(&sc);
	return rc;
}
