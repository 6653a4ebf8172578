/* hw — see hw.h. */
#include "hw.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"

double mdl_peak_flops(const struct cfg_gpu *g, bool fp32)
{
	return fp32 ? g->fp32_flops : g->bf16_flops;
}

/*
 * One PCIe lane, one direction, bits/s after the line code: Gen1 2.5 GT/s and Gen2 5, 8b/10b;
 * Gen3 8, Gen4 16 and Gen5 32, 128b/130b; Gen6 64 GT/s in 242/256-byte FLITs [A: PCI Express
 * base specifications]; 0 for generation 0 (unstated).
 */
static double lane_rate(double gen)
{
	int g = (int)gen;
	return g >= 6 ? 64e9 * 242 / 256
	       : g >= 3 ? 8e9 * (1 << (g - 3)) * 128 / 130
	       : g >= 1 ? 2.5e9 * g * 8 / 10
			: 0;
}

/*
 * Achievable host<->GPU copy bandwidth per x16 link, one direction (copy engine, pinned memory):
 * Gen4 24.8 GB/s (nvbandwidth on A100, published.md D.3), Gen5 55.63 GB/s (nvbandwidth example,
 * D.3). Gen3 and Gen6 scale the Gen4 figure by the signalling rate (x0.5, x4), Gen1 and 2 the
 * Gen3 one by their lanes' rate (lane_rate) [D].
 */
double mdl_pcie_bandwidth(double gen, double lanes)
{
	double x16;

	if (gen >= 6)
		x16 = 4 * 24.8e9;
	else if (gen >= 5)
		x16 = 55.63e9;
	else if (gen >= 4)
		x16 = 24.8e9;
	else if (gen >= 3)
		x16 = 12.4e9;
	else
		x16 = 12.4e9 * lane_rate(gen) / lane_rate(3);
	return x16 * lanes / 16.0;
}

/* The generation the GPU's PCIe link trains to: the lower of the GPU's and the host's. */
static double link_gen(const struct mdl_hw *hw)
{
	return hw->host.pcie_gen > 0 ? fmin(hw->gpu.host_link_gen, hw->host.pcie_gen)
				     : hw->gpu.host_link_gen;
}

double mdl_host_link_bandwidth(const struct mdl_hw *hw)
{
	const struct cfg_gpu *g = &hw->gpu;
	return g->host_link > 0 ? g->host_link
				: mdl_pcie_bandwidth(link_gen(hw), g->host_link_lanes);
}

double mdl_host_link_dir(const struct mdl_hw *hw, bool h2d)
{
	double measured = h2d ? hw->prof.pcie_h2d : hw->prof.pcie_d2h;
	return measured > 0 ? measured : mdl_host_link_bandwidth(hw);
}

/*
 * Host-to-device and device-to-host copies at once reach less than the sum of the two: the
 * copies share the host's memory and root port, and the link carries the other direction's
 * completions and acknowledgements. Measured with both directions on two streams:
 *  - Gen5: an H200 SXM, 99.0 and 101.6 GB/s against 54.2-55.5 GB/s each way alone (tierplan
 *    calibrate, traces/calibration/h200-sxm-2026-12-04.json): 0.90 of the sum [A]; 8 RTX 5090
 *    on a Xeon 8458P, nvbandwidth's host-to-device copy 50.9 GB/s under a device-to-host one
 *    against 56.3 alone (tinygrad/open-gpu-kernel-modules issue 29): 0.90 [B];
 *  - Gen4: the host-to-device copy gives way, the other holds: A100-SXM4 with nvbandwidth,
 *    ~24.8 GB/s each way alone, 11 to + 24 from at once (published.md D.3), 12-13 to + ~24 from
 *    (NVIDIA/nvbandwidth issue 11); 8 RTX 4090, 11.2-16 GB/s to under a copy from, against
 *    24-26 alone (nvbandwidth issue 15): 0.71-0.75 of the sum [B]. The pair is shared here,
 *    not split as measured: which direction waits is the engine's order.
 * Gen3 and older take Gen4's share, Gen6 Gen5's [D: no measurement].
 */
#define BIDIR_SHARE_GEN5 0.90
#define BIDIR_SHARE_GEN4 0.73

