/*
 * hw — the machine a job runs on: one GPU type, one host (node) type, its drives, DRAM per node,
 * and what `tierplan calibrate` measured on the user's own machine in place of the catalog's
 * datasheet figures.
 *
 * Catalog records (model/catalog) fill the parts; a calibrated profile (--profile FILE) overrides
 * the measured figures it holds, and every reader of a bandwidth goes through the helpers here so
 * that a measurement always wins over a datasheet. Cost: none beyond reading the profile once.
 * Failure: mdl_profile_apply returns -1 with a message naming the file and key.
 */
#ifndef TIERPLAN_HW_H
#define TIERPLAN_HW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog.h"

struct mdl_hw {
	struct cfg_gpu gpu;
	struct cfg_host host;
	struct cfg_flash flash;
	uint32_t flash_count; /* drives per node for tiered options */
	double flash_step_write; /* bytes each drive writes a step, over which a drive with an
				  * SLC cache averages its write rate (mdl_flash_cached_write);
				  * 0 = not known: the cache's rate */
	double flash_step_pause; /* seconds a step each drive does not write, in which one with
				  * an SLC cache folds it free (mdl_flash_slc_free) */
	bool flash_pause_known;	 /* false: not known, the whole cache free (a first run) */
	double dram;	      /* bytes per node */
	double gpu_headroom;  /* share of gpu.memory kept free; gpu.memory is already reduced */
	uint32_t gpus_per_node;
	bool dram_set, flash_set; /* given on the command line (else the host's defaults) */
	bool host_auto;		  /* the host is the GPU's usual node (--host auto) */
	double host_fallback;	  /* --host auto: the usual node's GPU slots, which the layout
				   * outgrew (hgx-8gpu stands in); 0 = none */
	/* measured by `tierplan calibrate` (--profile FILE); 0 = the catalog's value */
	struct {
		double pcie_h2d, pcie_d2h;	/* bytes/s per direction */
		double pageable_h2d, pageable_d2h; /* the same from or to pageable memory */
		double pcie_bidir;		/* both directions at once, bytes/s; 0 = not
						 * measured (the directions are independent) */
		double gemm_efficiency;		/* fraction of the catalog's dense peak */
		double gemm_fp8_efficiency;	/* FP8 GEMMs: fraction of the catalog's FP8 peak */
		double matmul_fixed;		/* seconds a matrix kernel costs beyond its FLOPs */
		double gemm_hidden;		/* the hidden size of the layer its GEMMs were
						 * timed at; 0 = not recorded */
		double hbm_bandwidth;		/* bytes/s */
		/* back-to-back kernels through the L2 (calibrate's cuda_l2_chain, as the
		 * catalog's cfg_gpu l2_*): bytes, bytes/s, seconds; 0 = not measured */
		double l2_cache, l2_bandwidth, l2_kernel_fixed;
		double flash_read, flash_write; /* the measured drive array, bytes/s */
		/* the array's SLC write cache, bytes, and its write rate past it, bytes/s
		 * (calibrate --flash-fill); 0 = not measured (the catalog drive's) */
		double flash_slc_cache, flash_write_after_cache;
		char file[256];
		char warning[384]; /* the profile's machine differs from the planned host */
	} prof;
};

/* The dense peak a job's matmuls have on the GPU, FLOP/s: fp32 (fp32 = true) without tensor
 * cores, else bf16/fp16 with fp32 accumulate. What MFU is a share of. */
double mdl_peak_flops(const struct cfg_gpu *g, bool fp32);

/* Achievable one-direction host<->GPU bandwidth of a PCIe link, bytes/s. */
double mdl_pcie_bandwidth(double gen, double lanes);

/* The GPU's achievable one-direction host link: its host_link (NVLink-C2C) where it has one,
 * else PCIe by lanes and the lower generation of the GPU's and the host's (a link trains to
 * what both ends support [A: PCI Express base specification]). bytes/s. A calibrated
 * profile's measurement overrides it where the caller reads hw->prof. */
