/* catalog — see catalog.h. One field table per record kind; one loader walks them. */
#include "catalog.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <dirent.h>
#include <stdbool.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"

struct field {
	const char *key;
	enum cfg_unit unit;
	size_t off;
	double min, max;
	int required;
	const char *help;
};

#define G(k, u, lo, hi, req, h) {#k, u, offsetof(struct cfg_gpu, k), lo, hi, req, h}
static const struct field gpu_fields[] = {
	G(memory, CFG_U_SIZE, 1 << 20, 16e12, 1, "device memory"),
	G(hbm_bandwidth, CFG_U_RATE, 1e9, 1e15, 1, "device memory bandwidth"),
	G(bf16_flops, CFG_U_FLOPS, 1e9, 1e18, 1, "dense bf16 peak"),
	G(fp32_flops, CFG_U_FLOPS, 0, 1e18, 0, "fp32 peak without tensor cores; 0 = unknown"),
	G(fp8_flops, CFG_U_FLOPS, 0, 1e18, 0, "dense FP8 tensor-core peak; 0 = none or unknown"),
	G(fp16_only, CFG_U_COUNT, 0, 1, 0,
	  "1: no bf16 tensor cores (Volta, Turing), bf16_flops is the fp16 rate; 0 = bf16 too"),
	G(tdp, CFG_U_POWER, 1, 1e5, 1, "board power limit"),
	G(idle_power, CFG_U_POWER, 0, 1e5, 1, "draw with a context and no work"),
	G(host_link_gen, CFG_U_COUNT, 1, 7, 1, "PCIe generation to the host"),
	G(host_link_lanes, CFG_U_COUNT, 1, 32, 1, "PCIe lanes to the host"),
	G(host_link, CFG_U_RATE, 0, 1e15, 0,
	  "host<->GPU copy rate per direction of a link that is not PCIe (NVLink-C2C); 0 = PCIe"),
	G(gpu_link, CFG_U_RATE, 0, 1e15, 1, "GPU-GPU bandwidth, both directions; 0 = none"),
	/* up to 1.25: a consumer board boosts above the clock its datasheet peak assumes (an RTX
	 * 3090's matmul reaches 76.5 of its 71 TFLOPS) */
	G(gemm_mamf, CFG_U_COUNT, 0, 1.25, 0,
	  "best-shape bf16 matmul rate over the dense peak (MAMF); 0 = unknown"),
	G(gemm_mamf_fp8, CFG_U_COUNT, 0, 1, 0,
	  "best-shape FP8 matmul rate over the FP8 peak; 0 = the bf16 share (gemm_mamf)"),
	G(gemm_mamf_fp32, CFG_U_COUNT, 0, 1.25, 0,
	  "best-shape fp32 matmul rate (CUDA cores) over fp32_flops; 0 = unknown"),
	G(gemm_sustained, CFG_U_COUNT, 0, 1, 0,
	  "a training step's GEMM rate over the dense peak, where a source publishes it; 0 = "
	  "from the MAMF"),
	G(flash_attention, CFG_U_COUNT, 0, 1, 0,
	  "FlashAttention-2 rate over the dense peak; 0 = as the GEMMs"),
	G(flash_attention_bwd, CFG_U_COUNT, 0, 1, 0,
	  "FlashAttention-2's backward rate over the dense peak; 0 = as its forward"),
	G(cudnn_attention, CFG_U_COUNT, 0, 1, 0,
	  "cuDNN's fused attention rate over the dense peak; 0 = as FlashAttention-2's"),
	G(cudnn_attention_bwd, CFG_U_COUNT, 0, 1, 0,
	  "cuDNN's fused attention backward rate over the dense peak; 0 = as its forward"),
	G(sm_count, CFG_U_COUNT, 0, 4096, 0,
	  "streaming multiprocessors (what --tp-comm-overlap's kernels take a share of); 0 = "
	  "unknown"),
	G(l2_cache, CFG_U_SIZE, 0, 16e9, 0,
	  "data a read-and-write kernel's two arrays may hold and still run in the L2 cache, "
	  "measured; 0 = not measured"),
	G(l2_bandwidth, CFG_U_RATE, 0, 1e15, 0,
	  "such a kernel's L2 rate once its fixed time is paid, measured; 0 = not measured"),
	G(l2_kernel_fixed, CFG_U_TIME, 0, 1e-3, 0,
	  "such a kernel's fixed time, back to back with the one before it; 0 = none measured"),
};
static const struct field gpu_price_fields[] = {
	G(price, CFG_U_USD, 0, 1e9, 1, "purchase price"),
	G(cloud_per_hour, CFG_U_USD, 0, 1e6, 1, "cloud price per GPU-hour"),
};
#undef G

#define F(k, u, lo, hi, req, h) {#k, u, offsetof(struct cfg_flash, k), lo, hi, req, h}
static const struct field flash_fields[] = {
	F(capacity, CFG_U_SIZE, 1e9, 1e15, 1, "usable capacity"),
	F(read_bandwidth, CFG_U_RATE, 1e6, 1e12, 1, "sequential read bandwidth"),
	F(write_bandwidth, CFG_U_RATE, 1e6, 1e12, 1, "sequential write bandwidth"),
	F(slc_cache, CFG_U_SIZE, 0, 1e15, 0,
	  "pseudo-SLC write cache a consumer drive writes at write_bandwidth; 0 = none"),
	F(write_after_cache, CFG_U_RATE, 0, 1e12, 0,
	  "sequential write bandwidth once the SLC cache is full"),
	F(latency, CFG_U_TIME, 0, 1, 1, "access latency"),
	F(tbw, CFG_U_SIZE, 0, 1e21, 0, "rated terabytes written"),
	F(dwpd, CFG_U_COUNT, 0, 1e4, 0, "rated drive writes per day"),
	F(warranty_years, CFG_U_COUNT, 1, 50, 1, "warranty period of the rating"),
	F(active_power, CFG_U_POWER, 0, 1e4, 1, "draw while reading or writing"),
	F(idle_power, CFG_U_POWER, 0, 1e4, 1, "idle draw"),
};
static const struct field flash_price_fields[] = {
	F(price, CFG_U_USD, 0, 1e9, 1, "purchase price"),
};
#undef F

