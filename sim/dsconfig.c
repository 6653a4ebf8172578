/* dsconfig — see dsconfig.h. One walk over the config; every key ends up used or explained. */
#include "dsconfig.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/catalog.h"
#include "../model/file.h"
#include "sim.h"

#define DS_MAX_BYTES (1u << 20) /* a ds_config is a few hundred bytes; 1 MiB is anything real */

/* A key of a config section and why tierplan takes no cost from it ("" when it reads it). */
struct reason {
	const char *key, *why;
};

/* Keys tierplan reads no cost from, and why (DeepSpeed configuration reference). */
static const struct reason ignored[] = {
	{"scheduler", "the learning-rate schedule changes neither time nor memory"},
	{"gradient_clipping", ""}, /* read below */
	{"steps_per_print", "logging"},
	{"wall_clock_breakdown", "logging"},
	{"dump_state", "logging"},
	{"tensorboard", "logging"},
	{"wandb", "logging"},
	{"csv_monitor", "logging"},
	{"comet", "logging"},
	{"flops_profiler", "logging"},
	{"comms_logger", "logging"},
	{"aio", "the drive array's rate comes from the catalog or a calibrated profile (--profile), "
		"whose fio jobs use the same block size and queue depth"},
	{"activation_checkpointing", ""}, /* read below (checkpointing) */
	{"zero_allow_untested_optimizer", "a permission, not a cost"},
	{"zero_force_ds_cpu_optimizer", "a permission, not a cost"},
	{"communication_data_type", "not modelled: collectives move the gradients' dtype"},
	{"prescale_gradients", "not modelled"},
	{"gradient_predivide_factor", "not modelled"},
	{"sparse_gradients", "not modelled"},
	{"data_types", ""}, /* grad_accum_dtype read below */
	{"amp", "not modelled: use --precision"},
	{"checkpoint", "checkpoint saving is outside the step"},
	{"compression_training", "not modelled"},
	{"data_efficiency", "not modelled"},
	{"curriculum_learning", "not modelled"},
	{"elasticity", "not modelled"},
	{"autotuning", "not modelled"},
	{"pipeline", "pipeline parallelism comes from --pp"},
	{"train_batch_size", ""}, /* read below; listed so it is not "unknown" */
	{"train_micro_batch_size_per_gpu", ""},
	{"gradient_accumulation_steps", ""},
	{"fp16", ""},
	{"bf16", ""},
	{"bfloat16", ""},
	{"zero_optimization", ""},
	{"optimizer", ""},
};

/* zero_optimization keys tierplan holds at DeepSpeed's defaults or does not model. */
static const struct reason zero_ignored[] = {
	{"overlap_comm", ""},
	{"contiguous_gradients", "not modelled: fragmentation is the allocator's slack"},
	{"reduce_scatter", "gradients are reduce-scattered, as DeepSpeed's default"},
	{"allgather_partitions", "as DeepSpeed's default (all-gather)"},
	{"reduce_bucket_size", ""},
	{"allgather_bucket_size", "not modelled: all-gathers move whole layers"},
	/* the stage3_ keys under their field names too: DeepSpeed's config model takes either
	 * (zero/config.py: Field(..., alias="stage3_..."); config_utils.py populate_by_name) */
	{"stage3_prefetch_bucket_size", ""}, /* read below (prefetch_bucket) */
	{"prefetch_bucket_size", ""},
	{"stage3_max_live_parameters", "ZeRO-3 gathers one layer ahead: --prefetch"},
	{"max_live_parameters", "ZeRO-3 gathers one layer ahead: --prefetch"},
	{"stage3_max_reuse_distance", "not modelled"},
	{"max_reuse_distance", "not modelled"},
	{"stage3_param_persistence_threshold", "not modelled: small parameters are sharded too"},
	{"param_persistence_threshold", "not modelled: small parameters are sharded too"},
	{"stage3_gather_16bit_weights_on_model_save", "checkpoint saving is outside the step"},
	{"gather_16bit_weights_on_model_save", "checkpoint saving is outside the step"},
	{"stage3_gather_fp16_weights_on_model_save", "checkpoint saving is outside the step"},
	{"sub_group_size", ""},
	{"round_robin_gradients", "not modelled"},
	{"elastic_checkpoint", "checkpoint saving is outside the step"},
	{"ignore_unused_parameters", "not modelled"},
	{"legacy_stage1", "not modelled"},
	{"load_from_fp32_weights", "checkpoint loading is outside the step"},
	{"memory_efficient_linear", "not modelled"},
	{"zero_hpz_partition_size", "not modelled (ZeRO++)"},
	{"zero_quantized_weights", "not modelled (ZeRO++)"},
	{"zero_quantized_gradients", "not modelled (ZeRO++)"},
	{"mics_shard_size", ""},
	{"mics_hierarchical_params_gather", "all-gathers across nodes are hierarchical either way"},
	{"stage", ""},
	{"offload_optimizer", ""},
	{"offload_param", ""},
	{"cpu_offload", ""},
	{"cpu_offload_params", ""},
};