double mdl_host_link_bidir(const struct mdl_hw *hw)
{
	if (hw->prof.pcie_bidir > 0)
		return hw->prof.pcie_bidir;
	if (hw->gpu.host_link > 0) /* NVLink-C2C: not measured both ways */
		return 0;
	return (link_gen(hw) >= 5 ? BIDIR_SHARE_GEN5 : BIDIR_SHARE_GEN4) *
	       (mdl_host_link_dir(hw, true) + mdl_host_link_dir(hw, false));
}

/*
 * A drive array through the software path DeepSpeed and aiDAPTIV use (libaio into pinned host
 * buffers, RAID-0) reaches a fraction of the datasheet sum:
 *  - reads: DeepNVMe 2024 (published.md 3: four Azure NC A100 v4 drives of 3.25 GB/s, ds_io
 *    CPU buffers) 2.9 / 5.6 / 10.1 GB/s on 1 / 2 / 4 drives, i.e. 0.89, 0.86, 0.78 of the
 *    datasheet: 0.89 x n^-0.095 (the exponent from 1 to 4 drives) [D on A/B figures];
 *  - writes: the same runs scale linearly (1.3 / 2.6 / 5.3 GB/s) and the one measured write
 *    against a known datasheet, ds_nvme_tune on a PNY CS3040 (4.3 GB/s), reached 3.18 GB/s:
 *    0.74, flat in n [D on A figures].
 * `tierplan calibrate` (fio on the user's array) replaces both.
 */
#define ARRAY_READ_EFF_1 0.89
#define ARRAY_READ_EFF_EXP 0.095
#define ARRAY_WRITE_EFF 0.74

/*
 * A drive's x4 link, one direction: 4 lanes (lane_rate), times the share of a read completion
 * that is data: 256 bytes of a 256-byte maximum payload in 276 (a 12-byte three-dword header, 2
 * of sequence number, 4 of LCRC, 2 of framing) [D: PCIe TLP framing].
 * Gen3 x4 carries 3.65 GB/s (Gen3 drives' datasheets stop at 3.5, the 970 PRO's), Gen4 x4 7.3:
 * a drive rated above its host's link reads and writes at the link's rate.
 */
#define LINK_PAYLOAD_SHARE (256.0 / 276.0)

double mdl_drive_link_bandwidth(double gen)
{
	return lane_rate(gen) / 8 * 4 * LINK_PAYLOAD_SHARE;
}

/*
 * Module capacities, GiB (a "64 GB" DIMM holds 64 GiB): DDR5 RDIMMs of 16, 32, 64, 128 and
 * 256 GB on 2-socket Sapphire Rapids servers (xFusion FusionServer 1288H V7 technical white
 * paper, table 5-6, 2023), and 48 and 96 GB from 24 Gb dies ("48GB RDIMM ... a single physical
 * rank of 16 x 24Gb dies and 96GB ... dual physical rank": router-switch.com, DDR5 non-binary
 * memory guide) [B]; DDR4 modules 8-128 GB ("typical capacity range", marketsignalindex.com
 * server memory specs) [B], of which 16 GB up, as the DDR5 list starts. Nodes are populated
 * evenly (one DIMM a channel, or every slot), as server vendors require for full bandwidth.
 */
static const double DDR4_DIMM_GIB[] = {16, 32, 64, 128};
static const double DDR5_DIMM_GIB[] = {16, 32, 48, 64, 96, 128, 256};

static int add_size(double *out, int n, double v)
{
	for (int i = 0; i < n; i++)
		if (out[i] == v)
			return n;
	if (n == MDL_DRAM_SIZES)
		return n;
	int i = n;
	for (; i > 0 && out[i - 1] > v; i--)
		out[i] = out[i - 1];
	out[i] = v;
	return n + 1;
}

double mdl_dram_reserve(const struct cfg_host *h)
{
	return h->dram_reserve > 0 ? h->dram_reserve : MDL_DRAM_RESERVE;
}