#define H(k, u, lo, hi, req, h) {#k, u, offsetof(struct cfg_host, k), lo, hi, req, h}
static const struct field host_fields[] = {
	H(gpu_slots, CFG_U_COUNT, 1, 72, 1, "GPUs per node (72: an NVL72 rack's NVLink domain)"),
	H(cpu_cores, CFG_U_COUNT, 1, 4096, 1, "CPU cores per node"),
	H(cpu_power, CFG_U_POWER, 1, 1e5, 1, "CPU package power under load"),
	H(cpu_idle_power, CFG_U_POWER, 0, 1e5, 1, "CPU package power idle"),
	H(cpu_adam_rate_per_core, CFG_U_COUNT, 1e3, 1e12, 1, "CPU AdamW params/s per core"),
	H(cpu_launch_scale, CFG_U_COUNT, 0, 100, 0,
	  "host time PyTorch takes to issue an op over a Xeon Platinum 8480's (a DGX H100's); 0 = "
	  "the same"),
	H(dram, CFG_U_SIZE, 1 << 30, 1e15, 1, "default DRAM per node"),
	H(dram_max, CFG_U_SIZE, 1 << 30, 1e15, 1, "most DRAM the node takes"),
	H(dram_slots, CFG_U_COUNT, 0, 256, 1,
	  "DIMM slots per node; 0 = its DRAM fixed at 'dram' (soldered, a VM's, as installed)"),
	H(dram_channels, CFG_U_COUNT, 0, 128, 1,
	  "memory channels per node, each taking dram_slots / dram_channels DIMMs; 0 with "
	  "dram_slots 0"),
	H(dram_ddr, CFG_U_COUNT, 0, 5, 1,
	  "DDR generation of its DIMMs, 4 or 5 (which capacities exist); 0 with dram_slots 0"),
	H(dram_bandwidth, CFG_U_RATE, 1e9, 1e14, 1, "DRAM bandwidth"),
	H(dram_power_per_gb, CFG_U_COUNT, 0, 100, 1, "DRAM watts per GB"),
	H(dram_reserve, CFG_U_SIZE, 0, 1e15, 0,
	  "DRAM per node the OS, the framework and its data loader keep, as measured on the node; "
	  "0 = unmeasured (32 GiB kept back)"),
	H(flash_bays, CFG_U_COUNT, 0, 1024, 1, "NVMe bays per node"),
	H(flash_uplink, CFG_U_RATE, 0, 1e14, 1, "shared uplink of the drive array; 0 = none"),
	H(pcie_gen, CFG_U_COUNT, 0, 6, 0,
	  "PCIe generation of the node's root ports and switches: a GPU's or drive's link runs at "
	  "the lower of its own and this; 0 = unstated"),
	H(network_per_gpu, CFG_U_RATE, 0, 1e14, 1, "inter-node bandwidth per GPU; 0 = one node"),
	H(gpus_per_switch, CFG_U_COUNT, 0, 64, 0, "GPUs behind one PCIe switch; 0 = direct to CPU"),
	H(switch_uplink, CFG_U_RATE, 0, 1e14, 0, "PCIe switch uplink per direction; 0 = none"),
	H(base_power, CFG_U_POWER, 0, 1e6, 1, "platform draw outside GPUs, CPUs, DRAM, drives"),
};
static const struct field host_price_fields[] = {
	H(price, CFG_U_USD, 0, 1e9, 1, "node price without GPUs, DRAM and drives"),
	H(dram_price_per_gb, CFG_U_USD, 0, 1e4, 1, "DRAM USD per GB"),
};
#undef H

static const struct {
	const char *file, *array, *what;
	const struct field *fields;
	int nfields;
	size_t size;
} kinds[] = {
	[CFG_GPU] = {"gpus.json", "gpus", "gpu", gpu_fields,
		     (int)(sizeof gpu_fields / sizeof gpu_fields[0]), sizeof(struct cfg_gpu)},
	[CFG_FLASH] = {"flash.json", "flash", "flash", flash_fields,
		       (int)(sizeof flash_fields / sizeof flash_fields[0]),
		       sizeof(struct cfg_flash)},
	[CFG_HOST] = {"hosts.json", "hosts", "host", host_fields,
		      (int)(sizeof host_fields / sizeof host_fields[0]), sizeof(struct cfg_host)},
	[CFG_GPU_PRICE] = {"prices.json", "gpus", "gpu price", gpu_price_fields,
			   (int)(sizeof gpu_price_fields / sizeof gpu_price_fields[0]),
			   sizeof(struct cfg_gpu)},
	[CFG_FLASH_PRICE] = {"prices.json", "flash", "flash price", flash_price_fields,
			     (int)(sizeof flash_price_fields / sizeof flash_price_fields[0]),
			     sizeof(struct cfg_flash)},
	[CFG_HOST_PRICE] = {"prices.json", "hosts", "host price", host_price_fields,
			    (int)(sizeof host_price_fields / sizeof host_price_fields[0]),
			    sizeof(struct cfg_host)},
};

/* the price kind of each hardware kind */
static const enum cfg_kind price_kind[] = {[CFG_GPU] = CFG_GPU_PRICE,
					   [CFG_FLASH] = CFG_FLASH_PRICE,
					   [CFG_HOST] = CFG_HOST_PRICE};

/* --prices of the calling thread: each sweep worker resolves its own point's flags, so the
 * override is per thread and nothing here is shared but read-only data */
static _Thread_local char prices_override[PATH_MAX];

/* name and description lead every record struct */
struct named {
	char name[64], description[128];
};

#define CATALOG_MAX_BYTES (8u << 20)

static char exe_dir[PATH_MAX - 64];
static pthread_once_t exe_dir_once = PTHREAD_ONCE_INIT;

/* ../configs beside the binary, else ./configs: found once, read-only after */
static void find_exe_dir(void)
{
	char exe[PATH_MAX - 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);

	if (n > 0) {
		exe[n] = '\0';
		char *slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			/* bin/tierplan and build/asan/bin/tierplan alike: the first configs/ with a
			 * GPU catalog at most three folders up */
			char probe[PATH_MAX + 64];
			for (int up = 1; up <= 3; up++) {
				int k = snprintf(exe_dir, sizeof exe_dir, "%s", exe);
				for (int i = 0; i < up && k > 0 && (size_t)k < sizeof exe_dir; i++)
					k += snprintf(exe_dir + k, sizeof exe_dir - (size_t)k, "/..");
				if (k > 0 && (size_t)k < sizeof exe_dir)
					snprintf(exe_dir + k, sizeof exe_dir - (size_t)k, "/configs");
				snprintf(probe, sizeof probe, "%s/gpus.json", exe_dir);
				if (access(probe, R_OK) == 0)
					return;
			}
		}
	}
	snprintf(exe_dir, sizeof exe_dir, "configs");
}

const char *cfg_dir(void)
{
	const char *env = getenv("TIERPLAN_CONFIGS");

	if (env && *env)
		return env;
	pthread_once(&exe_dir_once, find_exe_dir);
	return exe_dir;
}

/* Edits from a to b, case ignored: insertions, deletions, substitutions and swaps of two
 * neighbours (the optimal string alignment distance: sqe is one edit from seq, not two). */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	int d[64][64];

	if (la > 62 || lb > 62)
		return 99;
	for (int i = 0; i <= la; i++)
		for (int j = 0; j <= lb; j++) {
			if (!i || !j) {
				d[i][j] = i + j;
				continue;
			}
			int ai = tolower((unsigned char)a[i - 1]);
			int bj = tolower((unsigned char)b[j - 1]);
			int v = d[i - 1][j - 1] + (ai != bj);
			v = d[i - 1][j] + 1 < v ? d[i - 1][j] + 1 : v;
			v = d[i][j - 1] + 1 < v ? d[i][j - 1] + 1 : v;
			if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/* The digits of s in order into d (n bytes): what names a product's generation and size. */
static void digits_of(const char *s, char *d, size_t n)
{
	size_t k = 0;
	for (; *s && k + 1 < n; s++)
		if (isdigit((unsigned char)*s))
			d[k++] = *s;
	d[k] = '\0';
}

/* The letters of s before its first digit, lower case, into f (n bytes): a product's family
 * where they are one or two (a100, h100, gh200, mi300x). */
static void family_of(const char *s, char *f, size_t n)
{
	size_t k = 0;
	for (; *s && !isdigit((unsigned char)*s) && k + 1 < n; s++)
		if (isalpha((unsigned char)*s))
			f[k++] = (char)tolower((unsigned char)*s);
	f[k] = '\0';
}

const char *cfg_did_you_mean(const char *s, const char *const *cands, int n)
{
	const char *best = NULL;
	int bestd = 3;
	char ds[64], dc[64], fs[8], fc[8];

	digits_of(s, ds, sizeof ds);
	/* a product's name (one with a model number) and a suffix of the user's own after a dash
	 * (h200-sxm for h200): the longest such. A word's (seq in seq-length, num_experts in
	 * num_experts_per_tok) is another setting, not this one. */
	for (int i = 0; i < n; i++) {
		size_t lc = strlen(cands[i]);
		digits_of(cands[i], dc, sizeof dc);
		if (*dc && strncasecmp(s, cands[i], lc) == 0 && s[lc] == '-' &&
		    (!best || lc > strlen(best)))
			best = cands[i];
	}
	if (best)
		return best;
	/* a model number the user gave without the letters around it (4090, a6000): the one
	 * product name that holds it, not as part of a longer number (a10 in a100-80g) */
	size_t ls = strlen(s);
	int holders = 0;
	for (int i = 0; *ds && i < n; i++) {
		const char *at = strcasestr(cands[i], s);
		if (at && !(at > cands[i] && isdigit((unsigned char)at[-1])) &&
		    !isdigit((unsigned char)at[ls]) && holders++ == 0)
			best = cands[i];
	}
	if (holders == 1)
		return best; /* not 6000: the RTX 6000 Ada, the RTX A6000 or the RTX PRO 6000 */
	best = NULL;
	family_of(s, fs, sizeof fs);
	for (int i = 0; i < n; i++) {
		/* other digits name another product (h100 for h200), not a misspelling, and so does
		 * another family letter before the same digits (a100 for h100, gh200 for h200) */
		digits_of(cands[i], dc, sizeof dc);
		if (*ds && *dc && strcmp(ds, dc) != 0)
			continue;
		family_of(cands[i], fc, sizeof fc);
		if (*ds && *dc && *fs && *fc && strlen(fs) <= 2 && strlen(fc) <= 2 &&
		    strcmp(fs, fc) != 0)
			continue;
		/* and no more edits than half its length: two letters are not a misspelling of two
		 * others (gb is not l4) */
		int d = edit_distance(s, cands[i]);
		if (d < bestd && 2 * (size_t)d <= ls) {
			bestd = d;
			best = cands[i];
		}
	}
	return best;
}

/* Whether name begins with arg (its first la characters, case ignored) and goes on past it. */
static bool goes_on(const char *name, const char *arg, size_t la)
{
	return strncasecmp(name, arg, la) == 0 && name[la];
}

const char *cfg_near_hint(const char *near, char *buf, size_t n)
{
	if (near)
		snprintf(buf, n, " (did you mean '%s'?)", near);
	else if (n)
		buf[0] = '\0';
	return buf;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);
	return ls >= lx && strcmp(s + ls - lx, suffix) == 0;
}