static const struct reason offload_ignored[] = {
	{"nvme_path", "the drives are --flash"},
	/* DeepSpeed pins these buffers by default since 0.19.5 (#8207, offload_config.py); before
	 * it pin_memory false or absent left them pageable, staged copies, at ZeRO-3 and, from
	 * 0.10.1 (#4131; always pinned before), at ZeRO-1/2. Apart from the pinning, ZeRO-3's
	 * gradient copy at the accumulation boundary blocked the host from 0.6 to 0.19.4
	 * (stage3.py partition_grads: copy_ without non_blocking) [A: DeepSpeed source] */
	{"pin_memory", "transfers are modelled through pinned buffers, as DeepSpeed 0.19.5 and "
		       "later default; false (or absent: ZeRO-3 before 0.19.5, ZeRO-1/2 from "
		       "0.10.1 to 0.19.4) copies through pageable memory, slower: not modelled"},
	{"buffer_count", ""}, /* read below (params_swap) */
	{"buffer_size", ""},
	{"max_in_cpu", ""}, /* read below (params_swap) */
	{"fast_init", "initialisation is outside the step"},
	{"ratio", ""}, /* read below (twin_flow) */
	{"device", ""},
	{"pipeline_read", ""},
	{"pipeline_write", ""},
};

struct walk {
	struct tp_ds *ds;
	const char *origin;
	char *err;
	size_t errlen;
};

static void note(struct tp_ds *ds, const char *fmt, ...)
{
	size_t n = strlen(ds->notes);
	va_list ap;

	if (n + 2 >= sizeof ds->notes)
		return;
	va_start(ap, fmt);
	vsnprintf(ds->notes + n, sizeof ds->notes - n - 1, fmt, ap);
	va_end(ap);
	n = strlen(ds->notes);
	ds->notes[n] = '\n';
	ds->notes[n + 1] = '\0';
}

/* Notes every key of obj (a section named prefix) that table says tierplan does not read, or
 * does not know: then "not a key of" what, with the nearest known key. */
static void explain(struct tp_ds *ds, const char *prefix, const cJSON *obj,
		    const struct reason *table, size_t n, const char *what)
{
	const char *names[64];
	const cJSON *it;

	for (size_t i = 0; i < n && i < 64; i++)
		names[i] = table[i].key;
	cJSON_ArrayForEach(it, obj)
	{
		size_t i = 0;
		while (i < n && strcmp(it->string, table[i].key) != 0)
			i++;
		if (i < n) {
			if (*table[i].why)
				note(ds, "ignored %s%s (%s)", prefix, it->string, table[i].why);
			continue;
		}
		const char *near = cfg_did_you_mean(it->string, names, (int)(n < 64 ? n : 64));
		note(ds, "ignored %s%.60s (not %s%s%s%s)", prefix, it->string, what,
		     near ? "; did you mean " : "", near ? near : "", near ? "?" : "");
	}
}

static int bad(struct walk *w, const char *key, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	snprintf(w->err, w->errlen, "deepspeed config '%s': %s %s", w->origin, key, why);
	return -1;
}

/* Records flag = value from key, and says so. */
static void set(struct tp_ds *ds, const char *flag, const char *key, const char *value)
{
	if (ds->n == TP_DS_MAX_FLAGS)
		return;
	ds->set[ds->n].flag = flag;
	snprintf(ds->set[ds->n].value, sizeof ds->set[ds->n].value, "%s", value);
	snprintf(ds->set[ds->n].key, sizeof ds->set[ds->n].key, "%s", key);
	ds->n++;
	note(ds, "used %s -> --%s %s", key, flag, value);
}

static bool is_auto(const cJSON *v)
{
	return cJSON_IsString(v) && strcmp(v->valuestring, "auto") == 0;
}

/* A whole number from lo to hi, or "auto" (*v untouched, returns 1). 0 set, -1 bad. */
static int count(struct walk *w, const cJSON *it, const char *key, double lo, double hi,
		 uint64_t *v)
{
	if (is_auto(it)) {
		note(w->ds, "left %s = auto to the command line (Hugging Face fills it)", key);
		return 1;
	}
	if (!cJSON_IsNumber(it) || it->valuedouble != floor(it->valuedouble) ||
	    it->valuedouble < lo || it->valuedouble > hi)
		return bad(w, key, "must be a whole number from %.0f to %.0f or \"auto\"", lo, hi);
	*v = (uint64_t)it->valuedouble;
	return 0;
}

/* The "enabled" of an fp16/bf16 section: 1 true, 0 false or auto (auto noted), -1 bad. */
static int enabled(struct walk *w, const cJSON *sec, const char *key)
{
	char k[64];
	const cJSON *en = cJSON_GetObjectItemCaseSensitive(sec, "enabled");

	snprintf(k, sizeof k, "%s.enabled", key);
	if (!cJSON_IsObject(sec))
		return bad(w, key, "must be an object");
	const cJSON *it;
	cJSON_ArrayForEach(it, sec)
	{
		if (strcmp(it->string, "enabled") != 0)
			note(w->ds, "ignored %s.%s (loss scaling and casting: no time or memory)",
			     key, it->string);
	}
	if (!en || cJSON_IsFalse(en))
		return 0;
	if (is_auto(en)) {
		note(w->ds, "left %s = auto to --precision", k);
		return 0;
	}
	if (!cJSON_IsTrue(en))
		return bad(w, k, "must be true, false or \"auto\"");
	return 1;
}

