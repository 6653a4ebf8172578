/* test_catalog — the hardware catalogs load, every value has a source, bad records fail. */
#include <cjson/cJSON.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../model/catalog.h"
#include "../model/hw.h"
#include "../model/file.h"
#include "tests.h"

static void catalogs_load_with_the_required_entries(void)
{
	static const char *gpus[] = {"a100-40g", "a100-80g", "h100-sxm",   "h100-pcie",  "h100-nvl",
				     "h200",	 "gh200",    "b200",	   "l40s",	 "l4",
				     "rtx4090",	 "rtx5090",  "rtx6000ada", "rtx4000ada", "rtx-a6000",
				     "v100-32g", "mi300x",   "rtx3090",	   "t4",	 "a40",
				     "h800",	 "a800",     "h20",	   "mi325x",	 "gb200",
				     "b300",	 "gb300",    "rtxpro6000", "mi355x",	 "a10g"};
	static const char *flash[] = {"aidaptiv-ai100e", "pm1743",	   "micron-7450",
				      "d7-p5510",	 "samsung-990pro", "samsung-980",
				      "samsung-980pro",	 "azure-nvme-direct-v2", "generic-gen4",
				      "generic-gen5"};
	char err[512];
	struct cfg_gpu g;
	struct cfg_flash f;
	struct cfg_host h;

	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++)
		CU_ASSERT_EQUAL(cfg_gpu_get(gpus[i], &g, err, sizeof err), 0);
	for (size_t i = 0; i < sizeof flash / sizeof flash[0]; i++)
		CU_ASSERT_EQUAL(cfg_flash_get(flash[i], &f, err, sizeof err), 0);
	CU_ASSERT_EQUAL(cfg_host_get("hgx-8gpu", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL(cfg_host_get("workstation-4gpu", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL(cfg_host_get("gh200-node", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL(cfg_host_get("gb200-nvl72", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL(h.gpu_slots, 72); /* one NVLink domain */
	CU_ASSERT_EQUAL(cfg_host_get("gb300-nvl72", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL(cfg_host_get("desktop-1gpu", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL(cfg_gpu_get("H100-SXM", &g, err, sizeof err), 0); /* case-insensitive */
	CU_ASSERT_DOUBLE_EQUAL(g.memory, 81559.0 * 1048576, 1);
	CU_ASSERT_DOUBLE_EQUAL(g.bf16_flops, 989.4e12, 1e6);
	/* a PCIe GPU's host link is its PCIe generation; the GH200's is NVLink-C2C */
	struct mdl_hw hw = {.gpu = g};
	CU_ASSERT_DOUBLE_EQUAL(mdl_host_link_bandwidth(&hw), mdl_pcie_bandwidth(5, 16), 1);
	CU_ASSERT_EQUAL(cfg_gpu_get("gh200", &hw.gpu, err, sizeof err), 0);
	CU_ASSERT(mdl_host_link_bandwidth(&hw) > 6 * mdl_pcie_bandwidth(5, 16));
}

/* A link trains to the lower generation of its ends: an H100 PCIe (Gen5) in a DGX A100's Gen4
 * slots moves at Gen4 x16's 24.8 GB/s, in a Gen5 HGX at 55.63 (mdl_pcie_bandwidth's measured
 * copy rates). A drive runs at the lesser of its datasheet and its x4 link on the host: Gen3 x4
 * is 4 lanes x 8 GT/s x 128/130 / 8 bits = 3.938 GB/s of which a 256-byte completion carries
 * 256/276, 3.653 GB/s; Gen4 twice that. A Gen4 datasheet drive (7.0 / 4.3 GB/s) on the DGX-2's
 * Gen3 ports reads and writes at 3.653, through the array's software path (0.89 n^-0.095
 * reading, 0.74 writing, model/hw.c); on a Gen5 host at its datasheet. */
static void links_run_at_the_hosts_pcie_generation(void)
{
	char err[512];
	struct mdl_hw hw = {0};
	double gen3 = 8e9 * 128 / 130 / 8 * 4 * 256 / 276;

	CU_ASSERT_DOUBLE_EQUAL(mdl_drive_link_bandwidth(3), 3.653065e9, 1e3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_drive_link_bandwidth(4), 2 * gen3, 1e3);
	CU_ASSERT_EQUAL(mdl_drive_link_bandwidth(0), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_gpu_get("h100-pcie", &hw.gpu, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("dgx-a100", &hw.host, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(mdl_host_link_bandwidth(&hw), 24.8e9, 1e3);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("hgx-8gpu", &hw.host, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(mdl_host_link_bandwidth(&hw), 55.63e9, 1e3);
	CU_ASSERT_EQUAL_FATAL(cfg_flash_get("generic-gen4", &hw.flash, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("dgx-2", &hw.host, err, sizeof err), 0);
	hw.flash_count = 4;
	double read = 0.89 * pow(4, -0.095) * 4 * gen3;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, true), read, 1e3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.74 * 4 * gen3, 1e3);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("workstation-4gpu", &hw.host, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.74 * 4 * 4.3e9, 1e3);
}

/* A consumer drive's SLC cache (Samsung 980 1 TB: 160 GB, then 500 MB/s, model/hw.c): one drive
 * of a Gen4 server writes into the cache at 0.74 of its 3.0 GB/s rating, 2.22 GB/s. A step
 * that writes 100 GB a drive stays in the cache: 2.22 GB/s. One that writes 320 GB takes
 * 160 / 2.22 + 160 / 0.5 = 392.07 s: 0.8162 GB/s. What a step finds free is what the drive
 * folded at 500 MB/s in its pauses, where those are known. A record with a cache needs the
 * rate past it, no faster than the rating. */
static void slc_caches_slow_the_writes_past_them(void)
{
	char err[512];
	struct mdl_hw hw = {0};
	CU_ASSERT_EQUAL_FATAL(cfg_flash_get("samsung-980", &hw.flash, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("dgx-a100", &hw.host, err, sizeof err), 0);
	hw.flash_count = 1;
	double fast = 0.74 * 3.0e9;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), fast, 1e3);
	hw.flash_step_write = 100e9;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), fast, 1e3);
	hw.flash_step_write = 320e9;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 320e9 / (160e9 / fast + 320.0),
			       1e3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.8162e9, 1e6);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, true), 0.89 * 3.5e9, 1e3); /* reads: none */
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_cached_write(160e9, 0.5e9, fast, 160e9), fast, 1e3);
	/* folded free in the pauses: 60 s a step at 500 MB/s frees 30 GB of the 160, and 100 GB
	 * take 30 / 2.22 + 70 / 0.5 = 153.51 s: 0.6514 GB/s; with nothing free, all at 0.5; 400 s
	 * of pauses free the whole cache */
	hw.flash_step_write = 100e9;
	hw.flash_pause_known = true;
	hw.flash_step_pause = 60;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_slc_free(&hw), 30e9, 1e3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 100e9 / (30e9 / fast + 140.0), 1e3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.6514e9, 1e6);
	hw.flash_step_pause = 0;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.5e9, 1e3);
	hw.flash_step_pause = 400;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_slc_free(&hw), 160e9, 1e3);
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), fast, 1e3);
	hw.flash_pause_known = false;
	hw.flash_step_write = 320e9;
	/* calibrate's fio writes for seconds, within the cache: its 2 GB/s is the rate into it,
	 * 320 GB in 160 / 2 + 160 / 0.5 = 400 s */
	hw.prof.flash_write = 2e9;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.8e9, 1e3);
	/* calibrate --flash-fill measured the array's cache, 200 GB, and 400 MB/s past it: 200 / 2
	 * + 120 / 0.4 = 400 s; over two drives each holds 100 GB of cache and writes 200 MB/s past
	 * it, 160 GB a drive in 100 / 1 + 60 / 0.2 = 400 s: the array at 0.8 GB/s again */
	hw.prof.flash_slc_cache = 200e9;
	hw.prof.flash_write_after_cache = 0.4e9;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.8e9, 1e3);
	hw.flash_count = 2;
	hw.flash_step_write = 160e9;
	CU_ASSERT_DOUBLE_EQUAL(mdl_flash_bandwidth(&hw, false), 0.8e9, 1e3);
	const char *base = "\"name\": \"x\", \"capacity\": \"1TB\", \"read_bandwidth\": "
			   "\"3GB/s\", \"write_bandwidth\": \"3GB/s\", \"latency\": \"80us\", "
			   "\"tbw\": \"600TB\", \"warranty_years\": 5, \"active_power\": \"5W\", "
			   "\"idle_power\": \"1W\"";
	char json[1024];
	struct cfg_flash f;
	const char *cases[][2] = {{"\"slc_cache\": \"100GB\", \"write_after_cache\": \"1GB/s\"", ""},
				  {"\"slc_cache\": \"100GB\"", "go together"},
				  {"\"slc_cache\": \"100GB\", \"write_after_cache\": \"4GB/s\"",
				   "no faster than 'write_bandwidth'"}};
	for (int i = 0; i < 3; i++) {
		snprintf(json, sizeof json, "{%s, %s}", base, cases[i][0]);
		cJSON *o = cJSON_Parse(json);
		int rc = cfg_record_parse(CFG_FLASH, o, "t.json", &f, err, sizeof err);
		cJSON_Delete(o);
		CU_ASSERT_EQUAL(rc, cases[i][1][0] ? -1 : 0);
		if (cases[i][1][0])
			CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i][1]));
	}
}