static const struct field *find_field(enum cfg_kind kind, const char *key)
{
	for (int i = 0; i < kinds[kind].nfields; i++)
		if (strcmp(kinds[kind].fields[i].key, key) == 0)
			return &kinds[kind].fields[i];
	return NULL;
}

/* The aliases of a GPU or host record (CFG_ALIASES bytes); NULL for a drive, which has none. */
static const char *record_aliases(enum cfg_kind kind, const void *rec)
{
	return kind == CFG_GPU ? ((const struct cfg_gpu *)rec)->aliases
	       : kind == CFG_HOST ? ((const struct cfg_host *)rec)->aliases
				  : NULL;
}

/* A key whose value is a name, not a quantity: a GPU's usual node ("host"), and a GPU's or a
 * host's other names ("aliases"). */
static bool name_key(enum cfg_kind kind, const char *key)
{
	return (kind == CFG_GPU && strcmp(key, "host") == 0) ||
	       (kind != CFG_FLASH && strcmp(key, "aliases") == 0);
}

/* A record's "aliases": an array of strings, each 1 to 63 characters without a comma, joined
 * into its aliases (record_aliases). 0, or -1 and err. */
static int read_aliases(enum cfg_kind kind, const cJSON *it, const char *origin, void *rec,
			char *err, size_t errlen)
{
	const cJSON *a, *list = cJSON_IsArray(it) ? it : NULL;
	char *out = (char *)record_aliases(kind, rec); /* rec is the record being filled */
	size_t used = 0;
	bool ok = list != NULL;
	cJSON_ArrayForEach(a, list)
	{
		size_t n = cJSON_IsString(a) ? strlen(a->valuestring) : 0;
		ok = n > 0 && n < 64 && !strchr(a->valuestring, ',') && used + n + 1 < CFG_ALIASES;
		if (!ok)
			break;
		used += (size_t)snprintf(out + used, CFG_ALIASES - used, "%s%s", used ? "," : "",
					 a->valuestring);
	}
	if (!ok)
		snprintf(err, errlen,
			 "%s: %s '%s': key 'aliases' (its other names) must be an array of names "
			 "of 1 to 63 characters without commas, %d characters in all at most",
			 origin, kinds[kind].what, ((const struct named *)rec)->name,
			 CFG_ALIASES - 1);
	return ok ? 0 : -1;
}