/* An offload section's device: "none", "cpu" or "nvme" (0, 1, 2); -1 bad. */
static int device(struct walk *w, const cJSON *sec, const char *key)
{
	char k[96];

	if (!sec || cJSON_IsNull(sec))
		return 0;
	if (!cJSON_IsObject(sec))
		return bad(w, key, "must be an object");
	snprintf(k, sizeof k, "%s.", key);
	explain(w->ds, k, sec, offload_ignored, sizeof offload_ignored / sizeof offload_ignored[0],
		"a key of DeepSpeed's offload section");
	snprintf(k, sizeof k, "%s.device", key);
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(sec, "device");
	if (!d || cJSON_IsNull(d))
		return 0;
	if (!cJSON_IsString(d))
		return bad(w, k, "must be \"none\", \"cpu\" or \"nvme\"");
	if (strcmp(d->valuestring, "none") == 0)
		return 0;
	if (strcmp(d->valuestring, "cpu") == 0)
		return 1;
	if (strcmp(d->valuestring, "nvme") == 0)
		return 2;
	return bad(w, k, "must be \"none\", \"cpu\" or \"nvme\", got \"%.20s\"", d->valuestring);
}

static const char *const dev_names[] = {"the GPU", "DRAM", "NVMe"};

/* offload_optimizer.pipeline_read / pipeline_write: the optimizer swapper's reads ahead and
 * writes behind (offload_config.py), used where the optimizer state is swapped to NVMe (nvme),
 * noted as ignored elsewhere. 0, or -1 bad. */
static int swap(struct walk *w, const cJSON *z, bool nvme)
{
	static const char *const keys[2] = {"pipeline_read", "pipeline_write"};
	const cJSON *os = cJSON_GetObjectItemCaseSensitive(z, "offload_optimizer");
	bool on[2];
	char k[2][64];
	for (int i = 0; i < 2; i++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(os, keys[i]);
		snprintf(k[i], sizeof k[i], "zero_optimization.offload_optimizer.%s", keys[i]);
		if (it && !cJSON_IsBool(it))
			return bad(w, k[i], "must be true or false");
		on[i] = cJSON_IsTrue(it);
		if (on[i] && !nvme)
			note(w->ds, "ignored %s (nothing is swapped to NVMe)", k[i]);
	}
	if (nvme && (on[0] || on[1]))
		set(w->ds, "swap-pipeline", k[on[0] ? 0 : 1],
		    on[0] && on[1] ? "both" : on[0] ? "read" : "write");
	return 0;
}

/* DeepSpeed's offload_param defaults, where a config under nvme leaves them out: 5 buffers of
 * 1e8 elements (deepspeed/runtime/zero/offload_config.py, DeepSpeedZeroOffloadParamConfig:
 * buffer_count Field(5), buffer_size Field(pp_int(1e8))) [A: source] */
#define DS_PARAM_BUFFERS 5
/* --max-in-cpu at the top of its range (sim/opts.c), above any rank's share of any model: every
 * parameter kept in DRAM */
#define DS_ALL_IN_CPU "10000000000000"
#define DS_PARAM_BUFFER_SIZE 100000000

/* offload_param's buffer_count, buffer_size and max_in_cpu where the parameters are on NVMe
 * (param_nvme). The first two are ZeRO-Infinity's parameter swap buffers in pinned DRAM
 * (partitioned_param_swapper.py), counted in the DRAM peak and checked against the model's
 * largest parameter partition (pol_zero_infinity.c); absent, DeepSpeed's defaults, which it
 * asserts against the same partition (a 128k-token vocabulary's embedding passes 1e8 elements
 * on up to 5 ranks: "More elements 524709888 than buffer size 100,000,000", DeepSpeed issue
 * 3506). max_in_cpu is the parameters it keeps in DRAM, --max-in-cpu (DeepSpeed reads it only
 * then: stage3.py, params_in_nvme_and_cpu). Elsewhere, and in offload_optimizer (its swapper's
 * own buffers), noted as ignored. 0, or -1 bad. */