static void every_catalog_value_names_its_source(void)
{
	static const char *files[][2] = {{"gpus.json", "gpus"},    {"flash.json", "flash"},
					 {"hosts.json", "hosts"},  {"prices.json", "gpus"},
					 {"prices.json", "flash"}, {"prices.json", "hosts"}};
	char path[1024], err[256];

	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		snprintf(path, sizeof path, "%s/%s", cfg_dir(), files[f][0]);
		char *text = cfg_read_file(path, "catalog", 1 << 22, err, sizeof err);
		CU_ASSERT_PTR_NOT_NULL_FATAL(text);
		cJSON *root = cJSON_Parse(text), *rec, *it;
		cJSON_ArrayForEach(rec, cJSON_GetObjectItemCaseSensitive(root, files[f][1]))
		{
			cJSON_ArrayForEach(it, rec)
			{
				char key[128];
				if (!strcmp(it->string, "name") || !strcmp(it->string, "description") ||
				    strstr(it->string, "_source"))
					continue;
				snprintf(key, sizeof key, "%s_source", it->string);
				const cJSON *src = cJSON_GetObjectItemCaseSensitive(rec, key);
				CU_ASSERT(cJSON_IsString(src) && strlen(src->valuestring) > 10);
				if (!cJSON_IsString(src))
					printf("\n  %s: %s has no source\n", files[f][0], key);
			}
		}
		cJSON_Delete(root);
		free(text);
	}
}

