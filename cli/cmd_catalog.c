/* cmd_catalog — `tierplan models` and `tierplan hardware`: list the catalogs. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/arch.h"
#include "../model/catalog.h"
#include "../model/hw.h"
#include "cli.h"
#include "../sim/opts.h"
#include "../model/units.h"

static int parse(int cmd, const char *name, int argc, char **argv, struct tp_opts *o)
{
	char err[256];
	int rc = tp_opts_parse(cmd, argc, argv, 2, o, err, sizeof err);

	if (rc < 0)
		return cli_fail(rc == -2 ? EXIT_USAGE : EXIT_INVALID, name, err);
	if (o->help) {
		printf("usage: tierplan %s [--format text|json]%s\n\noptions:\n", name,
		       cmd == CMD_MODELS ? " [--match TEXT]" : "");
		tp_opts_help(cmd, stdout);
		return EXIT_OK;
	}
	if (strcmp(o->format, "text") && strcmp(o->format, "json"))
		return cli_fail(EXIT_INVALID, name, "--format: allowed text, json");
	return -1;
}

int cmd_models(int argc, char **argv)
{
	struct tp_opts o;
	char name[96], path[4096], aliases[256], err[512];
	bool json;
	int rc = parse(CMD_MODELS, "models", argc, argv, &o);
	cJSON *arr = NULL;

	if (rc >= 0)
		return rc;
	json = strcmp(o.format, "json") == 0;
	struct cfg_models cat;
	int nw = 20; /* the name column: as wide as the longest name */
	if (cfg_models_open(&cat, err, sizeof err) < 0)
		return cli_fail(EXIT_INVALID, "models", err);
	while (cfg_models_next(&cat, name, sizeof name, path, sizeof path, aliases, sizeof aliases))
		nw = (int)strlen(name) > nw ? (int)strlen(name) : nw;
	cfg_models_close(&cat);
	if (json)
		arr = cJSON_CreateArray();
	if (cfg_models_open(&cat, err, sizeof err) < 0) {
		cJSON_Delete(arr);
		return cli_fail(EXIT_INVALID, "models", err);
	}
	int shown = 0;
	while (cfg_models_next(&cat, name, sizeof name, path, sizeof path, aliases, sizeof aliases)) {
		struct mdl_arch a;
		struct mdl_counts c;
		/* --match: the name, an alias (the joined list) or the Hub repository holds it */
		if (o.match && !strcasestr(name, o.match) && !strcasestr(aliases, o.match) &&
		    !(cat.hf_id && strcasestr(cat.hf_id, o.match)))
			continue;
		if (!shown++ && !json) /* the header over the first row listed */
			printf("%-*s %-11s %16s %16s %6s %6s  %s\n", nw, "name", "type", "params",
			       "active", "layers", "hidden", "aliases");
		if (mdl_arch_load(path, &a, err, sizeof err) < 0) {
			cfg_models_close(&cat);
			cJSON_Delete(arr);
			return cli_fail(EXIT_INVALID, "models", err);
		}
		mdl_arch_counts(&a, &c);
		if (json) {
			cJSON *m = cJSON_CreateObject();
			cJSON_AddStringToObject(m, "name", name);
			cJSON_AddStringToObject(m, "model_type", a.model_type);
			cJSON_AddNumberToObject(m, "params", (double)c.params);
			cJSON_AddNumberToObject(m, "active_params", (double)c.active_params);
			cJSON_AddNumberToObject(m, "layers", (double)a.layers);
			cJSON_AddNumberToObject(m, "hidden", (double)a.hidden);
			/* the aliases as a list (the text table joins them with ", ") */
			cJSON *al = cJSON_AddArrayToObject(m, "aliases");
			for (char *save = NULL, *t = strtok_r(aliases, ", ", &save); t;
			     t = strtok_r(NULL, ", ", &save))
				cJSON_AddItemToArray(al, cJSON_CreateString(t));
			char real[PATH_MAX];
			cJSON_AddStringToObject(m, "config", realpath(path, real) ? real : path);
			if (cat.hf_id)
				cJSON_AddStringToObject(m, "hf_id", cat.hf_id);
			else
				cJSON_AddNullToObject(m, "hf_id");
			cJSON_AddItemToArray(arr, m);
		} else {
			printf("%-*s %-11s %16llu %16llu %6llu %6llu  %s\n", nw, name, a.model_type,
			       (unsigned long long)c.params, (unsigned long long)c.active_params,
			       (unsigned long long)a.layers, (unsigned long long)a.hidden, aliases);
		}
	}
	cfg_models_close(&cat);
	if (o.match && !shown) { /* as grep: nothing held it */
		cJSON_Delete(arr);
		snprintf(err, sizeof err,
			 "--match '%.200s': no catalog model's name, alias or Hugging Face "
			 "repository holds it (a Hub id or config.json path still works with "
			 "--model)",
			 o.match);
		return cli_fail(EXIT_INVALID, "models", err);
	}
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddNumberToObject(root, "schema_version", 1);
		cJSON_AddItemToObject(root, "models", arr);
		char *t = cJSON_Print(root);
		puts(t);
		free(t);
		cJSON_Delete(root);
	}
	return EXIT_OK;
}