static int params_swap(struct walk *w, const cJSON *z, bool param_nvme)
{
	static const char *const secs[2] = {"offload_param", "offload_optimizer"};
	for (int s = 0; s < 2; s++) {
		const cJSON *sec = cJSON_GetObjectItemCaseSensitive(z, secs[s]);
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(sec, "buffer_count");
		const cJSON *size = cJSON_GetObjectItemCaseSensitive(sec, "buffer_size");
		char kn[64], ks[64];
		snprintf(kn, sizeof kn, "zero_optimization.%s.buffer_count", secs[s]);
		snprintf(ks, sizeof ks, "zero_optimization.%s.buffer_size", secs[s]);
		const cJSON *mic = cJSON_GetObjectItemCaseSensitive(sec, "max_in_cpu");
		char km[64];
		snprintf(km, sizeof km, "zero_optimization.%s.max_in_cpu", secs[s]);
		if (s == 0 && param_nvme && mic) { /* the parameters it keeps in DRAM */
			uint64_t v;
			int rm = count(w, mic, km, 0, 1e13, &v);
			if (rm < 0)
				return -1;
			if (rm == 0) {
				char b[24];
				snprintf(b, sizeof b, "%llu", (unsigned long long)v);
				set(w->ds, "max-in-cpu", km, b);
			}
		} else if (mic) {
			note(w->ds, "ignored %s (%s)", km,
			     s ? "not a key of offload_optimizer"
			       : "read only with offload_param device nvme");
		}
		if (s == 0 && param_nvme) {
			int rn = n ? count(w, n, kn, 1, 1024, &w->ds->param_buffers) : 1;
			int rs = size ? count(w, size, ks, 1, 1e12, &w->ds->param_buffer_size) : 1;
			if (rn < 0 || rs < 0)
				return -1;
			if (!rn || !rs)
				note(w->ds, "used %s%s%s: ZeRO-Infinity's parameter swap buffers in "
					    "pinned DRAM", !rn ? kn : "", !rn && !rs ? " and " : "",
				     !rs ? ks : "");
			if (!n) {
				w->ds->param_buffers = DS_PARAM_BUFFERS;
				note(w->ds, "%s absent: DeepSpeed's default %d", kn,
				     DS_PARAM_BUFFERS);
			}
			if (!size) {
				w->ds->param_buffer_size = DS_PARAM_BUFFER_SIZE;
				note(w->ds, "%s absent: DeepSpeed's default %d", ks,
				     DS_PARAM_BUFFER_SIZE);
			}
			continue;
		}
		const char *why = s ? "the optimizer swapper's buffers are not modelled"
				    : "used only with offload_param device nvme";
		if (n)
			note(w->ds, "ignored %s (%s)", kn, why);
		if (size)
			note(w->ds, "ignored %s (%s)", ks, why);
	}
	return 0;
}

/* data_types.grad_accum_dtype: the dtype gradients accumulate and are reduced in. Absent, the
 * model's (DeepSpeedEngine.get_data_types); fp32 under a 16-bit model keeps fp32 gradients
 * (BF16_Optimizer's at ZeRO-1, the ZeRO optimizers' partitions otherwise) [A: DeepSpeed
 * source, runtime/engine.py and config_utils.py's DtypeEnum names]: --grad-dtype fp32; the
 * 16-bit names, the parameters' dtype. 0, or -1 bad. */
static int data_types(struct walk *w, const cJSON *dt)
{
	static const struct {
		const char *name, *grad_dtype;
	} dtypes[] = {{"fp32", "fp32"},	  {"float32", "fp32"}, {"float", "fp32"},
		      {"fp16", "param"},  {"float16", "param"}, {"half", "param"},
		      {"bf16", "param"},  {"bfloat16", "param"}, {"bfloat", "param"}};
	const char *k = "data_types.grad_accum_dtype";
	if (!dt)
		return 0;
	if (!cJSON_IsObject(dt))
		return bad(w, "data_types", "must be an object");
	const cJSON *it;
	cJSON_ArrayForEach(it, dt)
	{
		if (strcmp(it->string, "grad_accum_dtype") != 0)
			note(w->ds, "ignored data_types.%s (not modelled)", it->string);
	}
	it = cJSON_GetObjectItemCaseSensitive(dt, "grad_accum_dtype");
	if (!it || cJSON_IsNull(it))
		return 0;
	for (size_t i = 0; cJSON_IsString(it) && i < sizeof dtypes / sizeof dtypes[0]; i++)
		if (strcmp(it->valuestring, dtypes[i].name) == 0) {
			set(w->ds, "grad-dtype", k, dtypes[i].grad_dtype);
			return 0;
		}
	return bad(w, k, "must be fp32, fp16 or bf16 (or DeepSpeed's other names for them)");
}

/* offload_optimizer.ratio, ZeRO-Offload++ Twin-Flow's share of the optimizer on the CPU
 * (offload_config.py: 0 to 1, default 1; "only valid with ZeRO Stage 3"): --offload-ratio where
 * the config offloads the optimizer alone to the CPU at stage 3 (`modelled`), else noted as
 * simulated with the whole optimizer offloaded. 0 ok, -1 bad. */
static int twin_flow(struct walk *w, const cJSON *z, bool modelled)
{
	const char *key = "zero_optimization.offload_optimizer.ratio";
	const cJSON *oo = cJSON_GetObjectItemCaseSensitive(z, "offload_optimizer");
	const cJSON *it = cJSON_IsObject(oo) ? cJSON_GetObjectItemCaseSensitive(oo, "ratio") : NULL;
	if (!it)
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0 && it->valuedouble <= 1))
		return bad(w, key, "must be a number from 0 to 1");
	char v[32];
	snprintf(v, sizeof v, "%.15g", it->valuedouble);
	if (modelled)
		set(w->ds, "offload-ratio", key, v);
	else if (it->valuedouble < 1)
		note(w->ds,
		     "ignored %s %s: Twin-Flow is modelled at stage 3 with the optimizer alone "
		     "offloaded to the CPU; simulated with the whole optimizer offloaded",
		     key, v);
	return 0;
}