int cfg_record_parse(enum cfg_kind kind, const cJSON *obj, const char *origin, void *rec,
		     char *err, size_t errlen)
{
	const struct field *fields = kinds[kind].fields;
	int nf = kinds[kind].nfields;
	struct named *nm = rec;
	const cJSON *it;
	unsigned seen = 0;

	memset(rec, 0, kinds[kind].size);
	if (!cJSON_IsObject(obj)) {
		snprintf(err, errlen, "%s: a %s record must be a JSON object", origin,
			 kinds[kind].what);
		return -1;
	}
	it = cJSON_GetObjectItemCaseSensitive(obj, "name");
	if (!cJSON_IsString(it) || !it->valuestring[0] || strlen(it->valuestring) >= sizeof nm->name) {
		snprintf(err, errlen, "%s: %s record needs a 'name' string of 1 to %zu characters",
			 origin, kinds[kind].what, sizeof nm->name - 1);
		return -1;
	}
	snprintf(nm->name, sizeof nm->name, "%s", it->valuestring);
	it = cJSON_GetObjectItemCaseSensitive(obj, "description");
	if (cJSON_IsString(it))
		snprintf(nm->description, sizeof nm->description, "%s", it->valuestring);
	/* a GPU's usual node is a host catalog name, resolved where --host auto is */
	it = kind == CFG_GPU ? cJSON_GetObjectItemCaseSensitive(obj, "host") : NULL;
	if (it) {
		struct cfg_gpu *g = rec;
		if (!cJSON_IsString(it) || !it->valuestring[0] ||
		    strlen(it->valuestring) >= sizeof g->host) {
			snprintf(err, errlen,
				 "%s: gpu '%s': key 'host' (the node it usually sits in) must be a "
				 "host name of 1 to %zu characters",
				 origin, nm->name, sizeof g->host - 1);
			return -1;
		}
		snprintf(g->host, sizeof g->host, "%s", it->valuestring);
	}
	it = record_aliases(kind, rec) ? cJSON_GetObjectItemCaseSensitive(obj, "aliases") : NULL;
	if (it && read_aliases(kind, it, origin, rec, err, errlen))
		return -1;

	cJSON_ArrayForEach(it, obj)
	{
		const char *key = it->string;
		const struct field *f;
		char base[64], msg[160];
		double v;

		if (!key || strcmp(key, "name") == 0 || strcmp(key, "description") == 0 ||
		    strcmp(key, "_comment") == 0 || name_key(kind, key))
			continue;
		if (ends_with(key, "_source")) {
			snprintf(base, sizeof base, "%.*s", (int)(strlen(key) - 7), key);
			if (!find_field(kind, base) && !name_key(kind, base)) {
				snprintf(err, errlen, "%s: %s '%s': '%s' is the source of unknown key '%s'",
					 origin, kinds[kind].what, nm->name, key, base);
				return -1;
			}
			continue;
		}
		f = find_field(kind, key);
		if (!f) {
			const char *cands[32];
			for (int i = 0; i < nf; i++)
				cands[i] = fields[i].key;
			char hint[96];
			snprintf(err, errlen, "%s: %s '%s': unknown key '%s'%s", origin,
				 kinds[kind].what, nm->name, key,
				 cfg_near_hint(cfg_did_you_mean(key, cands, nf), hint, sizeof hint));
			return -1;
		}
		if (cJSON_IsString(it)) {
			if (cfg_parse_quantity(it->valuestring, f->unit, &v, msg, sizeof msg) < 0) {
				snprintf(err, errlen, "%s: %s '%s': key '%s': %s", origin,
					 kinds[kind].what, nm->name, key, msg);
				return -1;
			}
		} else if (cJSON_IsNumber(it)) {
			v = it->valuedouble;
		} else {
			snprintf(err, errlen, "%s: %s '%s': key '%s' must be a number or a string with "
					      "a unit (%s)",
				 origin, kinds[kind].what, nm->name, key, cfg_unit_suffixes(f->unit));
			return -1;
		}
		if (!(v >= f->min && v <= f->max)) {
			snprintf(err, errlen, "%s: %s '%s': key '%s' (%s) is %g, allowed %g to %g",
				 origin, kinds[kind].what, nm->name, key, f->help, v, f->min, f->max);
			return -1;
		}
		*(double *)((char *)rec + f->off) = v;
		seen |= 1u << (f - fields);
	}
	for (int i = 0; i < nf; i++)
		if (fields[i].required && !(seen & (1u << i))) {
			snprintf(err, errlen, "%s: %s '%s': required key '%s' (%s) is missing", origin,
				 kinds[kind].what, nm->name, fields[i].key, fields[i].help);
			return -1;
		}
	/* a PCIe generation is a whole number: a link trains to one */
	double gen = kind == CFG_HOST  ? ((struct cfg_host *)rec)->pcie_gen
		     : kind == CFG_GPU ? ((struct cfg_gpu *)rec)->host_link_gen
				       : 0;
	if (gen != floor(gen)) {
		snprintf(err, errlen,
			 "%s: %s '%s': key '%s' is %g: a PCIe generation is a whole number", origin,
			 kinds[kind].what, nm->name,
			 kind == CFG_HOST ? "pcie_gen" : "host_link_gen", gen);
		return -1;
	}
	if (kind == CFG_HOST) {
		const struct cfg_host *h = rec;
		bool fixed = h->dram_slots == 0;
		if (fixed ? h->dram_channels != 0 || h->dram_ddr != 0
			  : h->dram_channels < 1 || h->dram_slots != floor(h->dram_slots) ||
				    h->dram_channels != floor(h->dram_channels) ||
				    fmod(h->dram_slots, h->dram_channels) != 0 ||
				    (h->dram_ddr != 4 && h->dram_ddr != 5)) {
			snprintf(err, errlen,
				 "%s: host '%s': 'dram_slots' (%g) is a whole multiple of "
				 "'dram_channels' (%g), with 'dram_ddr' (%g) 4 or 5; or all three "
				 "are 0, the DRAM fixed at 'dram'",
				 origin, nm->name, h->dram_slots, h->dram_channels, h->dram_ddr);
			return -1;
		}
		if (h->dram_reserve >= h->dram_max) {
			char r[32], m[32];
			snprintf(err, errlen,
				 "%s: host '%s': 'dram_reserve' (%s) leaves nothing of the most "
				 "DRAM the node takes ('dram_max', %s): give less than that",
				 origin, nm->name, cfg_fmt_bytes(h->dram_reserve, r, sizeof r),
				 cfg_fmt_bytes(h->dram_max, m, sizeof m));
			return -1;
		}
	}
	if (kind == CFG_FLASH) {
		struct cfg_flash *fl = rec;
		if ((fl->tbw > 0) == (fl->dwpd > 0)) {
			snprintf(err, errlen, "%s: flash '%s': give exactly one of 'tbw' and 'dwpd'",
				 origin, nm->name);
			return -1;
		}
		if ((fl->slc_cache > 0) != (fl->write_after_cache > 0) ||
		    fl->write_after_cache > fl->write_bandwidth) {
			snprintf(err, errlen,
				 "%s: flash '%s': 'slc_cache' and 'write_after_cache' go together, "
				 "and a full cache writes no faster than 'write_bandwidth' (got "
				 "%g B, %g B/s against %g B/s)",
				 origin, nm->name, fl->slc_cache, fl->write_after_cache,
				 fl->write_bandwidth);
			return -1;
		}
	}
	return 0;
}

/* Parses a file holding either a catalog ({"<array>": [...]}) or one record. */
static cJSON *load_json(const char *path, char *err, size_t errlen)
{
	char *text = cfg_read_file(path, "catalog", CATALOG_MAX_BYTES, err, errlen);
	cJSON *root;

	if (!text)
		return NULL;
	root = cJSON_Parse(text);
	if (!root)
		snprintf(err, errlen, "catalog '%s': not valid JSON (near byte %ld)", path,
			 (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - text : 0));
	free(text);
	return root;
}

/* Category's band in the record at path: 1, 0 none there, -1 + err malformed. */
static int accuracy_band(const cJSON *root, const char *path, const char *category,
			 struct cfg_band *b, char *err, size_t errlen)
{
	const cJSON *cats = cJSON_GetObjectItemCaseSensitive(root, "categories");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(cats, category);
	if (!c)
		return 0;
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(c, "measured_over_predicted");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "cases");
	const cJSON *lo = cJSON_GetArrayItem(r, 0), *hi = cJSON_GetArrayItem(r, 1);
	if (cJSON_GetArraySize(r) != 2 || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) ||
	    !cJSON_IsNumber(n) || !(lo->valuedouble >= 0) || !(hi->valuedouble >= lo->valuedouble) ||
	    !(hi->valuedouble < 100) || !(n->valuedouble >= 1) || !(n->valuedouble < 1e6)) {
		snprintf(err, errlen,
			 "accuracy record '%s': category '%s' needs \"measured_over_predicted\": "
			 "[low, high] (0 <= low <= high < 100; validate writes two decimals) and "
			 "\"cases\" (1 or more)",
			 path, category);
		return -1;
	}
	*b = (struct cfg_band){lo->valuedouble, hi->valuedouble, (int)n->valuedouble};
	return 1;
}

/* The accuracy record as last read and the path it was read from, or that there was none there
 * (a report, and each row of a sweep, asks for a band: read once, not each time); kept for the
 * process. A record that would not parse is read again, to name its fault each time. */
static pthread_mutex_t accuracy_mu = PTHREAD_MUTEX_INITIALIZER;
static char accuracy_path[PATH_MAX];
static cJSON *accuracy_root;
static bool accuracy_none;

int cfg_accuracy_get(const char *category, struct cfg_band *b, char *err, size_t errlen)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/accuracy.json", cfg_dir());
	pthread_mutex_lock(&accuracy_mu);
	if (strcmp(path, accuracy_path) || (!accuracy_root && !accuracy_none)) {
		struct stat st;
		cJSON_Delete(accuracy_root);
		accuracy_root = NULL;
		/* a configs directory of one's own may have none */
		accuracy_none = stat(path, &st) != 0;
		if (!accuracy_none)
			accuracy_root = load_json(path, err, errlen);
		snprintf(accuracy_path, sizeof accuracy_path, "%s", path);
	}
	int rc = accuracy_none ? 0
		 : accuracy_root ? accuracy_band(accuracy_root, path, category, b, err, errlen)
				 : -1;
	pthread_mutex_unlock(&accuracy_mu);
	return rc;
}

void cfg_set_prices(const char *path)
{
	snprintf(prices_override, sizeof prices_override, "%s", path ? path : "");
}

const char *cfg_prices_path(void)
{
	static _Thread_local char path[PATH_MAX];

	if (prices_override[0])
		return prices_override;
	snprintf(path, sizeof path, "%s/prices.json", cfg_dir());
	return path;
}

