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
 * DRAM holds the pinned aio buffers: 8 x 1 GB in the Smart-Infinity configuration (published.md
 * 9.5) per node, plus the reserve.
 */
#include <stdio.h>

#include "step.h"

#define AIO_BUFFERS (8 * 1e9)

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
	x->pl.dram_fixed = STEP_DRAM_RESERVE + AIO_BUFFERS;
	return 0;
}

const struct sim_policy sim_pol_zero_infinity = {
	"zero-infinity", "ZeRO-3 with weights and optimizer state on NVMe", SIM_TIERED, 1, place};