static int parse_gpu(const char *json, char *err, size_t n)
{
	struct cfg_gpu g;
	cJSON *o = cJSON_Parse(json);
	int rc = cfg_record_parse(CFG_GPU, o, "t.json", &g, err, n);
	cJSON_Delete(o);
	return rc;
}

static void bad_records_name_the_key_and_range(void)
{
	const char *base = "\"name\": \"x\", \"hbm_bandwidth\": \"1TB/s\", \"bf16_flops\": "
			   "\"100TFLOPS\", \"tdp\": \"300W\", \"idle_power\": \"30W\", "
			   "\"host_link_gen\": 4, \"host_link_lanes\": 16, \"gpu_link\": 0";
	char json[1024], err[512];

	snprintf(json, sizeof json, "{%s, \"memory\": \"80GiB\"}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), 0);
	snprintf(json, sizeof json, "{%s, \"memory\": \"80GiB\", \"memroy_source\": \"x\"}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	snprintf(json, sizeof json, "{%s, \"memroy\": \"80GiB\"}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "did you mean 'memory'"));
	snprintf(json, sizeof json, "{%s, \"memory\": \"-80GiB\"}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'memory'"));
	snprintf(json, sizeof json, "{%s, \"memory\": 0}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "allowed"));
	snprintf(json, sizeof json, "{%s}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "required key 'memory'"));
	snprintf(json, sizeof json, "{%s, \"memory\": [1]}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	/* a boosting board's matmul may pass its datasheet peak, within reason */
	snprintf(json, sizeof json, "{%s, \"memory\": \"24GiB\", \"gemm_mamf\": 1.08}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), 0);
	snprintf(json, sizeof json, "{%s, \"memory\": \"24GiB\", \"gemm_mamf\": 1.3}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "gemm_mamf"));
	/* a link trains to a whole PCIe generation */
	snprintf(json, sizeof json, "{%s, \"memory\": \"24GiB\", \"host_link_gen\": 4.5}",
		 "\"name\": \"y\", \"hbm_bandwidth\": \"1TB/s\", \"bf16_flops\": \"100TFLOPS\", "
		 "\"tdp\": \"300W\", \"idle_power\": \"30W\", \"host_link_lanes\": 16, "
		 "\"gpu_link\": 0");
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'host_link_gen' is 4.5: a PCIe generation is a whole"));
	/* a GPU's usual node is a name (with its source), not a number */
	struct cfg_gpu g;
	snprintf(json, sizeof json,
		 "{%s, \"memory\": \"24GiB\", \"host\": \"workstation-4gpu\", \"host_source\": "
		 "\"a workstation card\"}",
		 base);
	cJSON *o = cJSON_Parse(json);
	CU_ASSERT_EQUAL(cfg_record_parse(CFG_GPU, o, "t.json", &g, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(g.host, "workstation-4gpu");
	cJSON_Delete(o);
	snprintf(json, sizeof json, "{%s, \"memory\": \"24GiB\", \"host\": 4}", base);
	CU_ASSERT_EQUAL(parse_gpu(json, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "key 'host'"));
}

/*
 * A node's DRAM comes as its DIMMs make it: one on every channel or on every slot, of the
 * capacities its DDR generation has (DDR4 16-128 GiB, DDR5 16, 32, 48, 64, 96, 128, 256), up to
 * its maximum, with its shipped size. Solved by hand: the HGX (16 channels, 32 slots, DDR5, at
 * most 4 TiB) takes 16 x {16 .. 256} = 256, 512, 768, 1024, 1536, 2048, 4096 and 32 x {16 ..
 * 128} = 512 .. 3072, 4096: 256, 512, 768, 1024, 1536, 2048, 3072, 4096 GiB; the DGX-2 (12
 * channels, 24 slots, DDR4, 3 TiB) 192, 384, 768, 1536 and 384 .. 3072: five sizes; the W790
 * workstation (8 slots on 8 channels, 2 TiB) 128, 256, 384, 512, 768, 1024, 2048; a GH200's
 * soldered 480 GB is its one size. A host record says all three fields or none.
 */
static void dram_comes_in_the_sizes_dimms_make(void)
{
	char err[512];
	struct cfg_host h;
	double s[MDL_DRAM_SIZES];
	const double G = 1073741824.0;
	static const double hgx[] = {256, 512, 768, 1024, 1536, 2048, 3072, 4096};
	static const double dgx2[] = {192, 384, 768, 1536, 3072};
	static const double ws[] = {128, 256, 384, 512, 768, 1024, 2048};

	CU_ASSERT_EQUAL_FATAL(cfg_host_get("hgx-8gpu", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(mdl_dram_sizes(&h, s), 8);
	for (int i = 0; i < 8; i++)
		CU_ASSERT_DOUBLE_EQUAL(s[i], hgx[i] * G, 1);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("dgx-2", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(mdl_dram_sizes(&h, s), 5);
	for (int i = 0; i < 5; i++)
		CU_ASSERT_DOUBLE_EQUAL(s[i], dgx2[i] * G, 1);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("workstation-4gpu", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(mdl_dram_sizes(&h, s), 7);
	for (int i = 0; i < 7; i++)
		CU_ASSERT_DOUBLE_EQUAL(s[i], ws[i] * G, 1);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("gh200-node", &h, err, sizeof err), 0);
	CU_ASSERT_EQUAL_FATAL(mdl_dram_sizes(&h, s), 1);
	CU_ASSERT_DOUBLE_EQUAL(s[0], 480e9, 1);

	const char *base =
		"\"name\": \"x\", \"gpu_slots\": 8, \"cpu_cores\": 64, \"cpu_power\": \"400W\", "
		"\"cpu_idle_power\": \"100W\", \"cpu_adam_rate_per_core\": 1e7, \"dram\": "
		"\"1TiB\", \"dram_max\": \"2TiB\", \"dram_bandwidth\": \"400GB/s\", "
		"\"dram_power_per_gb\": 0.4, \"flash_bays\": 8, \"flash_uplink\": 0, "
		"\"network_per_gpu\": 0, \"base_power\": \"1kW\"";
	const char *cases[][2] = {
		{"\"dram_slots\": 32, \"dram_channels\": 16, \"dram_ddr\": 5", ""},
		{"\"dram_slots\": 0, \"dram_channels\": 0, \"dram_ddr\": 0", ""},
		{"\"dram_slots\": 24, \"dram_channels\": 16, \"dram_ddr\": 5", "whole multiple"},
		{"\"dram_slots\": 32, \"dram_channels\": 16, \"dram_ddr\": 3", "4 or 5"},
		{"\"dram_slots\": 0, \"dram_channels\": 16, \"dram_ddr\": 0", "all three are 0"},
		{"\"dram_slots\": 32, \"dram_channels\": 16", "required key 'dram_ddr'"},
		{"\"dram_slots\": 0, \"dram_channels\": 0, \"dram_ddr\": 0, \"dram_reserve\": "
		 "\"3GB\"", ""},
		{"\"dram_slots\": 0, \"dram_channels\": 0, \"dram_ddr\": 0, \"dram_reserve\": "
		 "\"2TiB\"", "leaves nothing of the most DRAM"}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char json[1024];
		snprintf(json, sizeof json, "{%s, %s}", base, cases[i][0]);
		cJSON *o = cJSON_Parse(json);
		int rc = cfg_record_parse(CFG_HOST, o, "t.json", &h, err, sizeof err);
		cJSON_Delete(o);
		CU_ASSERT_EQUAL(rc, cases[i][1][0] ? -1 : 0);
		if (cases[i][1][0])
			CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i][1]));
	}
}

/* Every GPU that names its usual node (--host auto) names one the host catalog has. */
static void gpus_name_catalogued_hosts(void)
{
	struct cfg_gpu *g = NULL;
	struct cfg_host h;
	int n = 0, named = 0;
	char err[512];

	CU_ASSERT_FATAL(cfg_catalog_load(CFG_GPU, (void **)&g, &n, err, sizeof err) == 0);
	for (int i = 0; i < n; i++) {
		if (!g[i].host[0])
			continue;
		named++;
		CU_ASSERT(cfg_host_get(g[i].host, &h, err, sizeof err) == 0);
	}
	CU_ASSERT(named >= 10); /* the SXM, Grace and RTX cards at least */
	free(g);
}

/* Prices come from prices.json by name; another file can replace it, and a record it does not
 * price is an error naming the file. */
static void prices_come_from_the_prices_file(void)
{
	char err[512], path[] = "/tmp/tierplan-prices-XXXXXX";
	struct cfg_gpu g;
	struct cfg_host h;

	CU_ASSERT_EQUAL_FATAL(cfg_gpu_get("h100-sxm", &g, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(g.price, 30000, 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(g.cloud_per_hour, 3.24, 1e-9);
	CU_ASSERT_EQUAL_FATAL(cfg_host_get("hgx-8gpu", &h, err, sizeof err), 0);
	CU_ASSERT(h.dram_price_per_gb > 0 && h.price > 0);
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	const char *doc = "{\"gpus\": [{\"name\": \"h100-sxm\", \"price\": \"$20000\", "
			  "\"cloud_per_hour\": 2}], \"flash\": [], \"hosts\": []}";
	CU_ASSERT_EQUAL(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	cfg_set_prices(path);
	CU_ASSERT_EQUAL(cfg_gpu_get("h100-sxm", &g, err, sizeof err), 0);
	CU_ASSERT_DOUBLE_EQUAL(g.price, 20000, 1e-9);
	CU_ASSERT_EQUAL(cfg_gpu_get("a100-80g", &g, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no entry for gpu 'a100-80g'"));
	cfg_set_prices(NULL);
	unlink(path);
}

static void unknown_names_suggest_the_nearest(void)
{
	char err[512], path[512], name[96];
	struct cfg_gpu g;
	/* each unknown GPU name and what its error says (NULL: no suggestion at all): a suffix
	 * of the user's own names the entry; other digits name another GPU; a bare model number
	 * names the one product holding it; another family letter before the same digits is
	 * another GPU; a family prefix with a suffix lists the family; what begins other names
	 * lists them (rtx: not the one it begins with a dash, rtx-a6000, taken silently); two
	 * letters are not a misspelling of two others (gb was 'l4'); two letters swapped are one
	 * edit (h100-smx; the command line's --sqe, three letters, needs that) */
	static const struct {
		const char *arg, *says;
	} cases[] = {
		{"h100-sx", "did you mean 'h100-sxm'"},
		{"h200-sxn", "did you mean 'h200'"},
		{"h300-sxm", NULL},
		{"a10", "did you mean 'a10g'"},
		{"6000", NULL},
		{"a100-sxm", "its family: a100-40g a100-80g a100-pcie-40g a100-pcie-80g"},
		{"a100-pcie", "several variants: a100-pcie-40g a100-pcie-80g"},
		{"h100-pcei", "did you mean 'h100-pcie'"},
		{"rtx", "names that begin with it: rtx4090 rtx5090 rtx6000ada rtx4000ada rtx-a6000"},
		{"gb", "names that begin with it: gb200 gb300"},
		{"gh", "names that begin with it: gh200"},
		{"h100-smx", "did you mean 'h100-sxm'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		CU_ASSERT_EQUAL(cfg_gpu_get(cases[i].arg, &g, err, sizeof err), -1);
		if (cases[i].says)
			CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i].says));
		if (!cases[i].says || strncmp(cases[i].says, "did you mean", 12) != 0)
			CU_ASSERT_PTR_NULL(strstr(err, "did you mean"));
	}
	CU_ASSERT_EQUAL(cfg_model_resolve("70B", path, sizeof path, name, sizeof name, NULL,
					  err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(name, "Llama-3.1-70B");
	CU_ASSERT_EQUAL(cfg_model_resolve("lama-2-7b", path, sizeof path, name, sizeof name, NULL,
					  err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strcasestr(err, "did you mean 'llama-2-7b'"));
}

/* Writes text into the file at path (test set-up), as the project writes every file
 * (cfg_out_open: a temporary beside it, renamed over it). */
static void put_file(const char *path, const char *text)
{
	struct cfg_out out;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(cfg_out_open(&out, path, "test file", err, sizeof err), 0);
	fputs(text, out.fp);
	CU_ASSERT_EQUAL(cfg_out_close(&out, "test file", err, sizeof err), 0);
}

/* Points HF_HUB_CACHE at dir for a test, keeping the value it had in saved (n bytes, "" none);
 * env_restore puts it back. */
static void env_swap(const char *dir, char *saved, size_t n)
{
	const char *had = getenv("HF_HUB_CACHE");
	snprintf(saved, n, "%s", had ? had : "");
	CU_ASSERT_EQUAL(setenv("HF_HUB_CACHE", dir, 1), 0);
}

static void env_restore(const char *saved)
{
	if (saved[0])
		setenv("HF_HUB_CACHE", saved, 1);
	else
		unsetenv("HF_HUB_CACHE");
}

/* A Hub id names the catalog entry transcribed from it, or one of its name; a fine-tuned
 * variant's name its base (the words its publisher adds dropped, never the first), a quantised
 * release's name its base and its quantisation; a real path stays a path; and a Hub id the
 * catalog lacks says it is neither a file nor a catalog model. */
static void hub_ids_and_variants_name_their_base(void)
{
	static const struct {
		const char *arg, *name;
	} hits[] = {
	    {"meta-llama/Llama-3.1-8B", "Llama-3.1-8B"},
	    {"META-LLAMA/llama-3.1-8b", "Llama-3.1-8B"},
	    {"meta-llama/Meta-Llama-3-8B-Instruct", "Llama-3-8B"},
	    {"meta-llama/Llama-2-7b-chat-hf", "Llama-2-7B"},
	    {"llama-3.1-70b-instruct", "Llama-3.1-70B"},
	    {"google/gemma-2-9b-it", "Gemma-2-9B"},
	    {"Qwen/Qwen-7B-Chat", "Qwen-7B"},
	    {"Qwen/Qwen3-30B-A3B-Instruct-2507", "Qwen3-30B-A3B"},
	    {"mistralai/Mistral-7B-Instruct-v0.1", "Mistral-7B-v0.1"},
	    {"mistralai/Mistral-7B-Instruct-v0.2", "Mistral-7B-v0.2"},
	    {"microsoft/Phi-3.5-mini-instruct", "Phi-3-mini-4k"},
	    {"huggyllama/llama-30b", "LLaMA-30B"},
	    {"Qwen/Qwen-1_8B", "Qwen-1.8B"},
	};
	char path[PATH_MAX], name[128], err[512];
	struct cfg_quant_name q;
	for (size_t i = 0; i < sizeof hits / sizeof hits[0]; i++) {
		CU_ASSERT_EQUAL(cfg_model_resolve(hits[i].arg, path, sizeof path, name, sizeof name,
						  &q, err, sizeof err), 0);
		CU_ASSERT_STRING_EQUAL(name, hits[i].name);
		CU_ASSERT_STRING_EQUAL(q.method, "");
	}
	/* a quantised release: its base, and how its weights are stored */
	static const struct {
		const char *arg, *name, *method;
		unsigned bits;
	} quantised[] = {
	    {"unsloth/llama-3-8b-bnb-4bit", "Llama-3-8B", "bitsandbytes", 4},
	    {"unsloth/Meta-Llama-3.1-8B-Instruct-unsloth-bnb-4bit", "Llama-3.1-8B", "bitsandbytes",
	     4},
	    {"Qwen/Qwen-7B-Chat-Int4", "Qwen-7B", "gptq", 4},
	    {"Qwen/Qwen-72B-Chat-Int8", "Qwen-72B", "gptq", 8},
	    {"Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4", "Qwen2.5-7B", "gptq", 4},
	    {"TheBloke/Llama-2-7B-GPTQ", "Llama-2-7B", "gptq", 4},
	    {"Qwen/Qwen2.5-7B-Instruct-AWQ", "Qwen2.5-7B", "awq", 4},
	};
	for (size_t i = 0; i < sizeof quantised / sizeof quantised[0]; i++) {
		CU_ASSERT_EQUAL(cfg_model_resolve(quantised[i].arg, path, sizeof path, name,
						  sizeof name, &q, err, sizeof err), 0);
		CU_ASSERT_STRING_EQUAL(name, quantised[i].name);
		CU_ASSERT_STRING_EQUAL(q.method, quantised[i].method);
		CU_ASSERT_EQUAL(q.bits, quantised[i].bits);
	}
	/* the memo returns the same */
	CU_ASSERT_EQUAL(cfg_model_resolve("Qwen/Qwen-72B-Chat-Int8", path, sizeof path, name,
					  sizeof name, &q, err, sizeof err), 0);
	CU_ASSERT(!strcmp(q.method, "gptq") && q.bits == 8);
	/* a release of no catalog base (Ministral-8B: its words and date dropped), a date not
	 * after such a word, bnb without its 4bit, an unknown repository, a first word; no
	 * Hugging Face cache to find them in, whatever this machine's holds */
	char saved[PATH_MAX];
	env_swap("/nonexistent/tierplan-hub-cache", saved, sizeof saved);
	static const char *const misses[] = {"mistralai/Ministral-8B-Instruct-2410",
					     "Qwen3-30B-A3B-2507", "llama-3-8b-bnb", "foo/bar",
					     "it-7b", "chat"};
	for (size_t i = 0; i < sizeof misses / sizeof misses[0]; i++)
		CU_ASSERT_EQUAL(cfg_model_resolve(misses[i], path, sizeof path, name, sizeof name,
						  NULL, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "unknown model 'chat'"));
	CU_ASSERT_EQUAL(cfg_model_resolve("foo/bar", path, sizeof path, name, sizeof name, NULL,
					  err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no such file, no catalog model is that Hub"));
	env_restore(saved);
	/* a directory that exists reads as a snapshot, even where a Hub id reads the same */
	char dir[] = "/tmp/tierplan-hubXXXXXX", sub[PATH_MAX], cwd[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
	CU_ASSERT_PTR_NOT_NULL_FATAL(getcwd(cwd, sizeof cwd));
	snprintf(sub, sizeof sub, "%s/meta-llama", dir);
	CU_ASSERT_EQUAL(mkdir(sub, 0700), 0);
	snprintf(sub, sizeof sub, "%s/meta-llama/Llama-3.1-8B", dir);
	CU_ASSERT_EQUAL(mkdir(sub, 0700), 0);
	CU_ASSERT_EQUAL(chdir(dir), 0);
	CU_ASSERT_EQUAL(cfg_model_resolve("meta-llama/Llama-3.1-8B", path, sizeof path, name,
					  sizeof name, NULL, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "holds no config.json"));
	CU_ASSERT_EQUAL(chdir(cwd), 0);
	CU_ASSERT_EQUAL(rmdir(sub), 0);
	snprintf(sub, sizeof sub, "%s/meta-llama", dir);
	CU_ASSERT_EQUAL(rmdir(sub), 0);
	CU_ASSERT_EQUAL(rmdir(dir), 0);
}

/* A GPU as CUDA names it and as it is written (case, spaces, dashes and the vendor's words
 * aside, "GB" as the catalog's "g") is its catalog entry, and a host likewise; what reads as no
 * name or alias of one stays unknown; a record's aliases must be short names in an array, and a
 * drive takes none. */
static void gpus_answer_to_their_device_names(void)
{
	static const struct {
		const char *arg, *name;
	} hits[] = {
	    {"NVIDIA A100-SXM4-80GB", "a100-80g"},  {"A100-SXM4-40GB", "a100-40g"},
	    {"NVIDIA A100 80GB PCIe", "a100-pcie-80g"}, {"NVIDIA A100-PCIE-40GB", "a100-pcie-40g"},
	    {"a100-80gb", "a100-80g"},		     {"NVIDIA H100 80GB HBM3", "h100-sxm"},
	    {"NVIDIA H100 PCIe", "h100-pcie"},	     {"H100 NVL", "h100-nvl"},
	    {"h200-sxm", "h200"},		     {"NVIDIA GeForce RTX 4090", "rtx4090"},
	    {"rtx-4090", "rtx4090"},		     {"4090", "rtx4090"},
	    {"RTX A6000", "rtx-a6000"},
	    {"NVIDIA RTX 6000 Ada Generation", "rtx6000ada"},
	    {"Tesla V100-SXM2-32GB", "v100-32g"},    {"Tesla T4", "t4"},
	    {"AMD Instinct MI300X", "mi300x"},	     {"NVIDIA GH200 480GB", "gh200"},
	    {"NVIDIA RTX PRO 6000 Blackwell Server Edition", "rtxpro6000"},
	    {"RTX PRO 6000", "rtxpro6000"},
	};
	struct cfg_gpu g;
	char err[512];
	for (size_t i = 0; i < sizeof hits / sizeof hits[0]; i++) {
		CU_ASSERT_EQUAL(cfg_gpu_get(hits[i].arg, &g, err, sizeof err), 0);
		CU_ASSERT_STRING_EQUAL(g.name, hits[i].name);
	}
	/* another GPU's digits, an A10 (not AWS's A10G), the vendor alone, an H100 of no form,
	 * the 300 W RTX PRO 6000 (its clocks fall under the lower cap) */
	static const char *const misses[] = {"rtx4080", "a10", "nvidia", "H100 80GB",
					     "RTX PRO 6000 Blackwell Max-Q Workstation Edition"};
	for (size_t i = 0; i < sizeof misses / sizeof misses[0]; i++)
		CU_ASSERT_EQUAL(cfg_gpu_get(misses[i], &g, err, sizeof err), -1);
	/* a host by its aliases the same way; a drive has none */
	struct cfg_host h;
	static const char *const hgx[] = {"DGX H100", "nvidia-dgx-h200", "HGX H100", "hgx-8gpu"};
	for (size_t i = 0; i < sizeof hgx / sizeof hgx[0]; i++) {
		CU_ASSERT_EQUAL(cfg_host_get(hgx[i], &h, err, sizeof err), 0);
		CU_ASSERT_STRING_EQUAL(h.name, "hgx-8gpu");
	}
	CU_ASSERT_EQUAL(cfg_host_get("dgx-b200", &h, err, sizeof err), -1);
	cJSON *o = cJSON_Parse("{\"name\":\"d\",\"aliases\":[\"x\"]}");
	struct cfg_flash f;
	CU_ASSERT_EQUAL(cfg_record_parse(CFG_FLASH, o, "t.json", &f, err, sizeof err), -1);
	cJSON_Delete(o);
	static const char *const bad[] = {
	    "{\"name\":\"x\",\"aliases\":\"x1\"}",
	    "{\"name\":\"x\",\"aliases\":[\"a,b\"]}",
	    "{\"name\":\"x\",\"aliases\":[\"\"]}",
	    "{\"name\":\"x\",\"aliases\":[3]}",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CU_ASSERT_EQUAL(parse_gpu(bad[i], err, sizeof err), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, "key 'aliases' (its other names) must be"));
	}
}

/* A Hub id the catalog lacks is read from the Hugging Face cache where huggingface_hub put it
 * ($HF_HUB_CACHE/models--owner--name: the snapshot refs/main names, else its one snapshot), as
 * is that repository's directory given as a path; with two snapshots and no ref, or none, it
 * stays unknown. */
static void hub_cache_snapshots_name_their_config(void)
{
	char root[] = "/tmp/tierplan-cacheXXXXXX", p[PATH_MAX], path[PATH_MAX], name[128];
	char err[512], saved[PATH_MAX];
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(root));
	static const char *const dirs[] = {
	    "models--acme--One-7B", "models--acme--One-7B/snapshots",
	    "models--acme--One-7B/snapshots/a1", "models--acme--One-7B/snapshots/b2",
	    "models--acme--One-7B/refs", "models--acme--Two-1B", "models--acme--Two-1B/snapshots",
	    "models--acme--Two-1B/snapshots/c3", "models--acme--Three-1B",
	    "models--acme--Three-1B/snapshots", "models--acme--Three-1B/snapshots/d4",
	    "models--acme--Three-1B/snapshots/e5"};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		CU_ASSERT_EQUAL_FATAL(mkdir(p, 0700), 0);
	}
	static const char *const files[] = {
	    "models--acme--One-7B/snapshots/a1/config.json",
	    "models--acme--One-7B/snapshots/b2/config.json",
	    "models--acme--Two-1B/snapshots/c3/config.json",
	    "models--acme--Three-1B/snapshots/d4/config.json",
	    "models--acme--Three-1B/snapshots/e5/config.json"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, files[i]);
		put_file(p, "{}");
	}
	snprintf(p, sizeof p, "%s/models--acme--One-7B/refs/main", root);
	put_file(p, "b2\n");
	env_swap(root, saved, sizeof saved);
	/* refs/main's snapshot of two */
	CU_ASSERT_EQUAL(cfg_model_resolve("acme/One-7B", path, sizeof path, name, sizeof name, NULL,
					  err, sizeof err), 0);
	snprintf(p, sizeof p, "%s/models--acme--One-7B/snapshots/b2/config.json", root);
	CU_ASSERT_STRING_EQUAL(path, p);
	CU_ASSERT_STRING_EQUAL(name, "One-7B");
	/* the one snapshot, no ref; and the repository's directory as a path */
	CU_ASSERT_EQUAL(cfg_model_resolve("acme/Two-1B", path, sizeof path, name, sizeof name, NULL,
					  err, sizeof err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(path, "models--acme--Two-1B/snapshots/c3/config.json"));
	snprintf(p, sizeof p, "%s/models--acme--Two-1B/", root);
	CU_ASSERT_EQUAL(cfg_model_resolve(p, path, sizeof path, name, sizeof name, NULL, err,
					  sizeof err), 0);
	CU_ASSERT_PTR_NOT_NULL(strstr(path, "models--acme--Two-1B/snapshots/c3/config.json"));
	CU_ASSERT_STRING_EQUAL(name, "Two-1B");
	/* two snapshots and no ref; a repository the cache lacks */
	CU_ASSERT_EQUAL(cfg_model_resolve("acme/Three-1B", path, sizeof path, name, sizeof name,
					  NULL, err, sizeof err), -1);
	CU_ASSERT_EQUAL(cfg_model_resolve("acme/Four-1B", path, sizeof path, name, sizeof name,
					  NULL, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "the Hugging Face cache holds no snapshot of it"));
	env_restore(saved);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", root, files[i]);
		CU_ASSERT_EQUAL(unlink(p), 0);
	}
	snprintf(p, sizeof p, "%s/models--acme--One-7B/refs/main", root);
	CU_ASSERT_EQUAL(unlink(p), 0);
	for (size_t i = sizeof dirs / sizeof dirs[0]; i-- > 0;) {
		snprintf(p, sizeof p, "%s/%s", root, dirs[i]);
		CU_ASSERT_EQUAL(rmdir(p), 0);
	}
	CU_ASSERT_EQUAL(rmdir(root), 0);
}

int suite_catalog(void)
{
	static const struct test_case c[] = {
		{"catalogs_load_with_the_required_entries", catalogs_load_with_the_required_entries},
		{"every_catalog_value_names_its_source", every_catalog_value_names_its_source},
		{"links_run_at_the_hosts_pcie_generation", links_run_at_the_hosts_pcie_generation},
		{"slc_caches_slow_the_writes_past_them", slc_caches_slow_the_writes_past_them},
		{"bad_records_name_the_key_and_range", bad_records_name_the_key_and_range},
		{"dram_comes_in_the_sizes_dimms_make", dram_comes_in_the_sizes_dimms_make},
		{"gpus_name_catalogued_hosts", gpus_name_catalogued_hosts},
		{"unknown_names_suggest_the_nearest", unknown_names_suggest_the_nearest},
		{"hub_ids_and_variants_name_their_base", hub_ids_and_variants_name_their_base},
		{"hub_cache_snapshots_name_their_config", hub_cache_snapshots_name_their_config},
		{"gpus_answer_to_their_device_names", gpus_answer_to_their_device_names},
		{"prices_come_from_the_prices_file", prices_come_from_the_prices_file},
	};
	return add_suite("catalog", c, (int)(sizeof c / sizeof c[0]));
}