/* Fills the price fields of a hardware record from the prices file, by name. */
static int apply_prices(enum cfg_kind kind, void *rec, const cJSON *prices, const char *path,
			char *err, size_t errlen)
{
	enum cfg_kind pk = price_kind[kind];
	const struct named *nm = rec;
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(prices, kinds[pk].array), *it;
	union {
		struct cfg_gpu g;
		struct cfg_flash f;
		struct cfg_host h;
	} tmp;

	cJSON_ArrayForEach(it, arr)
	{
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(it, "name");
		if (!cJSON_IsString(name) || strcasecmp(name->valuestring, nm->name) != 0)
			continue;
		if (cfg_record_parse(pk, it, path, &tmp, err, errlen) < 0)
			return -1;
		for (int i = 0; i < kinds[pk].nfields; i++) {
			size_t off = kinds[pk].fields[i].off;
			*(double *)((char *)rec + off) = *(double *)((char *)&tmp + off);
		}
		return 0;
	}
	snprintf(err, errlen, "prices '%s': no entry for %s '%s' in '%s' (add one, or pass --prices "
			      "FILE)",
		 path, kinds[kind].what, nm->name, kinds[pk].array);
	return -1;
}

/* A record file given by path may carry its own prices (a rented VM, a quote): those keys (and
 * their _source) move out of obj into a {"name", price keys} object for the price kind; NULL
 * when obj has none, and the price list applies. */
static cJSON *own_prices(enum cfg_kind kind, cJSON *obj)
{
	enum cfg_kind pk = price_kind[kind];
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(obj, "name");
	cJSON *own = NULL;
	for (int i = 0; i < kinds[pk].nfields; i++) {
		char src[80];
		const char *key = kinds[pk].fields[i].key;
		snprintf(src, sizeof src, "%s_source", key);
		cJSON *v = cJSON_DetachItemFromObjectCaseSensitive(obj, key);
		cJSON *s = cJSON_DetachItemFromObjectCaseSensitive(obj, src);
		if (!v) {
			cJSON_Delete(s);
			continue;
		}
		if (!own) {
			own = cJSON_CreateObject();
			cJSON_AddItemToObject(own, "name", cJSON_Duplicate(name, 0));
		}
		cJSON_AddItemToObject(own, key, v);
		if (s)
			cJSON_AddItemToObject(own, src, s);
	}
	return own;
}

static cJSON *load_prices(char *err, size_t errlen)
{
	return load_json(cfg_prices_path(), err, errlen);
}

/* Loads a catalog; with prices, every record is priced (an unpriced one is an error). */
static int catalog_load(enum cfg_kind kind, bool priced, void **records, int *n, char *err,
			size_t errlen)
{
	char path[PATH_MAX];
	cJSON *root, *arr, *it, *prices = NULL;
	char *out = NULL;
	int count = 0, rc = -1;

	snprintf(path, sizeof path, "%s/%s", cfg_dir(), kinds[kind].file);
	root = load_json(path, err, errlen);
	if (!root)
		return -1;
	if (priced && !(prices = load_prices(err, errlen)))
		goto out;
	arr = cJSON_GetObjectItemCaseSensitive(root, kinds[kind].array);
	if (!cJSON_IsArray(arr)) {
		snprintf(err, errlen, "catalog '%s': expected an array '%s'", path, kinds[kind].array);
		goto out;
	}
	out = calloc((size_t)cJSON_GetArraySize(arr) + 1, kinds[kind].size);
	if (!out) {
		snprintf(err, errlen, "out of memory loading '%s'", path);
		goto out;
	}
	cJSON_ArrayForEach(it, arr)
	{
		void *rec = out + (size_t)count * kinds[kind].size;
		if (cfg_record_parse(kind, it, path, rec, err, errlen) < 0 ||
		    (priced && apply_prices(kind, rec, prices, cfg_prices_path(), err, errlen) < 0))
			goto out;
		count++;
	}
	*records = out;
	*n = count;
	out = NULL;
	rc = 0;
out:
	free(out);
	cJSON_Delete(prices);
	cJSON_Delete(root);
	return rc;
}

int cfg_catalog_load(enum cfg_kind kind, void **records, int *n, char *err, size_t errlen)
{
	return catalog_load(kind, true, records, n, err, errlen);
}

/*
 * A GPU's or a host's name as written anywhere reduced to what tells them apart: lower case, its
 * words (runs of letters and digits) run together, the vendor's and the product line's words
 * dropped (nvidia, geforce, tesla, amd, instinct) and a memory size's "gb" as the catalog's "g":
 * "NVIDIA GeForce RTX 4090", "rtx-4090" and "rtx4090" all read rtx4090, "A100-80GB" a10080g,
 * "NVIDIA DGX H100" dgxh100. Into out (n bytes).
 */
static void hw_key(const char *s, char *out, size_t n)
{
	static const char *const vendor[] = {"nvidia", "geforce", "tesla", "amd", "instinct"};
	size_t used = 0;
	out[0] = '\0';
	while (*s) {
		size_t len = 0;
		while (s[len] && isalnum((unsigned char)s[len]))
			len++;
		bool drop = len == 0;
		for (size_t i = 0; !drop && i < sizeof vendor / sizeof vendor[0]; i++)
			drop = strlen(vendor[i]) == len && !strncasecmp(s, vendor[i], len);
		/* 80GB: 80g */
		size_t keep = len;
		if (len > 2 && isdigit((unsigned char)s[len - 3]) &&
		    !strncasecmp(s + len - 2, "gb", 2))
			keep = len - 1;
		for (size_t i = 0; !drop && i < keep && used + 1 < n; i++)
			out[used++] = (char)tolower((unsigned char)s[i]);
		out[used] = '\0';
		s += len;
		while (*s && !isalnum((unsigned char)*s))
			s++;
	}
}

/* Whether arg names the GPU or host of catalog name `name` with `aliases` (comma-separated):
 * the same hw_key as the name or as one of them. */
static bool hw_named(const char *arg, const char *name, const char *aliases)
{
	char a[128], b[128], one[64];
	hw_key(arg, a, sizeof a);
	hw_key(name, b, sizeof b);
	if (!a[0])
		return false; /* no name at all: "nvidia" */
	if (!strcmp(a, b))
		return true;
	for (const char *p = aliases; *p;) {
		size_t len = strcspn(p, ",");
		snprintf(one, sizeof one, "%.*s", (int)len, p);
		hw_key(one, b, sizeof b);
		if (!strcmp(a, b))
			return true;
		p += len + (p[len] == ',');
	}
	return false;
}