/* stage3_prefetch_bucket_size (or prefetch_bucket_size): the parameters ZeRO-3 gathers ahead
 * of the submodule it runs, in the order they run, up to that many elements (at least the next
 * parameter); 0 gathers none ahead (partitioned_param_coordinator.py, fetch_sub_module: "if
 * self.__prefetch_bucket_sz > 0") [A: DeepSpeed source]. A fetch one parameter ahead hides each
 * behind the one before it, as the one block ahead that --prefetch's default models; 0 fetches
 * beside no compute: --prefetch 1. Below stage 3 nothing is gathered. 0 ok, -1 bad. */
static int prefetch_bucket(struct walk *w, const cJSON *z, uint64_t stage, int auto_stage)
{
	static const char *const keys[] = {"stage3_prefetch_bucket_size", "prefetch_bucket_size"};
	for (int i = 0; i < 2; i++) {
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(z, keys[i]);
		char key[64];
		snprintf(key, sizeof key, "zero_optimization.%s", keys[i]);
		uint64_t n = 0;
		if (!it)
			continue;
		int rc = count(w, it, key, 0, 1e12, &n);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue; /* auto: Hugging Face fills it, a size above 0 */
		if (!auto_stage && stage < 3)
			note(w->ds, "ignored %s (ZeRO-3's; the config has stage %llu)", key,
			     (unsigned long long)stage);
		else if (n == 0)
			set(w->ds, "prefetch", key, "1");
		else
			note(w->ds, "ignored %s %llu (above 0, ZeRO-3 gathers the next parameters "
				    "while one runs: --prefetch's default, one block ahead)",
			     key, (unsigned long long)n);
	}
	return 0;
}

