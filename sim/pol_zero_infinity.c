/*
 * pol_zero_infinity — ZeRO-Infinity (Rajbhandari et al., SC'21, arXiv 2104.07857) with
 * offload_param and offload_optimizer on NVMe.
 *
 * ZeRO-3 over the data-parallel ranks: each rank's shard of the compute-dtype weights lives on
 * NVMe and is read into pinned DRAM, copied to the GPU and all-gathered, layer by layer, for the
 * forward and again for the backward (prefetched: the paper's overlap-centric design). Gradients
 * are reduce-scattered, copied down and written to NVMe in fp32 (4 B/param). After backward the
 * optimizer runs in chunks: NVMe -> DRAM (12 B/param of state + 4 B of gradient) -> CPU AdamW ->
 * NVMe (12 B/param), serialised after backward (Smart-Infinity Table I, published.md 9.3).
 * DRAM (published.md 9.5): the pinned aio buffers, 8 x 1 GB in the Smart-Infinity
 * configuration, and the optimizer sub-group being stepped, sub_group_size parameters x 18 B
 * (fp32 master, m, v, gradient and the fp16 copy); both are pinned allocations, which MemAscend
 * finds take about twice their size in practice; plus the reserve.
 */
#include <math.h>
#include <stdio.h>

#include "step.h"

#define AIO_BUFFERS (8 * 1e9)
/* DeepSpeed ZeRO-3 "sub_group_size" default, 1e9 parameters (DeepSpeed config docs) [A] */
#define SUB_GROUP_PARAMS 1e9
/* bytes per parameter of a sub-group in flight: 16-18 B (published.md 9.5) [D] */
#define SUB_GROUP_BYTES 18.0
/* pinned-allocation overhead: "≈ x2 per MemAscend" (published.md 9.5; arXiv 2505.23254) [C] */
#define PINNED_OVERHEAD 2.0

static int place(struct step_ctx *x, int v, char *err, size_t errlen)
{
	(void)v;
	if (step_require_dp_only(x, err, errlen))
		return -1;
	if (x->hw->flash_count == 0) {
		snprintf(err, errlen, "policy zero-infinity needs flash drives: give --flash NAME:COUNT");
		return -1;
	}
	x->pl.fetch = FETCH_STREAM;
	x->pl.weights_on_flash = 1;
	x->pl.shard_stream = true;
	x->pl.ckpt = W_GPU;
	x->pl.grads = GRADS_HOST;
	x->pl.grads_on_flash = 1;
	x->pl.update = UPD_CPU_AFTER;
	x->pl.opt_on_flash = 1;
	double shard = (double)mdl_job_trainable(&x->w->arch, &x->job) / x->c->layout.dp;
	double staging = fmin(SUB_GROUP_PARAMS, shard) * SUB_GROUP_BYTES * x->c->layout.dp;
	x->pl.dram_fixed = STEP_DRAM_RESERVE + PINNED_OVERHEAD * (AIO_BUFFERS + staging);
	return 0;
}

const struct sim_policy sim_pol_zero_infinity = {
	"zero-infinity", "ZeRO-3 with weights and optimizer state on NVMe", SIM_TIERED, 1, place};