static int record_load(enum cfg_kind kind, const char *arg, void *rec, char *err, size_t errlen)
{
	void *all = NULL;
	int n = 0, rc = -1;

	if (cfg_is_path(arg)) {
		cJSON *root = load_json(arg, err, errlen);
		if (!root)
			return -1;
		cJSON *prices = NULL, *own = own_prices(kind, root);
		rc = cfg_record_parse(kind, root, arg, rec, err, errlen);
		if (rc == 0 && own) { /* its own prices, all of them */
			cJSON *list = cJSON_CreateObject(), *arr = cJSON_CreateArray();
			cJSON_AddItemToArray(arr, own);
			cJSON_AddItemToObject(list, kinds[price_kind[kind]].array, arr);
			own = NULL;
			rc = apply_prices(kind, rec, list, arg, err, errlen);
			cJSON_Delete(list);
		} else if (rc == 0) {
			if (!(prices = load_prices(err, errlen)))
				rc = -1;
			else
				rc = apply_prices(kind, rec, prices, cfg_prices_path(), err, errlen);
		}
		cJSON_Delete(own);
		cJSON_Delete(prices);
		cJSON_Delete(root);
		return rc;
	}
	if (catalog_load(kind, false, &all, &n, err, errlen) < 0)
		return -1;
	const char *names[256] = {0};
	int nn = 0;
	for (int i = 0; i < n; i++) {
		const struct named *r = (const void *)((char *)all + (size_t)i * kinds[kind].size);
		const char *al = record_aliases(kind, r);
		if (strcasecmp(r->name, arg) == 0 || (al && hw_named(arg, r->name, al))) {
			cJSON *prices = load_prices(err, errlen);
			memcpy(rec, r, kinds[kind].size);
			rc = prices ? apply_prices(kind, rec, prices, cfg_prices_path(), err, errlen)
				    : -1;
			cJSON_Delete(prices);
			goto out;
		}
		if (nn < 256)
			names[nn++] = r->name;
	}
	/* a family name ("h100", "a100"): the one variant it names, or the list of them, where
	 * no other name begins with it (rtx begins rtx4090 and five more beside rtx-a6000) */
	int variants = 0, begins = 0, which = -1;
	size_t la = strlen(arg);
	for (int i = 0; i < nn; i++)
		if (goes_on(names[i], arg, la)) {
			begins++;
			if (names[i][la] == '-') {
				variants++;
				which = i;
			}
		}
	if (variants == 1 && begins == 1) {
		cJSON *prices = load_prices(err, errlen);
		memcpy(rec, (char *)all + (size_t)which * kinds[kind].size, kinds[kind].size);
		rc = prices ? apply_prices(kind, rec, prices, cfg_prices_path(), err, errlen) : -1;
		cJSON_Delete(prices);
		goto out;
	}
	if (variants > 1 && begins == variants) {
		size_t used = (size_t)snprintf(err, errlen, "%s '%s' has several variants:",
					       kinds[kind].what, arg);
		for (int i = 0; i < nn && used < errlen; i++)
			if (goes_on(names[i], arg, la) && names[i][la] == '-')
				used += (size_t)snprintf(err + used, errlen - used, " %s", names[i]);
		if (used < errlen)
			snprintf(err + used, errlen - used, " (name one)");
		goto out;
	}
	const char *near = cfg_did_you_mean(arg, names, nn);
	char hint[96];
	size_t used = (size_t)snprintf(err, errlen, "unknown %s '%s'%s", kinds[kind].what, arg,
				       cfg_near_hint(near, hint, sizeof hint));
	/* the names that begin with it (rtx, mi3), else, for a family's name with a suffix of the
	 * user's own (a100-sxm), the family's entries */
	for (int i = 0, k = 0; !near && begins && i < nn && used < errlen; i++)
		if (goes_on(names[i], arg, la))
			used += (size_t)snprintf(err + used, errlen - used, "%s%s",
						 k++ ? " " : "; names that begin with it: ",
						 names[i]);
	const char *dash = strchr(arg, '-');
	size_t lf = dash && !begins ? (size_t)(dash - arg) : 0;
	for (int i = 0, k = 0; !near && lf && i < nn && used < errlen; i++)
		if (strncasecmp(names[i], arg, lf) == 0 && names[i][lf] == '-')
			used += (size_t)snprintf(err + used, errlen - used, "%s%s",
						 k++ ? " " : "; its family: ", names[i]);
	if (used < errlen)
		snprintf(err + used, errlen - used, "; see 'tierplan hardware'");
out:
	free(all);
	return rc;
}

/*
 * Every point of a sweep resolves the same GPU, host and drive: each thread keeps its last few
 * records, keyed by kind, argument, configs directory and prices file, and valid while the
 * catalog (or record file) and the prices keep their stamps (model/file.h). Per thread, so the
 * workers share nothing.
 */
#define RECORD_MEMO 8
static _Thread_local struct {
	int kind;
	char arg[256], dir[PATH_MAX - 64], prices[PATH_MAX];
	struct cfg_stamp src, pr;
	union {
		struct cfg_gpu g;
		struct cfg_flash f;
		struct cfg_host h;
	} rec;
} record_memo[RECORD_MEMO];
static _Thread_local unsigned record_memo_next;

static int record_get(enum cfg_kind kind, const char *arg, void *rec, char *err, size_t errlen)
{
	char src[PATH_MAX];
	const char *dir = cfg_dir(), *prices = cfg_prices_path();
	struct cfg_stamp s1, s2;

	snprintf(src, sizeof src, "%s/%s", dir, kinds[kind].file);
	bool keyed = strlen(arg) < sizeof record_memo[0].arg &&
		     strlen(dir) < sizeof record_memo[0].dir &&
		     strlen(prices) < sizeof record_memo[0].prices &&
		     cfg_file_stamp(cfg_is_path(arg) ? arg : src, &s1) == 0 &&
		     cfg_file_stamp(prices, &s2) == 0;
	for (int i = 0; keyed && i < RECORD_MEMO; i++) {
		if (record_memo[i].kind == (int)kind && !strcmp(record_memo[i].arg, arg) &&
		    !strcmp(record_memo[i].dir, dir) && !strcmp(record_memo[i].prices, prices) &&
		    !memcmp(&record_memo[i].src, &s1, sizeof s1) &&
		    !memcmp(&record_memo[i].pr, &s2, sizeof s2)) {
			memcpy(rec, &record_memo[i].rec, kinds[kind].size);
			return 0;
		}
	}
	int rc = record_load(kind, arg, rec, err, errlen);
	if (rc == 0 && keyed) {
		unsigned k = record_memo_next++ % RECORD_MEMO;
		record_memo[k].kind = (int)kind;
		snprintf(record_memo[k].arg, sizeof record_memo[k].arg, "%s", arg);
		snprintf(record_memo[k].dir, sizeof record_memo[k].dir, "%s", dir);
		snprintf(record_memo[k].prices, sizeof record_memo[k].prices, "%s", prices);
		record_memo[k].src = s1;
		record_memo[k].pr = s2;
		memcpy(&record_memo[k].rec, rec, kinds[kind].size);
	}
	return rc;
}

int cfg_gpu_get(const char *arg, struct cfg_gpu *g, char *err, size_t errlen)
{
	return record_get(CFG_GPU, arg, g, err, errlen);
}

int cfg_flash_get(const char *arg, struct cfg_flash *f, char *err, size_t errlen)
{
	return record_get(CFG_FLASH, arg, f, err, errlen);
}

int cfg_host_get(const char *arg, struct cfg_host *h, char *err, size_t errlen)
{
	return record_get(CFG_HOST, arg, h, err, errlen);
}

/* models.json: {"models": [{"name", "file", "aliases": [...]}, ...]} */
static cJSON *models_index(char *err, size_t errlen)
{
	char path[PATH_MAX];
	cJSON *root, *arr;

	snprintf(path, sizeof path, "%s/models.json", cfg_dir());
	root = load_json(path, err, errlen);
	if (!root)
		return NULL;
	arr = cJSON_GetObjectItemCaseSensitive(root, "models");
	if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > CFG_MAX_MODELS) {
		snprintf(err, errlen, "catalog '%s': expected an array 'models' of at most %d entries",
			 path, CFG_MAX_MODELS);
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

static int model_fields(const cJSON *m, const char **name, const char **file, const cJSON **al)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "name");
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(m, "file");

	if (!cJSON_IsString(n) || !cJSON_IsString(f))
		return -1;
	*name = n->valuestring;
	*file = f->valuestring;
	*al = cJSON_GetObjectItemCaseSensitive(m, "aliases");
	return 0;
}

int cfg_models_open(struct cfg_models *m, char *err, size_t errlen)
{
	m->root = models_index(err, errlen);
	m->next = m->root ? cJSON_GetObjectItemCaseSensitive(m->root, "models")->child : NULL;
	return m->root ? 0 : -1;
}

int cfg_models_next(struct cfg_models *m, char *name, size_t namelen, char *path, size_t pathlen,
		    char *aliases, size_t aliaslen)
{
	const cJSON *a, *al;
	const char *nm, *file;
	size_t used = 0;

	for (; m->next; m->next = m->next->next) { /* entries without name and file are skipped */
		if (model_fields(m->next, &nm, &file, &al) < 0)
			continue;
		snprintf(name, namelen, "%s", nm);
		snprintf(path, pathlen, "%s/%s", cfg_dir(), file);
		const cJSON *hf = cJSON_GetObjectItemCaseSensitive(m->next, "hf_id");
		m->hf_id = cJSON_IsString(hf) ? hf->valuestring : NULL;
		aliases[0] = '\0';
		cJSON_ArrayForEach(a, al)
		{
			if (cJSON_IsString(a) && used < aliaslen)
				used += (size_t)snprintf(aliases + used, aliaslen - used, "%s%s",
							 used ? ", " : "", a->valuestring);
		}
		m->next = m->next->next;
		return 1;
	}
	return 0;
}