/* zero_optimization: the stage and offload targets become the policy (and --zero). */
static int zero(struct walk *w, const cJSON *z)
{
	struct tp_ds *ds = w->ds;
	uint64_t stage = 0;
	const cJSON *it;

	if (z && !cJSON_IsObject(z))
		return bad(w, "zero_optimization", "must be an object");
	explain(ds, "zero_optimization.", z, zero_ignored,
		sizeof zero_ignored / sizeof zero_ignored[0], "a key tierplan knows");
	it = cJSON_GetObjectItemCaseSensitive(z, "stage");
	int auto_stage = it ? count(w, it, "zero_optimization.stage", 0, 3, &stage) : 0;
	if (auto_stage < 0 || prefetch_bucket(w, z, stage, auto_stage))
		return -1;
	/* overlap_comm false: the reduction waits for backward. Absent, DeepSpeed takes it true
	 * at stage 3 alone (zero/config.py, overlap_comm_valid) [A: DeepSpeed source]: below, the
	 * reduction runs on the compute stream as buckets fill. */
	it = cJSON_GetObjectItemCaseSensitive(z, "overlap_comm");
	if (it && !is_auto(it)) {
		if (!cJSON_IsBool(it))
			return bad(w, "zero_optimization.overlap_comm", "must be true or false");
		set(ds, "overlap-grad-reduce", "zero_optimization.overlap_comm",
		    cJSON_IsTrue(it) ? "yes" : "no");
	} else if (!it && !auto_stage && stage < 3) {
		set(ds, "overlap-grad-reduce",
		    "zero_optimization.overlap_comm absent "
		    "(DeepSpeed: true at stage 3 alone)",
		    "no");
	}
	it = cJSON_GetObjectItemCaseSensitive(z, "sub_group_size");
	uint64_t sg = 0;
	if (it && !is_auto(it)) {
		if (count(w, it, "zero_optimization.sub_group_size", 1e5, 1e12, &sg))
			return -1;
		ds->sub_group_size = (double)sg;
		note(ds, "used zero_optimization.sub_group_size %llu: the gradients of one "
			 "sub-group go to fp32 at the ZeRO-3 step",
		     (unsigned long long)sg);
	}
	/* MiCS: stage 3 sharded over groups of mics_shard_size ranks, replicated across them
	 * (zero/config.py: -1 off; engine.py builds the MiCS optimizer at stage 3 alone) */
	it = cJSON_GetObjectItemCaseSensitive(z, "mics_shard_size");
	if (it && !is_auto(it) && !(cJSON_IsNumber(it) && it->valuedouble <= 0)) {
		uint64_t ms = 0;
		if (count(w, it, "zero_optimization.mics_shard_size", 2, 65536, &ms))
			return -1;
		if (!auto_stage && stage != 3)
			return bad(w, "zero_optimization.mics_shard_size",
				   "MiCS runs at stage 3 (the config has stage %llu)",
				   (unsigned long long)stage);
		char b[24];
		snprintf(b, sizeof b, "%llu", (unsigned long long)ms);
		set(ds, "dp-shard", "zero_optimization.mics_shard_size", b);
	}
	it = cJSON_GetObjectItemCaseSensitive(z, "reduce_bucket_size");
	uint64_t rb = 0;
	if (is_auto(it)) {
		ds->reduce_bucket_auto = true;
		note(ds, "resolved zero_optimization.reduce_bucket_size auto as transformers does: "
			 "hidden size squared");
	} else if (it && count(w, it, "zero_optimization.reduce_bucket_size", 1e5, 1e10, &rb)) {
		return -1;
	} else if (rb) {
		char b[24];
		snprintf(b, sizeof b, "%llu", (unsigned long long)rb);
		set(ds, "reduce-bucket", "zero_optimization.reduce_bucket_size", b);
	}
	int opt = device(w, cJSON_GetObjectItemCaseSensitive(z, "offload_optimizer"),
			 "zero_optimization.offload_optimizer");
	int par = device(w, cJSON_GetObjectItemCaseSensitive(z, "offload_param"),
			 "zero_optimization.offload_param");
	if (opt < 0 || par < 0)
		return -1;
	/* the flags before offload_optimizer/offload_param (DeepSpeed 0.3-0.5) */
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(z, "cpu_offload")) && !opt)
		opt = 1;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(z, "cpu_offload_params")) && !par)
		par = 1;
	if (par && stage < 3)
		return bad(w, "zero_optimization.offload_param",
			   "needs stage 3 (the config has stage %llu)", (unsigned long long)stage);
	if (opt == 2 && stage < 3)
		return bad(w, "zero_optimization.offload_optimizer.device",
			   "nvme needs stage 3 (the config has stage %llu)",
			   (unsigned long long)stage);
	if (twin_flow(w, z, !auto_stage && stage == 3 && opt == 1 && !par))
		return -1;
	char v[8];
	if (!opt && !par) {
		set(ds, "policy", "zero_optimization", "gpu");
		snprintf(v, sizeof v, "%llu", (unsigned long long)stage);
		set(ds, "zero", "zero_optimization.stage", v);
		return 0;
	}
	if (swap(w, z, par == 2 || opt == 2) ||
	    params_swap(w, z, par == 2))
		return -1;
	if (stage < 3) {
		if (stage < 2)
			note(ds, "simulated stage %llu with CPU offload as ZeRO-Offload's stage 2 "
				 "(gradients reduce-scattered to their owners)",
			     (unsigned long long)stage);
		set(ds, "policy", "zero_optimization.offload_optimizer", "zero-offload");
		return 0;
	}
	if (par == 2 || opt == 2) {
		set(ds, "policy", "zero_optimization.offload_param", "zero-infinity");
		if (par == 1 && opt == 2) {
			/* the parameters in DRAM, the optimizer on NVMe: ZeRO-Infinity keeping
			 * every parameter in DRAM (--max-in-cpu above any rank's share) */
			set(ds, "max-in-cpu", "zero_optimization.offload_param.device cpu",
			    DS_ALL_IN_CPU);
			note(ds, "simulated as ZeRO-Infinity with every parameter kept in DRAM; its "
				 "parameter swap buffers, which this config does not allocate, are "
				 "counted in the DRAM peak");
		} else if (par != 2 || opt != 2) {
			note(ds, "simulated as ZeRO-Infinity, parameters and optimizer state on NVMe "
				 "(this config keeps parameters on %s and optimizer state on %s)",
			     dev_names[par], dev_names[opt]);
		}
		return 0;
	}
	if (!par) { /* the optimizer alone on the CPU: the parameter shards stay on the GPUs */
		set(ds, "policy", "zero_optimization.offload_optimizer", "zero3-offload");
		set(ds, "offload-param", "zero_optimization.offload_param (absent or none)", "no");
		return 0;
	}
	if (opt != 1)
		note(ds, "simulated as ZeRO-3 CPU offload of parameters and optimizer state (this "
			 "config keeps parameters on %s and optimizer state on %s)",
		     dev_names[par], dev_names[opt]);
	set(ds, "policy", "zero_optimization.offload_param", "zero3-offload");
	return 0;
}

/* optimizer.type, case-insensitive as DeepSpeed compares it. */
static int optimizer(struct walk *w, const cJSON *o)
{
	static const struct {
		const char *type, *as, *why;
	} types[] = {
		{"adam", "adamw", ""},
		{"adamw", "adamw", ""},
		{"fusedadam", "adamw", ""},
		{"cpuadam", "adamw", ""},
		{"lamb", "adamw", "two fp32 moments per parameter, as AdamW"},
		{"onebitadam", "adamw", "two fp32 moments, as AdamW; its compressed communication "
					"is not modelled"},
		{"zerooneadam", "adamw", "two fp32 moments, as AdamW; its compressed communication "
					 "is not modelled"},
		{"onebitlamb", "adamw", "two fp32 moments, as AdamW; its compressed communication "
					"is not modelled"},
		{"lion", "lion", ""},
		{"adagrad", "sgd", "one fp32 state per parameter, as SGD with momentum"},
		{"sgd", "sgd", ""},
	};
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type"), *it;
	char low[32];

	if (!cJSON_IsObject(o))
		return bad(w, "optimizer", "must be an object");
	cJSON_ArrayForEach(it, o)
	{
		if (strcmp(it->string, "type") != 0)
			note(w->ds, "ignored optimizer.%s (hyperparameters: no time or memory)",
			     it->string);
	}
	if (!t || is_auto(t))
		return 0;
	if (!cJSON_IsString(t))
		return bad(w, "optimizer.type", "must be a string");
	size_t n = 0;
	for (const char *p = t->valuestring; *p && n + 1 < sizeof low; p++)
		low[n++] = (char)tolower((unsigned char)*p);
	low[n] = '\0';
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(low, types[i].type) == 0) {
			if (*types[i].why)
				note(w->ds, "counted optimizer.type %s as %s: %s", t->valuestring,
				     types[i].as, types[i].why);
			set(w->ds, "optimizer", "optimizer.type", types[i].as);
			return 0;
		}
	return bad(w, "optimizer.type",
		   "\"%.30s\" is not one tierplan models (Adam, AdamW, Lamb, OneBitAdam, Lion, "
		   "Adagrad, SGD)",
		   t->valuestring);
}