/* A record's other names (comma-separated) as the JSON array "aliases". */
static void add_aliases(cJSON *x, const char *aliases)
{
	cJSON *al = cJSON_AddArrayToObject(x, "aliases");
	char names[CFG_ALIASES];
	snprintf(names, sizeof names, "%s", aliases);
	for (char *save = NULL, *t = strtok_r(names, ",", &save); t; t = strtok_r(NULL, ",", &save))
		cJSON_AddItemToArray(al, cJSON_CreateString(t));
}

/* key: v where the part has it (v > 0), else null (what the text shows as '-') */
static void positive(cJSON *x, const char *key, double v)
{
	if (v > 0)
		cJSON_AddNumberToObject(x, key, v);
	else
		cJSON_AddNullToObject(x, key);
}

int cmd_hardware(int argc, char **argv)
{
	struct tp_opts o;
	char err[512], b[4][32];
	struct cfg_gpu *g = NULL;
	struct cfg_flash *f = NULL;
	struct cfg_host *h = NULL;
	int ng = 0, nf = 0, nh = 0;
	int rc = parse(CMD_HARDWARE, "hardware", argc, argv, &o);

	if (rc >= 0)
		return rc;
	if (cfg_catalog_load(CFG_GPU, (void **)&g, &ng, err, sizeof err) < 0 ||
	    cfg_catalog_load(CFG_FLASH, (void **)&f, &nf, err, sizeof err) < 0 ||
	    cfg_catalog_load(CFG_HOST, (void **)&h, &nh, err, sizeof err) < 0) {
		rc = cli_fail(EXIT_INVALID, "hardware", err);
		goto out;
	}
	if (strcmp(o.format, "json") == 0) {
		cJSON *root = cJSON_CreateObject(), *a;
		cJSON_AddNumberToObject(root, "schema_version", 1);
		a = cJSON_AddArrayToObject(root, "gpus");
		for (int i = 0; i < ng; i++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "name", g[i].name);
			cJSON_AddStringToObject(x, "description", g[i].description);
			if (g[i].host[0]) /* its usual node: what --host auto takes */
				cJSON_AddStringToObject(x, "host", g[i].host);
			else
				cJSON_AddNullToObject(x, "host");
			add_aliases(x, g[i].aliases); /* which --gpu takes too */
			cJSON_AddNumberToObject(x, "memory_bytes", g[i].memory);
			cJSON_AddNumberToObject(x, "hbm_bandwidth_bytes_per_second", g[i].hbm_bandwidth);
			cJSON_AddNumberToObject(x, "bf16_flops", g[i].bf16_flops);
			cJSON_AddNumberToObject(x, "fp32_flops", g[i].fp32_flops);
			positive(x, "fp8_flops", g[i].fp8_flops); /* null: no FP8 cores */
			cJSON_AddBoolToObject(x, "bf16", !(g[i].fp16_only > 0));
			cJSON_AddNumberToObject(x, "tdp_watts", g[i].tdp);
			cJSON_AddNumberToObject(x, "price_usd", g[i].price);
			cJSON_AddNumberToObject(x, "cloud_usd_per_hour", g[i].cloud_per_hour);
			cJSON_AddItemToArray(a, x);
		}
		a = cJSON_AddArrayToObject(root, "flash");
		for (int i = 0; i < nf; i++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "name", f[i].name);
			cJSON_AddStringToObject(x, "description", f[i].description);
			cJSON_AddNumberToObject(x, "capacity_bytes", f[i].capacity);
			cJSON_AddNumberToObject(x, "read_bytes_per_second", f[i].read_bandwidth);
			cJSON_AddNumberToObject(x, "write_bytes_per_second", f[i].write_bandwidth);
			/* null: no SLC cache, one write rate */
			positive(x, "slc_cache_bytes", f[i].slc_cache);
			positive(x, "write_after_cache_bytes_per_second",
				 f[i].slc_cache > 0 ? f[i].write_after_cache : 0);
			/* the rating the drive has: bytes written, or drive writes a day over the
			 * warranty (the other null) */
			positive(x, "endurance_bytes", f[i].tbw);
			positive(x, "drive_writes_per_day", f[i].dwpd);
			cJSON_AddNumberToObject(x, "warranty_years", f[i].warranty_years);
			cJSON_AddNumberToObject(x, "active_power_watts", f[i].active_power);
			cJSON_AddNumberToObject(x, "idle_power_watts", f[i].idle_power);
			cJSON_AddNumberToObject(x, "price_usd", f[i].price);
			cJSON_AddItemToArray(a, x);
		}
		a = cJSON_AddArrayToObject(root, "hosts");
		for (int i = 0; i < nh; i++) {
			cJSON *x = cJSON_CreateObject();
			cJSON_AddStringToObject(x, "name", h[i].name);
			cJSON_AddStringToObject(x, "description", h[i].description);
			add_aliases(x, h[i].aliases); /* which --host takes too */
			cJSON_AddNumberToObject(x, "gpu_slots", h[i].gpu_slots);
			cJSON_AddNumberToObject(x, "dram_bytes", h[i].dram);
			cJSON_AddNumberToObject(x, "dram_max_bytes", h[i].dram_max);
			/* what a node keeps for its OS and framework (its own, else the default) */
			cJSON_AddNumberToObject(x, "dram_reserve_bytes", mdl_dram_reserve(&h[i]));
			/* how its DRAM is bought (null: fixed at dram_bytes), and the sizes that
			 * makes, which plan searches and buys */
			positive(x, "dimm_slots", h[i].dram_slots);
			positive(x, "memory_channels", h[i].dram_channels);
			positive(x, "ddr_generation", h[i].dram_ddr);
			double sz[MDL_DRAM_SIZES];
			int nsz = mdl_dram_sizes(&h[i], sz);
			cJSON *sa = cJSON_AddArrayToObject(x, "dram_sizes_bytes");
			for (int k = 0; k < nsz; k++)
				cJSON_AddItemToArray(sa, cJSON_CreateNumber(sz[k]));
			cJSON_AddNumberToObject(x, "dram_bandwidth_bytes_per_second",
						h[i].dram_bandwidth);
			cJSON_AddNumberToObject(x, "cpu_cores", h[i].cpu_cores);
			cJSON_AddNumberToObject(x, "flash_bays", h[i].flash_bays);
			cJSON_AddNumberToObject(x, "pcie_gen", h[i].pcie_gen);
			/* bytes/s per GPU between nodes; null: a single node, no network */
			positive(x, "network_bytes_per_second_per_gpu", h[i].network_per_gpu);
			cJSON_AddNumberToObject(x, "price_usd", h[i].price);
			cJSON_AddItemToArray(a, x);
		}
		char *t = cJSON_Print(root);
		puts(t);
		free(t);
		cJSON_Delete(root);
	} else {
		/* each table's names as wide as its longest; a description wraps at its column */
		char row[256];
		int w = 11;
		for (int i = 0; i < ng; i++)
			w = (int)strlen(g[i].name) > w ? (int)strlen(g[i].name) : w;
		printf("GPUs (TFLOPS: dense bf16 / fp8, '-' none / fp32 without tensor cores; node: "
		       "the host --host auto takes)\n"
		       "  %-*s %-10s %11s %21s %6s %8s %8s  %s\n%*s%s\n",
		       w, "name", "memory", "bw", "TFLOPS", "TDP", "price", "$/GPU-h", "node",
		       w + 3, "", "description");
		for (int i = 0; i < ng; i++) {
			char fp8[16] = "-";
			if (g[i].fp8_flops > 0)
				snprintf(fp8, sizeof fp8, "%.1f", g[i].fp8_flops / 1e12);
			snprintf(row, sizeof row,
				 "  %-*s %-10s %11s %7.1f/%6s/%6.1f %5.0fW %8.0f %8.2f  %s", w,
				 g[i].name, cfg_fmt_bytes(g[i].memory, b[0], 32),
				 cfg_fmt_rate(g[i].hbm_bandwidth, b[1], 32),
				 g[i].bf16_flops / 1e12, fp8, g[i].fp32_flops / 1e12, g[i].tdp,
				 g[i].price, g[i].cloud_per_hour,
				 g[i].host[0] ? g[i].host : "- (" CFG_HOST_STAND_IN ")");
			/* the description its own line: the row leaves it under 20 columns */
			printf("%s\n%*s", row, w + 3, "");
			cfg_wrap(stdout, (size_t)w + 3, (size_t)w + 3, CFG_TEXT_COLUMNS,
				 g[i].description, " ");
		}
		w = 16;
		for (int i = 0; i < nf; i++)
			w = (int)strlen(f[i].name) > w ? (int)strlen(f[i].name) : w;
		printf("\nflash\n  %-*s %-10s %10s %10s %10s %6s %7s  %s\n", w, "name", "capacity",
		       "read", "write", "endurance", "power", "price", "description");
		for (int i = 0; i < nf; i++) {
			char endur[32];
			if (f[i].tbw > 0)
				snprintf(endur, sizeof endur, "%.0f TBW", f[i].tbw / 1e12);
			else
				snprintf(endur, sizeof endur, "%g DWPD", f[i].dwpd);
			int n = snprintf(row, sizeof row,
					 "  %-*s %-10s %10s %10s %10s %5.0fW %7.0f  ", w, f[i].name,
					 cfg_fmt_bytes(f[i].capacity, b[0], 32),
					 cfg_fmt_rate(f[i].read_bandwidth, b[1], 32),
					 cfg_fmt_rate(f[i].write_bandwidth, b[2], 32), endur,
					 f[i].active_power, f[i].price);
			fputs(row, stdout);
			cfg_wrap(stdout, (size_t)n, (size_t)n, CFG_TEXT_COLUMNS, f[i].description,
				 " ");
		}
		/* a consumer drive's write rating holds for its SLC cache only */
		char slc[1024];
		size_t at = 0;
		for (int i = 0; i < nf && at < sizeof slc; i++)
			if (f[i].slc_cache > 0)
				at += (size_t)snprintf(
					slc + at, sizeof slc - at, "%s%s %s then %s", at ? ", " : "",
					f[i].name, cfg_fmt_bytes(f[i].slc_cache, b[0], 32),
					cfg_fmt_rate(f[i].write_after_cache, b[1], 32));
		if (at && at < sizeof slc) {
			snprintf(slc + at, sizeof slc - at,
				 " (a step's writes past the cache go at that rate, and the drive "
				 "folds the cache free at it only while it does not write)");
			fputs("  SLC write caches: ", stdout);
			cfg_wrap(stdout, 20, 4, CFG_TEXT_COLUMNS, slc, " ");
		}
		w = 17;
		for (int i = 0; i < nh; i++)
			w = (int)strlen(h[i].name) > w ? (int)strlen(h[i].name) : w;
		printf("\nhosts (DRAM: as delivered, and the most the node takes; DIMMs: channels/"
		       "slots and DDR generation,\n"
		       "       plan buying a DIMM on each channel or on each slot, or fixed; "
		       "drives: NVMe bays x the PCIe\n"
		       "       generation of their links)\n"
		       "  %-*s %5s %6s %10s %10s %-10s %11s %10s %7s\n%*s%s\n",
		       w, "name", "GPUs", "cores", "DRAM", "DRAM max", "DIMMs", "DRAM bw", "drives",
		       "price", w + 3, "", "description");
		for (int i = 0; i < nh; i++) {
			char bays[32];
			if (h[i].pcie_gen > 0)
				snprintf(bays, sizeof bays, "%.0f x Gen%.0f", h[i].flash_bays,
					 h[i].pcie_gen);
			else
				snprintf(bays, sizeof bays, "%.0f", h[i].flash_bays);
			char dimms[32] = "fixed";
			if (h[i].dram_slots > h[i].dram_channels)
				snprintf(dimms, sizeof dimms, "%.0f/%.0f DDR%.0f",
					 h[i].dram_channels, h[i].dram_slots, h[i].dram_ddr);
			else if (h[i].dram_slots > 0)
				snprintf(dimms, sizeof dimms, "%.0f DDR%.0f", h[i].dram_slots,
					 h[i].dram_ddr);
			snprintf(row, sizeof row,
					 "  %-*s %5.0f %6.0f %10s %10s %-10s %11s %10s %7.0f", w,
					 h[i].name, h[i].gpu_slots, h[i].cpu_cores,
					 cfg_fmt_bytes(h[i].dram, b[0], 32),
					 cfg_fmt_bytes(h[i].dram_max, b[2], 32), dimms,
					 cfg_fmt_rate(h[i].dram_bandwidth, b[1], 32), bays,
					 h[i].price);
			/* the description its own line, as the GPUs' */
			printf("%s\n%*s", row, w + 3, "");
			cfg_wrap(stdout, (size_t)w + 3, (size_t)w + 3, CFG_TEXT_COLUMNS,
				 h[i].description, " ");
		}
		printf("\nsources: configs/gpus.json, flash.json, hosts.json (a _source per value)\n");
	}
	rc = EXIT_OK;
out:
	free(g);
	free(f);
	free(h);
	return rc;
}
