/*
 * pol_gpu — the gpu policy: every state in HBM.
 *
 * Data parallel with ZeRO stage 0-3 (Rajbhandari et al. 2020): stages 0-1 all-reduce gradients
 * once per step in buckets that overlap the last micro-batch's backward (DDP's no_sync for the
 * others); stages 2-3 reduce-scatter every micro-batch; stage 3 (FSDP) all-gathers each layer's
 * weights before its forward and again before its backward, prefetching one layer ahead. Tensor
 * parallelism (Megatron) adds synchronous all-reduces per layer; pipeline parallelism runs 1F1B.
 * The update runs on the GPU at HBM speed over the optimizer shard; stages 1-2 then all-gather
 * the updated weights. With --activation-offload the activations kept for backward alone go to
 * DRAM and back over PCIe (torchtune's activation offloading).
 */
#include "step.h"

static int place(struct step_ctx *x, int v, char *err, size_t errlen)
{
	(void)v;
	(void)err;
	(void)errlen;
	bool gathers = x->c->layout.zero == 3 && mdl_layout_shard(&x->c->layout) > 1;
	x->pl.fetch = gathers ? FETCH_GATHER : FETCH_RESIDENT;
	x->pl.ckpt = x->c->act_offload ? W_DRAM : W_GPU;
	x->pl.grads = GRADS_LOCAL;
	x->pl.update = UPD_GPU;
	return 0;
}

const struct sim_policy sim_pol_gpu = {
	"gpu", "all state in HBM: DP/ZeRO 0-3, TP, PP 1F1B", SIM_GPU_ONLY, -1, 1, false, false,
	place};