void cfg_models_close(struct cfg_models *m)
{
	cJSON_Delete(m->root);
	m->root = NULL;
	m->next = NULL;
}

/* The last model name resolved by this thread, valid while models.json keeps its stamp: a sweep
 * resolves the same name for every point. */
static _Thread_local struct {
	char arg[256], dir[PATH_MAX - 64], path[PATH_MAX], name[128];
	struct cfg_quant_name q;
	struct cfg_stamp st;
} model_memo;

/* Whether catalog model `name` is one of what `arg` names as a family (mixtral, qwen3, gemma-3:
 * the name goes on after it with '-' or '.', or with a digit after letters: qwen for Qwen2.5)
 * or as a size ("7b": a '-' before it, '-' or the end after it). */
static bool model_of(const char *name, const char *arg)
{
	size_t la = strlen(arg);
	if (!la)
		return false;
	if (strncasecmp(name, arg, la) == 0 &&
	    (name[la] == '-' || name[la] == '.' ||
	     (isalpha((unsigned char)arg[la - 1]) && isdigit((unsigned char)name[la]))))
		return true;
	char c = (char)tolower((unsigned char)arg[la - 1]);
	if (la < 2 || (c != 'b' && c != 'm') || strspn(arg, "0123456789.") != la - 1)
		return false;
	for (const char *at = strcasestr(name, arg); at; at = strcasestr(at + 1, arg))
		if (at > name && at[-1] == '-' && (at[la] == '-' || at[la] == '\0'))
			return true;
	return false;
}

/* Whether arg reads as a Hugging Face Hub repository id, owner/name: one '/', inside it, and no
 * ".json" (not a relative path's "./" or "../", nor a home's "~") */
static bool hub_id(const char *arg)
{
	const char *slash = strchr(arg, '/');
	return slash && slash > arg && slash[1] && !strchr(slash + 1, '/') && arg[0] != '.' &&
	       arg[0] != '~' && !ends_with(arg, ".json");
}

/*
 * A fine-tuned or quantised checkpoint's name as its base's: without the words its publisher
 * adds for an instruction-tuned, chat or converted release (Llama-3.1-8B-Instruct,
 * Llama-2-7b-chat-hf, gemma-2-9b-it, Qwen-7B-Chat, Mistral-7B-Instruct-v0.1,
 * Mistral-Small-24B-Base-2501) and a release date after such a word (Qwen3-4B-Instruct-2507).
 * Such a checkpoint is its base's architecture with other weights: the same config.json shapes,
 * so the same memory and FLOPs (the pairs named above on the Hub [B]; a release that changes a
 * shape or a setting has a name of its own: Mistral-7B-Instruct-v0.2 is v0.2's, not v0.1's). The
 * words of a quantised release go too, and say how its weights are stored, into *q as its
 * quantization_config would: GPTQ (TheBloke's Llama-2-7B-GPTQ; Qwen's Qwen-7B-Chat-Int4 and
 * -Int8 and Qwen2.5-7B-Instruct-GPTQ-Int4 are GPTQ checkpoints of those bits), bitsandbytes
 * 4-bit (Unsloth's llama-3-8b-bnb-4bit, -unsloth-bnb-4bit) and AWQ [B: the publishers' model
 * cards]. Never the first word. Into out (n bytes); false where nothing was dropped.
 */
static bool base_of(const char *arg, char *out, size_t n, struct cfg_quant_name *q)
{
	static const char *const words[] = {"instruct", "chat", "it", "hf", "base"};
	size_t used = 0, len;
	bool dropped = false, after = false, bnb = false;

	memset(q, 0, sizeof *q);
	for (const char *w = arg; *w; w += len + (w[len] == '-')) {
		len = strcspn(w, "-");
		const char *next = w + len + (w[len] == '-');
		bool drop = false;
#define IS(word) (strlen(word) == len && !strncasecmp(w, word, len))
		for (size_t i = 0; w != arg && i < sizeof words / sizeof words[0]; i++)
			drop |= IS(words[i]);
		/* a date only right after such a word: 2507, 2501 */
		drop |= after && len == 4 && strspn(w, "0123456789") == 4;
		if (w != arg && (IS("gptq") || IS("int4") || IS("int8") || IS("awq"))) {
			drop = true;
			bool awq = IS("awq") || !strcmp(q->method, "awq");
			snprintf(q->method, sizeof q->method, "%s", awq ? "awq" : "gptq");
			q->bits = IS("int8") ? 8 : q->bits ? q->bits : 4;
		}
		/* bnb-4bit, and Unsloth's word before it */
		if (w != arg && (IS("bnb") || (IS("unsloth") && !strncasecmp(next, "bnb-", 4))))
			drop = bnb = true;
		if (bnb && IS("4bit")) {
			drop = true;
			snprintf(q->method, sizeof q->method, "bitsandbytes");
			q->bits = 4;
		}
#undef IS
		after = drop;
		dropped |= drop;
		if (!drop && used < n)
			used += (size_t)snprintf(out + used, n - used, "%s%.*s", used ? "-" : "",
						 (int)len, w);
		if (!w[len])
			break;
	}
	if (bnb && strcmp(q->method, "bitsandbytes")) /* bnb without its 4bit: no such release */
		return false;
	return dropped && used > 0 && used < n;
}

/* The Hugging Face hub cache's directory, where huggingface_hub keeps the repositories it
 * downloads: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub (huggingface_hub
 * constants.py) [A: source]. Into out (n bytes); false where neither variable nor a home is
 * set. */
static bool hub_cache(char *out, size_t n)
{
	const char *cache = getenv("HF_HUB_CACHE"), *hf = getenv("HF_HOME"), *home = getenv("HOME");
	int len = cache && *cache ? snprintf(out, n, "%s", cache)
		  : hf && *hf	  ? snprintf(out, n, "%s/hub", hf)
		  : home && *home ? snprintf(out, n, "%s/.cache/huggingface/hub", home)
				  : -1;
	return len > 0 && (size_t)len < n;
}

/* The config.json of a hub cache's repository directory (models--owner--name): the snapshot
 * its refs/main names, else its one snapshot. Into path (n bytes); false where there is none,
 * or several and no refs/main. Reads, never writes. */
static bool cached_config(const char *repo, char *path, size_t n)
{
	char ref[PATH_MAX], rev[256] = "", dir[PATH_MAX], why[256];
	struct stat sb;
	snprintf(ref, sizeof ref, "%s/refs/main", repo);
	/* read as every input is (cfg_read_file: a regular file, small, no NUL), so a pipe
	 * planted there cannot hang the lookup; none is no error: the one snapshot then */
	char *text = cfg_read_file(ref, "hub cache ref", sizeof rev - 1, why, sizeof why);
	if (text) {
		snprintf(rev, sizeof rev, "%.*s", (int)strcspn(text, "\r\n"), text);
		free(text);
	}
	if (!rev[0] || strchr(rev, '/') || rev[0] == '.') { /* no usable ref: the one snapshot */
		int found = 0;
		snprintf(dir, sizeof dir, "%s/snapshots", repo);
		DIR *d = opendir(dir);
		for (struct dirent *e; d && (e = readdir(d));)
			if (e->d_name[0] != '.' && ++found == 1)
				snprintf(rev, sizeof rev, "%s", e->d_name);
		if (d)
			closedir(d);
		if (found != 1)
			return false;
	}
	int len = snprintf(path, n, "%s/snapshots/%s/config.json", repo, rev);
	return len > 0 && (size_t)len < n && stat(path, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* The catalog entry key names: its name or an alias (case ignored), or with `hub` its hf_id;
 * NULL where none does. */
static const cJSON *catalog_entry(const cJSON *root, const char *key, bool hub)
{
	const cJSON *m, *a, *al;
	const char *nm, *file;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "models"))
	{
		if (model_fields(m, &nm, &file, &al) < 0)
			continue;
		if (hub) {
			const cJSON *hf = cJSON_GetObjectItemCaseSensitive(m, "hf_id");
			if (cJSON_IsString(hf) && !strcasecmp(hf->valuestring, key))
				return m;
			continue;
		}
		if (!strcasecmp(nm, key))
			return m;
		cJSON_ArrayForEach(a, al)
		{
			if (cJSON_IsString(a) && !strcasecmp(a->valuestring, key))
				return m;
		}
	}
	return NULL;
}