/* The policy the config chose (zero), "" where none. */
static const char *ds_policy(const struct tp_ds *ds)
{
	for (int i = 0; i < ds->n; i++)
		if (!strcmp(ds->set[i].flag, "policy"))
			return ds->set[i].value;
	return "";
}

/*
 * activation_checkpointing: recompute comes from --recompute (the model's gradient
 * checkpointing). cpu_checkpointing moves full recompute's checkpoints to DRAM where
 * deepspeed.checkpointing runs them (Megatron-DeepSpeed; a Hugging Face model checkpoints with
 * torch.utils.checkpoint and ignores the section): under the offload policies it is
 * --cpu-checkpointing, whose yes and no fix that placement. Under ZeRO without offload
 * DeepSpeed's synchronous copies are not modelled (--activation-offload is torchtune's
 * asynchronous offload). 0 ok, -1 bad value.
 */
static int checkpointing(struct walk *w, const cJSON *ac)
{
	static const struct reason keys[] = {
		{"cpu_checkpointing", ""},
		{"partition_activations",
		 "splits each checkpoint over the tensor-parallel ranks: the layout's"},
		{"contiguous_memory_optimization", "not modelled: fragmentation is the allocator's"},
		{"number_checkpoints", "not modelled"},
		{"synchronize_checkpoint_boundary", "not modelled"},
		{"profile", "logging"},
	};
	if (!ac)
		return 0;
	explain(w->ds, "activation_checkpointing.", ac, keys, sizeof keys / sizeof keys[0],
		"a key of activation_checkpointing");
	const cJSON *cpu = cJSON_GetObjectItemCaseSensitive(ac, "cpu_checkpointing");
	if (!cpu)
		return 0;
	if (!cJSON_IsBool(cpu))
		return bad(w, "activation_checkpointing.cpu_checkpointing", "must be true or false");
	if (!sim_ds_offload(ds_policy(w->ds))) {
		if (cJSON_IsTrue(cpu))
			note(w->ds, "ignored activation_checkpointing.cpu_checkpointing (without "
				    "offload DeepSpeed's synchronous checkpoint copies are not "
				    "modelled; --activation-offload yes is torchtune's asynchronous "
				    "offload)");
		return 0;
	}
	set(w->ds, "cpu-checkpointing", "activation_checkpointing.cpu_checkpointing",
	    cJSON_IsTrue(cpu) ? "yes" : "no");
	if (cJSON_IsTrue(cpu))
		note(w->ds, "activation_checkpointing.cpu_checkpointing acts through "
			    "deepspeed.checkpointing (Megatron-DeepSpeed); a Hugging Face model "
			    "checkpoints with torch and keeps them on the GPU: give "
			    "--cpu-checkpointing no for it");
	return 0;
}