double mdl_host_link_bandwidth(const struct mdl_hw *hw);

/* One direction of it as the simulator runs it (h2d: host to device): the profile's
 * measurement where it has one, else mdl_host_link_bandwidth. bytes/s. */
double mdl_host_link_dir(const struct mdl_hw *hw, bool h2d);

/* Both directions of the host link at once, bytes/s: a calibrated profile's measurement
 * (cuda_bidir_pinned, or one copy engine's one direction), else a PCIe link's measured share of
 * its two directions' sum; 0 where nothing caps the pair (an NVLink-C2C host link). */
double mdl_host_link_bidir(const struct mdl_hw *hw);

/* What one drive's x4 link carries in one direction on a host whose drive ports are PCIe
 * generation gen (1 to 6), bytes/s; 0 (no cap) for gen 0, unstated. */
double mdl_drive_link_bandwidth(double gen);

/* Bytes of DRAM per node kept back for the OS, the framework and pinned-allocation slack when a
 * policy keeps state on the host, where the host does not state what its own keep
 * (cfg_host.dram_reserve); a placeholder until calibrate measures it [U]. */
#define MDL_DRAM_RESERVE (32.0 * 1073741824.0)
/* The DRAM per node host h keeps back: its dram_reserve, else MDL_DRAM_RESERVE. */
double mdl_dram_reserve(const struct cfg_host *h);

/* The most DRAM sizes mdl_dram_sizes gives. */
#define MDL_DRAM_SIZES 24

/* The DRAM sizes a node of host h can be bought with, ascending, bytes: a DIMM on every memory
 * channel, or on every slot, of each capacity its DDR generation makes, up to h->dram_max,
 * and h->dram (what it ships with); h->dram alone where its DRAM is fixed (dram_slots 0).
 * Returns how many were written to out (at most MDL_DRAM_SIZES, at least 1). */
int mdl_dram_sizes(const struct cfg_host *h, double *out);

/* Bandwidth of a node's drive array, reading or writing: the profile's measurement, else
 * drives x datasheet (each capped by its x4 link on the host), capped by the host's shared
 * uplink when it has one; a drive with an SLC cache writes at mdl_flash_cached_write over
 * hw->flash_step_write, the measured or the datasheet rate taken as its rate into the cache.
 * bytes/s. */
double mdl_flash_bandwidth(const struct mdl_hw *hw, bool read);

/* One drive's SLC write cache, bytes, and its write rate past it, bytes/s: the profile's
 * measurement of the array over its drives, else the catalog drive's; 0 and 0 for none. */
void mdl_flash_slc(const struct mdl_hw *hw, double *cache, double *after);

/* The mean rate at which a drive whose SLC cache has `cache` bytes free, writing `after`
 * bytes/s past it, writes `bytes` a training step, bytes/s: `fast` (what it reaches writing
 * into the cache) for what the cache takes, `after` for the rest; `fast` where the drive has
 * no cache (after 0). */
double mdl_flash_cached_write(double cache, double after, double fast, double bytes);

/* What a step's writes find free of a drive's SLC cache, bytes: what the drive folds back into
 * TLC, at its rate past the cache, in the hw->flash_step_pause seconds a step it does not
 * write, at most the cache (model/hw.c); the whole cache where the pause is not known; 0 for
 * a drive without one. */
double mdl_flash_slc_free(const struct mdl_hw *hw);

/* Applies a calibrated profile's fitted parameters to hw (overriding the catalog); 0 ok, -1 +
 * err naming the file and key. */
int mdl_profile_apply(const char *path, struct mdl_hw *hw, char *err, size_t errlen);
/* The same for a profile's text; path names it in messages (fuzzing, tests). */
int mdl_profile_parse(const char *text, const char *path, struct mdl_hw *hw, char *err,
		      size_t errlen);

#endif