int mdl_dram_sizes(const struct cfg_host *h, double *out)
{
	int n = add_size(out, 0, h->dram);
	if (!(h->dram_slots > 0))
		return n;
	bool ddr5 = h->dram_ddr >= 5;
	const double *cap = ddr5 ? DDR5_DIMM_GIB : DDR4_DIMM_GIB;
	size_t ncap = ddr5 ? sizeof DDR5_DIMM_GIB / sizeof DDR5_DIMM_GIB[0]
			   : sizeof DDR4_DIMM_GIB / sizeof DDR4_DIMM_GIB[0];
	const double pop[2] = {h->dram_channels, h->dram_slots};
	for (int p = 0; p < 2; p++)
		for (size_t c = 0; c < ncap; c++) {
			double v = pop[p] * cap[c] * 1073741824.0;
			if (v <= h->dram_max)
				n = add_size(out, n, v);
		}
	return n;
}

/*
 * A consumer TLC or QLC drive writes at its rating into a pseudo-SLC region and, once that is
 * full, at what writing straight to its TLC/QLC flash (while it folds the SLC data back) allows.
 * TechPowerUp's sequential-fill tests measure both figures per drive (Samsung 980 1 TB: 2.5 GB/s
 * for 160 GB, then about 500 MB/s; 980 Pro 1 TB: 4 GB/s for 113 GB, then 1.5 GB/s) [B: reviews'
 * measurements]. Of `bytes` a step the first `cache` go at the rate the array reaches into the
 * cache (the rating through the software path, mdl_flash_bandwidth), the rest at `after`, and
 * the step's writes run at their mean; `fast` where the drive has no cache (after 0).
 *
 * What a step finds free of the region is what the drive folded back since the last step's
 * writes (mdl_flash_slc_free). Folding rewrites the region's data into TLC at the TLC's program
 * rate, which is what the rate past the cache is (the reviews: past the cache the drive "will
 * start flushing SLC back to TLC"; "any pause in write activity ... will give the drive time
 * to free up some SLC cache"), and no faster than the TLC takes data: their whole-drive fills
 * put the terabyte into TLC at 0.62 GB/s on the 980 once the cache is full (1 TB at 600 MB/s
 * mean, 64 s of it into the cache) and 2.0 GB/s on the 980 Pro. So a drive that pauses P
 * seconds a step folds write_after_cache x P of it, and in steady state, every step alike, its
 * writes find min(slc_cache, write_after_cache x P) free [D: folding in the pauses alone, at
 * the rate past the cache: a floor, within a quarter of the fills' rate]. A step whose writes
 * outrun the folding runs past the cache: writing 82 GB a step to a 980 with 30 s of pauses,
 * 15 GB go into the region and 67 at 500 MB/s.
 */
double mdl_flash_cached_write(double cache, double after, double fast, double bytes)
{
	if (!(after > 0) || bytes <= cache)
		return fast;
	return bytes / (cache / fast + (bytes - cache) / fmin(after, fast));
}

double mdl_flash_slc_free(const struct mdl_hw *hw)
{
	double cache, after;
	mdl_flash_slc(hw, &cache, &after);
	if (!(after > 0) || !hw->flash_pause_known)
		return cache;
	return fmin(cache, after * fmax(hw->flash_step_pause, 0));
}

void mdl_flash_slc(const struct mdl_hw *hw, double *cache, double *after)
{
	double n = hw->flash_count;
	if (hw->prof.flash_slc_cache > 0 && n >= 1) { /* an array's cache is its drives' */
		*cache = hw->prof.flash_slc_cache / n;
		*after = hw->prof.flash_write_after_cache / n;
	} else {
		*cache = hw->flash.slc_cache;
		*after = hw->flash.write_after_cache;
	}
}

double mdl_flash_bandwidth(const struct mdl_hw *hw, bool read)
{
	double measured = read ? hw->prof.flash_read : hw->prof.flash_write;
	double n = hw->flash_count, cache, after;
	mdl_flash_slc(hw, &cache, &after);
	if (measured > 0 && (read || !(cache > 0) || n < 1))
		return measured;
	double bw;
	if (measured > 0) { /* calibrate's fio writes for seconds: within a drive's SLC cache */
		bw = measured;
	} else {
		double eff = read ? ARRAY_READ_EFF_1 * pow(n > 1 ? n : 1, -ARRAY_READ_EFF_EXP)
				  : ARRAY_WRITE_EFF;
		double drive = read ? hw->flash.read_bandwidth : hw->flash.write_bandwidth;
		double link = mdl_drive_link_bandwidth(hw->host.pcie_gen);
		bw = n * eff * (link > 0 ? fmin(drive, link) : drive);
		if (hw->host.flash_uplink > 0)
			bw = fmin(bw, hw->host.flash_uplink);
	}
	/* past an SLC cache the flash, not the software path, sets each drive's rate */
	return read ? bw
		    : n * mdl_flash_cached_write(mdl_flash_slc_free(hw), after, bw / n,
						 hw->flash_step_write);
}