int tp_ds_parse(const char *json, const char *origin, struct tp_ds *ds, char *err,
		size_t errlen)
{
	struct walk w = {ds, origin, err, errlen};
	cJSON *root = cJSON_Parse(json);
	const cJSON *it;
	int rc = -1;

	memset(ds, 0, sizeof *ds);
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "deepspeed config '%s': not a JSON object", origin);
		goto out;
	}
	explain(ds, "", root, ignored, sizeof ignored / sizeof ignored[0],
		"a DeepSpeed key tierplan knows");
	/* aio.use_gds (DeepSpeed's AIO_USE_GDS, runtime/swap_tensor/constants.py, false by
	 * default): the parameter swapper reads the drives into buffers on the GPU
	 * (partitioned_param_swapper.py: buffer_device is the accelerator), not into pinned DRAM
	 * [A: DeepSpeed source]; the simulator stages every drive read through DRAM */
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(root, "aio"), "use_gds")))
		note(ds, "aio.use_gds is not modelled: GPUDirect Storage reads the parameters "
			 "from the drives into GPU buffers, where tierplan stages them through "
			 "pinned DRAM (it counts that DRAM traffic and those buffers in DRAM, not "
			 "on the GPU)");
	/* batch, as DeepSpeed resolves it (runtime/config.py, _set_batch_related_parameters): of
	 * train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps, the
	 * ones given fix the rest through total = micro x accumulation x data-parallel ranks, the
	 * accumulation 1 when only one of the other two is given [A: DeepSpeed source]. What
	 * needs the data-parallel width (a micro-batch or an accumulation from the total) is
	 * derived once the layout is known (tp_sim_config); that total is also the global batch
	 * plan keeps across its layouts (tp_inputs). With any of them "auto" the Hugging Face
	 * Trainer fills all three from its arguments: the command line's. */
	uint64_t micro = 0, accum = 0, total = 0;
	int am = 0, aa = 0, at = 0;
	char v[32];
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "train_micro_batch_size_per_gpu")) &&
	    (am = count(&w, it, "train_micro_batch_size_per_gpu", 1, 65536, &micro)) < 0)
		goto out;
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "gradient_accumulation_steps")) &&
	    (aa = count(&w, it, "gradient_accumulation_steps", 1, 1e6, &accum)) < 0)
		goto out;
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "train_batch_size")) &&
	    (at = count(&w, it, "train_batch_size", 1, 1e9, &total)) < 0)
		goto out;
	bool hf = am || aa || at; /* an "auto" among them */
	if (micro) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)micro);
		set(ds, "batch", "train_micro_batch_size_per_gpu", v);
	}
	if (accum) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)accum);
		set(ds, "grad-accum", "gradient_accumulation_steps", v);
	} else if (!hf && micro && !total) {
		set(ds, "grad-accum", "train_micro_batch_size_per_gpu alone (DeepSpeed: 1)", "1");
	}
	if (total) {
		ds->train_batch_size = total; /* micro x accumulation x data-parallel ranks */
		ds->derive = hf || (micro && accum) ? TP_DS_DERIVE_NONE
			     : micro		    ? TP_DS_DERIVE_ACCUM
						    : TP_DS_DERIVE_MICRO;
		if (hf && !accum) {
			snprintf(v, sizeof v, "%llu", (unsigned long long)total);
			set(ds, "global-batch", "train_batch_size", v);
		} else
			note(ds, "%s train_batch_size %llu as micro-batch x accumulation%s x "
				 "data-parallel ranks",
			     ds->derive ? "divides" : "checks", (unsigned long long)total,
			     !micro && !accum ? " (DeepSpeed: 1)" : "");
	}
	/* precision: fp16 and bf16 exclude each other; neither is fp32 */
	const cJSON *f16 = cJSON_GetObjectItemCaseSensitive(root, "fp16");
	const cJSON *b16 = cJSON_GetObjectItemCaseSensitive(root, "bf16");
	const cJSON *b16b = cJSON_GetObjectItemCaseSensitive(root, "bfloat16");
	int ef = f16 ? enabled(&w, f16, "fp16") : 0;
	int eb = b16 ? enabled(&w, b16, "bf16") : b16b ? enabled(&w, b16b, "bfloat16") : 0;
	if (ef < 0 || eb < 0)
		goto out;
	if (ef && eb) {
		bad(&w, "fp16.enabled", "and bf16.enabled are both true: DeepSpeed takes one");
		goto out;
	}
	bool auto_prec = (f16 && is_auto(cJSON_GetObjectItemCaseSensitive(f16, "enabled"))) ||
			 (b16 && is_auto(cJSON_GetObjectItemCaseSensitive(b16, "enabled")));
	if (ef || eb)
		set(ds, "precision", ef ? "fp16.enabled" : "bf16.enabled",
		    ef ? "fp16-mixed" : "bf16-mixed");
	else if (!auto_prec)
		set(ds, "precision", "fp16 and bf16 (neither enabled)", "fp32");
	if (zero(&w, cJSON_GetObjectItemCaseSensitive(root, "zero_optimization")))
		goto out;
	if (checkpointing(&w, cJSON_GetObjectItemCaseSensitive(root, "activation_checkpointing")))
		goto out;
	/* gradient_clipping: a norm above 0 clips; DeepSpeed's default, 0, does not */
	it = cJSON_GetObjectItemCaseSensitive(root, "gradient_clipping");
	if (!it) {
		set(ds, "clip-grad", "gradient_clipping (absent: DeepSpeed's default 0)", "no");
	} else if (is_auto(it)) {
		note(ds, "left gradient_clipping = auto to --clip-grad (Hugging Face fills it from "
			 "max_grad_norm)");
	} else if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0)) {
		bad(&w, "gradient_clipping", "must be a number >= 0 or \"auto\"");
		goto out;
	} else {
		set(ds, "clip-grad", "gradient_clipping", it->valuedouble > 0 ? "yes" : "no");
	}
	if ((it = cJSON_GetObjectItemCaseSensitive(root, "optimizer")) && optimizer(&w, it))
		goto out;
	if (data_types(&w, cJSON_GetObjectItemCaseSensitive(root, "data_types")))
		goto out;
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

int tp_ds_read(const char *path, struct tp_ds *ds, char *err, size_t errlen)
{
	char *text = cfg_read_file(path, "deepspeed config", DS_MAX_BYTES, err, errlen);
	int rc;

	if (!text)
		return -1;
	rc = tp_ds_parse(text, path, ds, err, errlen);
	free(text);
	return rc;
}
