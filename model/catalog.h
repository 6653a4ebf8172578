/*
 * catalog — hardware and model catalogs under configs/, loaded through descriptor tables.
 *
 * GPUs, flash drives and hosts are JSON files in configs/ (gpus.json, flash.json, hosts.json);
 * models are Hugging Face config.json files indexed by configs/models.json. Each record kind has
 * one static field table (key, unit kind, offset, range, required, help); one loader walks it,
 * so every value is parsed with its unit ("80GiB", "3350GB/s", "700W") and range-checked, and an
 * unknown key is an error with a "did you mean". Keys ending in "_source" carry provenance and
 * are accepted for any known key; "_comment" is ignored.
 *
 * A --gpu/--flash/--host argument is a catalog name, or a path to a JSON file holding one record
 * of that kind. The configs directory is $TIERPLAN_CONFIGS if set, else ../configs beside the
 * binary, else ./configs.
 * Failure: -1 with a one-line message naming the file, record and key, and the allowed range.
 */
#ifndef TIERPLAN_CATALOG_H
#define TIERPLAN_CATALOG_H

#include <stddef.h>

#include "units.h"

/* The node --host auto takes for a GPU that names none, and for a layout its usual node
 * cannot hold: an 8-GPU server with a network, the catalog's general-purpose one. */
#define CFG_HOST_STAND_IN "hgx-8gpu"

/* Bytes of a GPU's or a host's aliases, joined with commas (the catalog's longest list fits) */
#define CFG_ALIASES 256

struct cfg_gpu {
	char name[64], description[128];
	char host[64]; /* the host catalog's node this GPU usually sits in (--host auto); "" =
			* none named, CFG_HOST_STAND_IN stands in */
	char aliases[CFG_ALIASES]; /* its other names, comma-separated: the device name
				    * nvidia-smi prints, the product's spellings */
	double memory;        /* bytes */
	double hbm_bandwidth; /* bytes/s */
	double bf16_flops;    /* dense peak, FLOP/s */
	double fp32_flops;    /* fp32 peak without tensor cores (PyTorch's default for fp32
			       * matmuls), FLOP/s; 0 = unknown */
	double fp8_flops;     /* dense FP8 tensor-core peak, FLOP/s; 0 = none or unknown */
	double fp16_only;     /* 1: no bf16 tensor cores (Volta, Turing): bf16_flops holds the
			       * fp16 rate and bf16 precisions do not run; 0 = bf16 as well */
	double tdp, idle_power; /* W */
	double host_link_gen, host_link_lanes;
	double host_link;     /* bytes/s per direction of a non-PCIe host link (NVLink-C2C); 0 =
			       * PCIe of host_link_gen x host_link_lanes */
	double gpu_link;      /* bytes/s, both directions, per GPU; 0 = none */
	double gemm_mamf;     /* best-shape bf16 matmul rate over bf16_flops (above 1 where a board
			       * boosts past its datasheet clock); 0 = unknown */
	double gemm_mamf_fp8; /* best-shape FP8 matmul rate over fp8_flops; 0 = gemm_mamf's share */
	double gemm_mamf_fp32; /* best-shape fp32 matmul rate over fp32_flops (PyTorch's default
				* SGEMM on the CUDA cores); 0 = unknown */
	double gemm_sustained; /* a published sustained training GEMM rate over bf16_flops (what
				* the step runs at, unlike the MAMF's best shape); 0 = none */
	double flash_attention; /* FlashAttention-2's rate over bf16_flops; 0 = as the GEMMs */
	double flash_attention_bwd; /* its backward's rate over bf16_flops; 0 = as its forward */
	double cudnn_attention;     /* cuDNN's fused attention over bf16_flops; 0 = as flash's */
	double cudnn_attention_bwd; /* its backward's rate; 0 = as its forward */
	double sm_count;      /* streaming multiprocessors; 0 = unknown */
	/* back-to-back memory-bound kernels that hand a tensor on through the L2 cache: the data
	 * both arrays of a read-and-write kernel may hold and still hit it, bytes, and such a
	 * kernel's time t = l2_kernel_fixed + bytes / l2_bandwidth (seconds, bytes/s), measured;
	 * 0 = not measured (such kernels run at the HBM rate) */
	double l2_cache, l2_bandwidth, l2_kernel_fixed;
	double price;         /* USD */
	double cloud_per_hour; /* USD per GPU-hour */
};

struct cfg_flash {
	char name[64], description[128];
	double capacity;                        /* bytes */
	double read_bandwidth, write_bandwidth; /* bytes/s */
	/* a consumer TLC/QLC drive's pseudo-SLC write cache, bytes, and the rate it writes at once
	 * that cache is full, bytes/s; 0 = none (a datacenter drive's rating is sustained) */
	double slc_cache, write_after_cache;
	double latency;                         /* s */
	double tbw, dwpd, warranty_years;       /* tbw in bytes; one of tbw/dwpd set */
	double active_power, idle_power;        /* W */
	double price;                           /* USD */
};