int mdl_profile_apply(const char *path, struct mdl_hw *hw, char *err, size_t errlen)
{
	char *text = cfg_read_file(path, "profile", 1 << 22, err, errlen);
	if (!text)
		return -1;
	int rc = mdl_profile_parse(text, path, hw, err, errlen);
	free(text);
	return rc;
}

/* Whether a CUDA device name ("NVIDIA GeForce RTX 4090", "NVIDIA H100 80GB HBM3") is of the
 * catalog GPU's family: the catalog name up to its first '-' ("h100" of "h100-sxm",
 * "rtx4090"), letters and digits only, inside the device name likewise reduced. */
static bool same_gpu(const char *device, const char *catalog)
{
	char d[128], c[64];
	size_t nd = 0, nc = 0;
	for (const char *p = device; *p && nd + 1 < sizeof d; p++)
		if (isalnum((unsigned char)*p))
			d[nd++] = (char)tolower((unsigned char)*p);
	d[nd] = '\0';
	for (const char *p = catalog; *p && *p != '-' && nc + 1 < sizeof c; p++)
		if (isalnum((unsigned char)*p))
			c[nc++] = (char)tolower((unsigned char)*p);
	c[nc] = '\0';
	return nc > 0 && strstr(d, c) != NULL;
}

int mdl_profile_parse(const char *text, const char *path, struct mdl_hw *hw, char *err,
		      size_t errlen)
{
	cJSON *root = cJSON_Parse(text);
	const cJSON *fit = cJSON_GetObjectItemCaseSensitive(root, "fitted"), *it;
	if (!cJSON_IsObject(fit)) {
		snprintf(err, errlen,
			 "--profile %s: no 'fitted' object (write one with tierplan "
			 "calibrate)",
			 path);
		cJSON_Delete(root);
		return -1;
	}
	cJSON_ArrayForEach(it, fit)
	{
		double v = it->valuedouble;
		const char *k = it->string;
		/* a latency can fit to 0 (a link whose issue cost the fit cannot resolve); rates
		 * must be positive */
		bool latency = k && strstr(k, "latency");
		if (!cJSON_IsNumber(it) || !(latency ? v >= 0 : v > 0) || !isfinite(v) || v > 1e18) {
			snprintf(err, errlen, "--profile %s: fitted '%s' must be a %s number", path, k,
				 latency ? "non-negative" : "positive");
			cJSON_Delete(root);
			return -1;
		}
		if (!strcmp(k, "dram_bandwidth"))
			hw->host.dram_bandwidth = v;
		else if (!strcmp(k, "cpu_adam_rate_per_core")) {
			/* calibrate times a bare AdamW loop over fp32 arrays; the host's rate is
			 * what a framework's whole CPU optimizer step sustains (DeepSpeed's, 15-27
			 * M a core in the published runs: the catalog's sources), which also
			 * reduces and clips the gradients and writes the updated weights for the
			 * GPU. The loop bounds that step (a machine whose loop runs slower slows
			 * it) but does not give it: the slower of the two [D: the ratio of the two
			 * rates on one machine is not published] */
			double *r = &hw->host.cpu_adam_rate_per_core;
			*r = *r > 0 ? fmin(*r, v) : v;
		}
		else if (!strcmp(k, "flash_read_bandwidth"))
			hw->prof.flash_read = v;
		else if (!strcmp(k, "flash_write_bandwidth"))
			hw->prof.flash_write = v;
		else if (!strcmp(k, "flash_slc_cache"))
			hw->prof.flash_slc_cache = v;
		else if (!strcmp(k, "flash_write_after_cache"))
			hw->prof.flash_write_after_cache = v;
		else if (!strcmp(k, "pcie_h2d_bandwidth"))
			hw->prof.pcie_h2d = v;
		else if (!strcmp(k, "pcie_d2h_bandwidth"))
			hw->prof.pcie_d2h = v;
		else if (!strcmp(k, "pcie_h2d_pageable_bandwidth"))
			hw->prof.pageable_h2d = v;
		else if (!strcmp(k, "pcie_d2h_pageable_bandwidth"))
			hw->prof.pageable_d2h = v;
		else if (!strcmp(k, "pcie_bidir_bandwidth"))
			hw->prof.pcie_bidir = v;
		else if (!strcmp(k, "hbm_bandwidth"))
			hw->prof.hbm_bandwidth = v;
		else if (!strcmp(k, "gemm_flops")) /* the rate on real layer shapes, as a fraction
						    * of the catalog GPU's dense peak */
			hw->prof.gemm_efficiency = fmin(v / hw->gpu.bf16_flops, 1.0);
		else if (!strcmp(k, "gemm_fp8_flops") && hw->gpu.fp8_flops > 0)
			/* the same for the FP8 GEMMs, of the FP8 peak (a catalog GPU without one
			 * runs no FP8 job: the figure is informative there) */
			hw->prof.gemm_fp8_efficiency = fmin(v / hw->gpu.fp8_flops, 1.0);
		else if (!strcmp(k, "matmul_fixed_s"))
			hw->prof.matmul_fixed = v;
		else if (!strcmp(k, "l2_cache"))
			hw->prof.l2_cache = v;
		else if (!strcmp(k, "l2_bandwidth"))
			hw->prof.l2_bandwidth = v;
		else if (!strcmp(k, "l2_kernel_fixed_s"))
			hw->prof.l2_kernel_fixed = v;
		/* other fitted figures (latencies) are informative */
	}
	/* the CUDA figures belong to the GPU they were measured on: never a 4090's links and GEMM
	 * rate on an H100 */
	const cJSON *dev = cJSON_GetObjectItemCaseSensitive(root, "device");
	const cJSON *dname = cJSON_GetObjectItemCaseSensitive(dev, "name");
	if (cJSON_IsString(dname) && !same_gpu(dname->valuestring, hw->gpu.name)) {
		snprintf(err, errlen,
			 "--profile %s was measured on %.80s, not on the GPU given (%s): give "
			 "the --gpu that matches the profile (or a GPU file)",
			 path, dname->valuestring, hw->gpu.name);
		cJSON_Delete(root);
		return -1;
	}
	/* the layer the bf16 GEMM test timed (its shape decides its clocks under a power cap) */
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(root, "measurements"))
	{
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(it, "test");
		const cJSON *h = cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(it, "extra"), "hidden");
		if (cJSON_IsString(t) && !strcmp(t->valuestring, "cuda_gemm_bf16") &&
		    cJSON_IsNumber(h) && h->valuedouble >= 1 && h->valuedouble <= 1e6)
			hw->prof.gemm_hidden = h->valuedouble;
	}
	/* one copy engine moves one direction at a time (cudaDeviceProp.asyncEngineCount 1): the
	 * pair of directions shares the one-direction rate */
	const cJSON *eng = cJSON_GetObjectItemCaseSensitive(dev, "async_engine_count");
	if (cJSON_IsNumber(eng) && eng->valuedouble == 1 && !(hw->prof.pcie_bidir > 0)) {
		double one = fmax(hw->prof.pcie_h2d, hw->prof.pcie_d2h);
		hw->prof.pcie_bidir = one > 0 ? one
					      : mdl_host_link_bandwidth(hw);
	}
	snprintf(hw->prof.file, sizeof hw->prof.file, "%s", path);
	/* measured elsewhere: calibrate records the machine's CPU cores and DRAM */
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "machine");
	const cJSON *cores = cJSON_GetObjectItemCaseSensitive(m, "cpu_cores");
	const cJSON *host = cJSON_GetObjectItemCaseSensitive(m, "hostname");
	hw->prof.warning[0] = '\0';
	if (cJSON_IsNumber(cores) && cores->valuedouble != hw->host.cpu_cores)
		snprintf(hw->prof.warning, sizeof hw->prof.warning,
			 "profile %.80s was measured on %.40s (%g CPU cores), not on a %.40s host "
			 "(%g cores): its links, DRAM and drives may not be this host's",
			 path, cJSON_IsString(host) ? host->valuestring : "another machine",
			 cores->valuedouble, hw->host.name, hw->host.cpu_cores);
	cJSON_Delete(root);
	return 0;
}