/* "unknown model" into err: the catalog's models of the family or size key names where it holds
 * several (phi: Phi-2, Phi-3-mini-4k, Phi-4, not the nearest alias), else the near name, else
 * the one model of that family or size; for a Hub id (`hub`, key its repository's name), that
 * it is no file either; and where to look. */
static void unknown_model(const cJSON *root, const char *arg, const char *key, bool hub,
			  char *err, size_t errlen)
{
	const char *names[512] = {0}, *models[256];
	int nn = 0, nof = 0;
	const cJSON *m, *a, *al;
	const char *nm, *file;

	cJSON_ArrayForEach(m, cJSON_GetObjectItemCaseSensitive(root, "models"))
	{
		if (model_fields(m, &nm, &file, &al) < 0)
			continue;
		if (nn < 512)
			names[nn++] = nm;
		if (nof < 256 && model_of(nm, key))
			models[nof++] = nm;
		cJSON_ArrayForEach(a, al)
		{
			if (cJSON_IsString(a) && nn < 512)
				names[nn++] = a->valuestring;
		}
	}
	char hint[160];
	const char *near = nof < 2 ? cfg_did_you_mean(key, names, nn) : NULL;
	size_t used = (size_t)snprintf(err, errlen, "unknown model '%s'%s", arg,
				       cfg_near_hint(near, hint, sizeof hint));
	for (int i = 0; !near && i < nof && used < errlen; i++)
		used += (size_t)snprintf(err + used, errlen - used, "%s%s",
					 i ? ", " : "; the catalog has ", models[i]);
	if (used < errlen && hub)
		used += (size_t)snprintf(err + used, errlen - used,
					 ": no such file, no catalog model is that Hub "
					 "repository, and the Hugging Face cache holds no snapshot "
					 "of it (download its config.json)");
	if (used < errlen)
		snprintf(err + used, errlen - used, "; see 'tierplan models', or give a path to a "
						    "config.json");
}

int cfg_model_resolve(const char *arg, char *path, size_t pathlen, char *name, size_t namelen,
		      struct cfg_quant_name *q, char *err, size_t errlen)
{
	struct cfg_quant_name none;
	cJSON *root;
	int rc = -1;
	char index[PATH_MAX];
	struct cfg_stamp st;
	struct stat sb;
	/* a Hub id (meta-llama/Llama-3.1-8B) where no such file is: the catalog's entry for it */
	bool hub = hub_id(arg) && stat(arg, &sb) != 0;

	if (!q)
		q = &none;
	memset(q, 0, sizeof *q);

	if (cfg_is_path(arg) && !hub) {
		/* a Hugging Face snapshot's directory reads its config.json, and a config.json is
		 * named for its directory (Llama-3.1-8B/config.json: Llama-3.1-8B) */
		bool dir = stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode);
		const char *base = strrchr(arg, '/');
		base = base ? base + 1 : arg;
		size_t n = strlen(arg);
		while (dir && n > 1 && arg[n - 1] == '/')
			n--;
		snprintf(path, pathlen, dir ? "%.*s/config.json" : "%.*s", (int)n, arg);
		/* a hub cache's repository directory (models--owner--name): its snapshot's,
		 * named for the repository */
		char repo[PATH_MAX];
		snprintf(repo, sizeof repo, "%.*s", (int)n, arg);
		const char *owner = strrchr(repo, '/') ? strrchr(repo, '/') + 1 : repo;
		const char *dashes = strncmp(owner, "models--", 8) ? NULL : strstr(owner + 8, "--");
		if (dir && stat(path, &sb) != 0 && dashes && cached_config(repo, path, pathlen)) {
			snprintf(name, namelen, "%s", dashes + 2);
			return 0;
		}
		if (dir && stat(path, &sb) != 0) {
			snprintf(err, errlen, "model directory '%.*s' holds no config.json", (int)n,
				 arg);
			return -1;
		}
		snprintf(name, namelen, "%s", base);
		char real[PATH_MAX];
		if ((dir || !strcmp(base, "config.json")) && realpath(path, real)) {
			char *slash = strrchr(real, '/');
			*slash = '\0';
			slash = strrchr(real, '/');
			if (slash && slash[1])
				snprintf(name, namelen, "%s", slash + 1);
		}
		return 0;
	}
	snprintf(index, sizeof index, "%s/models.json", cfg_dir());
	bool keyed = strlen(arg) < sizeof model_memo.arg && strlen(cfg_dir()) < sizeof model_memo.dir &&
		     cfg_file_stamp(index, &st) == 0;
	if (keyed && !strcmp(model_memo.arg, arg) && !strcmp(model_memo.dir, cfg_dir()) &&
	    !memcmp(&model_memo.st, &st, sizeof st)) {
		snprintf(path, pathlen, "%s", model_memo.path);
		snprintf(name, namelen, "%s", model_memo.name);
		*q = model_memo.q;
		return 0;
	}
	root = models_index(err, errlen);
	if (!root)
		return -1;
	/* the Hub id as a catalog entry's, else its repository's name as a catalog name; then
	 * that name as a fine-tuned variant's of its base (base_of) */
	const char *key = hub ? strchr(arg, '/') + 1 : arg;
	const cJSON *m = hub ? catalog_entry(root, arg, true) : NULL;
	char base[256];
	if (!m)
		m = catalog_entry(root, key, false);
	if (!m && base_of(key, base, sizeof base, q))
		m = catalog_entry(root, base, false);
	if (!m) {
		memset(q, 0, sizeof *q);
		/* a Hub id the catalog lacks: its config.json where huggingface_hub downloaded
		 * it, as from that path (not memoised: the cache may change under a sweep) */
		char cache[PATH_MAX], repo[PATH_MAX];
		int len = hub && hub_cache(cache, sizeof cache)
				  ? snprintf(repo, sizeof repo, "%s/models--%.*s--%s", cache,
					     (int)(key - 1 - arg), arg, key)
				  : -1;
		if (len > 0 && (size_t)len < sizeof repo && cached_config(repo, path, pathlen)) {
			snprintf(name, namelen, "%s", key);
			rc = 0;
			goto out;
		}
		unknown_model(root, arg, key, hub, err, errlen);
		goto out;
	}
	const char *nm, *file;
	const cJSON *al;
	model_fields(m, &nm, &file, &al);
	snprintf(path, pathlen, "%s/%s", cfg_dir(), file);
	snprintf(name, namelen, "%s", nm);
	if (keyed) {
		snprintf(model_memo.arg, sizeof model_memo.arg, "%s", arg);
		snprintf(model_memo.dir, sizeof model_memo.dir, "%s", cfg_dir());
		snprintf(model_memo.path, sizeof model_memo.path, "%s", path);
		snprintf(model_memo.name, sizeof model_memo.name, "%s", name);
		model_memo.q = *q;
		model_memo.st = st;
	}
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}
