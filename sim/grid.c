/* grid — see grid.h. */
#include "grid.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/catalog.h"
#include "../model/file.h"
#include "opts.h"

/* A JSON scalar as a flag value. */
static char *value_str(const cJSON *v)
{
	char buf[64];
	if (cJSON_IsString(v))
		return strdup(v->valuestring);
	if (cJSON_IsNumber(v)) {
		double x = v->valuedouble;
		if (fabs(x) < 9007199254740992.0 && x == trunc(x)) /* integral and exact: 2^53 */
			snprintf(buf, sizeof buf, "%lld", (long long)x);
		else
			snprintf(buf, sizeof buf, "%.17g", v->valuedouble);
		return strdup(buf);
	}
	return NULL;
}

/* Value v of flag key as simulate gets it (malloc'd): a file it names by a relative path taken
 * beside the grid file at path (cfg_path_beside), anything else as written; NULL out of
 * memory. */
static char *arg_of(const char *path, const char *key, const char *v)
{
	char buf[4096];
	bool file = tp_opts_input_file(key, v) && cfg_path_beside(path, v, buf, sizeof buf) == 0;
	return strdup(file ? buf : v);
}

static bool forbidden(const char *key)
{
	return !strcmp(key, "trace") || !strcmp(key, "format") || !strcmp(key, "help");
}

int tp_grid_load(const char *path, struct tp_grid *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g); /* tp_grid_free is safe whatever fails below */
	char *text = cfg_read_file(path, "grid", 1 << 22, err, errlen);
	if (!text)
		return -1;
	int rc = tp_grid_parse(text, path, g, err, errlen);
	free(text);
	return rc;
}

int tp_grid_parse(const char *text, const char *path, struct tp_grid *g, char *err, size_t errlen)
{
	memset(g, 0, sizeof *g);
	g->root = cJSON_Parse(text);
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
		if (g->nbase == TP_GRID_KEYS || forbidden(it->string) || !(g->base_val[g->nbase] =
									 value_str(it))) {
			snprintf(err, errlen, "--grid %s: base '%s' must be a string or number (and not "
					      "trace, format or help; at most %d keys)",
				 path, it->string, TP_GRID_KEYS);
			return -1;
		}
		g->base_arg[g->nbase] = arg_of(path, it->string, g->base_val[g->nbase]);
		g->base_key[g->nbase] = it->string;
		if (!g->base_arg[g->nbase++]) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	g->points = 1;
	cJSON_ArrayForEach(it, grid)
	{
		struct tp_grid_axis *a = &g->ax[g->naxes];
		int n = cJSON_GetArraySize(it);
		if (g->naxes == TP_GRID_KEYS || !cJSON_IsArray(it) || n < 1 || forbidden(it->string) ||
		    !strcmp(it->string, "prices")) {
			snprintf(err, errlen, "--grid %s: grid '%s' must be a non-empty list (and not "
					      "trace, format, help or prices; at most %d keys)",
				 path, it->string, TP_GRID_KEYS);
			return -1;
		}
		a->key = it->string;
		a->list = it;
		a->vals = calloc((size_t)n, sizeof *a->vals);
		a->args = calloc((size_t)n, sizeof *a->args);
		if (!a->vals || !a->args) {
			free(a->vals);
			free(a->args);
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
			a->args[a->n] = arg_of(path, a->key, a->vals[a->n]);
			if (!a->args[a->n++]) {
				snprintf(err, errlen, "out of memory");
				return -1;
			}
		}
		if (g->points > UINT64_MAX / (uint64_t)n) {
			snprintf(err, errlen, "--grid %s: too many points", path);
			return -1;
		}
		g->points *= (uint64_t)n;
	}
	return 0;
}

void tp_grid_free(struct tp_grid *g)
{
	for (int i = 0; i < g->nbase; i++) {
		free(g->base_val[i]);
		free(g->base_arg[i]);
	}
	for (int i = 0; i < g->naxes; i++) {
		for (int k = 0; k < g->ax[i].n; k++) {
			free(g->ax[i].vals[k]);
			free(g->ax[i].args[k]);
		}
		free(g->ax[i].vals);
		free(g->ax[i].args);
	}
	cJSON_Delete(g->root);
}

/* The value index of each axis for point p (last axis fastest). */
void tp_grid_coords(const struct tp_grid *g, uint64_t p, int *idx)
{
	for (int i = g->naxes - 1; i >= 0; i--) {
		idx[i] = (int)(p % (uint64_t)g->ax[i].n);
		p /= (uint64_t)g->ax[i].n;
	}
}

/* "--" and key into flag, cut to fit (not snprintf: a sweep forms every point's flags). */
static char *flag_of(char flag[48], const char *key)
{
	size_t len = strnlen(key, 48 - 3);
	memcpy(flag, "--", 2);
	memcpy(flag + 2, key, len);
	flag[2 + len] = '\0';
	return flag;
}

int tp_grid_argv(const struct tp_grid *g, uint64_t p, char **argv, char flags[][48])
{
	int argc = 2, idx[TP_GRID_KEYS], nf = 0;

	argv[0] = "tierplan";
	argv[1] = "simulate";
	tp_grid_coords(g, p, idx);
	for (int i = 0; i < g->nbase; i++) {
		argv[argc++] = flag_of(flags[nf++], g->base_key[i]);
		argv[argc++] = g->base_arg[i];
	}
	for (int i = 0; i < g->naxes; i++) {
		argv[argc++] = flag_of(flags[nf++], g->ax[i].key);
		argv[argc++] = g->ax[i].args[idx[i]];
	}
	argv[argc] = NULL;
	return argc;
}

int tp_grid_check(const struct tp_grid *g, const char *path, char *err, size_t errlen)
{
	char *argv[TP_GRID_ARGV], flags[2 * TP_GRID_KEYS][48], msg[768];
	struct tp_opts o;
	int argc = tp_grid_argv(g, 0, argv, flags);
	if (tp_opts_parse(CMD_SIMULATE, argc, argv, 2, &o, msg, sizeof msg) == -2) {
		snprintf(err, errlen, "--grid %s: %s", path, msg);
		return -1;
	}
	/* a value that cannot run on its own (a model file that is not there, a GPU the catalog
	 * lacks, a number out of range) would fail every point that has it; the price list first,
	 * which every point takes (a grid cannot vary it) and which prices a GPU, host or drive
	 * file (set for the checks, as each point sets its own, and unset after them) */
	int rc = 0;
	for (int pass = 0; pass < 2 && !rc; pass++)
		for (int i = 0; i < g->nbase && !rc; i++) {
			const char *v = g->base_arg[i];
			bool prices = !strcmp(g->base_key[i], "prices");
			if (prices != (pass == 0))
				continue;
			if (tp_input_value(g->base_key[i], v, msg, sizeof msg)) {
				snprintf(err, errlen, "--grid %s: base \"%s\": %s", path,
					 g->base_key[i], msg);
				rc = -1;
			} else if (prices) {
				cfg_set_prices(v);
			}
		}
	for (int k = 0; k < g->naxes && !rc; k++)
		for (int i = 0; i < g->ax[k].n && !rc; i++)
			if (tp_input_value(g->ax[k].key, g->ax[k].args[i], msg, sizeof msg)) {
				snprintf(err, errlen, "--grid %s: grid \"%s\" value %d of %d: %s",
					 path, g->ax[k].key, i + 1, g->ax[k].n, msg);
				rc = -1;
			}
	cfg_set_prices(NULL);
	return rc;
}