struct cfg_host {
	char name[64], description[128];
	char aliases[CFG_ALIASES]; /* its other names, comma-separated (the systems it stands for) */
	double gpu_slots, cpu_cores;
	double cpu_power, cpu_idle_power;   /* W per node */
	double cpu_adam_rate_per_core;      /* params/s */
	double cpu_launch_scale;            /* host time to launch an op over a Xeon 8480's; 0: 1 */
	double dram, dram_max;              /* bytes per node */
	/* how its DRAM is bought: a DIMM on every channel or on every slot, of a capacity its DDR
	 * generation makes (mdl_dram_sizes); dram_slots 0: fixed at `dram` (soldered, a VM's, as
	 * installed), with dram_channels and dram_ddr 0 too */
	double dram_slots, dram_channels, dram_ddr;
	double dram_bandwidth;              /* bytes/s */
	double dram_power_per_gb;           /* W per 10^9 bytes */
	double dram_reserve;                /* bytes per node the OS and framework keep; 0: unset */
	double dram_price_per_gb;           /* USD per 10^9 bytes */
	double flash_bays;
	double flash_uplink;                /* bytes/s shared by the drive array; 0 = none */
	double pcie_gen;                    /* of its root ports and switches; 0 = unstated */
	double network_per_gpu;             /* bytes/s per GPU between nodes; 0 = single node */
	double gpus_per_switch;             /* GPUs sharing one PCIe switch uplink; 0 = direct */
	double switch_uplink;               /* bytes/s per direction of that uplink; 0 = none */
	double base_power;                  /* W */
	double price;                       /* USD, without GPUs, DRAM and drives */
};

/* Hardware records, and their prices (configs/prices.json: the same names, price fields only,
 * filled into the same structs when a record loads). */
enum cfg_kind { CFG_GPU, CFG_FLASH, CFG_HOST, CFG_GPU_PRICE, CFG_FLASH_PRICE, CFG_HOST_PRICE };

/* The prices file: --prices FILE when set (NULL resets), else <configs>/prices.json. A hardware
 * record whose name has no entry there is an error naming the file. The setting and the path
 * returned belong to the calling thread. */
void cfg_set_prices(const char *path);
const char *cfg_prices_path(void);

/* The configs directory in use (see above), without a trailing slash. */
const char *cfg_dir(void);

/* The accuracy record (<configs>/accuracy.json, written by `tierplan validate --accuracy`):
 * what the published runs of a validate category measured over what tierplan predicted (a
 * step's time, a peak's bytes), their 5th and 95th percentiles, and how many runs. 1 found; 0
 * no record or no such category (nothing to print); -1 + err where the record is malformed. */
struct cfg_band {
	double lo, hi;
	int cases;
};
int cfg_accuracy_get(const char *category, struct cfg_band *b, char *err, size_t errlen);

/* Resolves a catalog name (case-insensitive) or a JSON file of one record. 0 ok, -1 + err. */
int cfg_gpu_get(const char *name_or_file, struct cfg_gpu *g, char *err, size_t errlen);
int cfg_flash_get(const char *name_or_file, struct cfg_flash *f, char *err, size_t errlen);
int cfg_host_get(const char *name_or_file, struct cfg_host *h, char *err, size_t errlen);

/* Loads a whole catalog of one kind into a malloc'd array (caller frees). -1 + err. */
int cfg_catalog_load(enum cfg_kind kind, void **records, int *n, char *err, size_t errlen);

/* Parses one record of a kind from a cJSON object (tests, fuzzing). origin names it. */
struct cJSON;
int cfg_record_parse(enum cfg_kind kind, const struct cJSON *obj, const char *origin, void *rec,
		     char *err, size_t errlen);

/* What a quantised checkpoint's name says of its weights: the method as a config's
 * quantization_config names it ("gptq", "bitsandbytes", "awq"; "" none) and its bits. */
struct cfg_quant_name {
	char method[16];
	unsigned bits;
};

/* A model: catalog name/alias (a Hub id, a fine-tuned or quantised release's name: its base's),
 * or a path to a config.json or to the directory holding one (a Hugging Face snapshot). Fills
 * the path to read, the display name (a config.json's directory's name) and, where q is not
 * NULL, what a quantised release's name says (unsloth/llama-3-8b-bnb-4bit: bitsandbytes, 4;
 * empty otherwise). 0 ok, -1 + err listing near names. */
int cfg_model_resolve(const char *arg, char *path, size_t pathlen, char *name, size_t namelen,
		      struct cfg_quant_name *q, char *err, size_t errlen);

/* The model catalog in order, for `tierplan models`: open reads models.json once (at most
 * CFG_MAX_MODELS entries, else -1 + err); next fills one entry's name, config path and aliases
 * and returns 1, or 0 past the end; close frees. Linear in the catalog. */
#define CFG_MAX_MODELS 4096
struct cfg_models {
	struct cJSON *root;
	const struct cJSON *next;
	const char *hf_id; /* the Hugging Face repository next's entry was transcribed from, NULL
			    * where it names none; valid until close */
};
int cfg_models_open(struct cfg_models *m, char *err, size_t errlen);
int cfg_models_next(struct cfg_models *m, char *name, size_t namelen, char *path, size_t pathlen,
		    char *aliases, size_t aliaslen);
void cfg_models_close(struct cfg_models *m);

/* The candidate s means, or NULL: the longest of n product names (with digits) that s extends
 * by a dash and a suffix of its own (h200-sxm for h200), else the one product name that holds s
 * whole where s has digits (rtx4090 for 4090), else the closest within edit distance 2, and half
 * of s's length, whose digits and family letters are s's (h100 is not a misspelling of h200, nor
 * of a100; gb not of l4). */
const char *cfg_did_you_mean(const char *s, const char *const *cands, int n);
/* The hint an error appends for a near name: " (did you mean 'NEAR'?)" into buf (n bytes), or ""
 * where near is NULL. Returns buf. */
const char *cfg_near_hint(const char *near, char *buf, size_t n);

#endif
