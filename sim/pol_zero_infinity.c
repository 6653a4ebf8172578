/*
 * pol_zero_infinity — ZeRO-Infinity (Rajbhandari et al., SC'21, arXiv 2104.07857): ZeRO-3 with
 * offload_param and offload_optimizer on NVMe (zero-infinity) or on the CPU (zero3-offload, the
 * usual DeepSpeed recipe for fine-tuning 70B on one node; DeepSpeed config docs).
 *
 * ZeRO-3 over the data-parallel ranks: each rank's shard of the compute-dtype weights lives on
 * NVMe and is read into pinned DRAM, copied to the GPU and all-gathered, layer by layer, for the
 * forward and again for the backward (prefetched: the paper's overlap-centric design), but for
 * the first max_in_cpu trainable parameters of the shard (--max-in-cpu, DeepSpeed's
 * offload_param.max_in_cpu, 1e9 by default), whose copy stays in a pinned DRAM buffer and is
 * fetched and rewritten there (stage3.py, _create_param_groups_fp16_flat_cpu_memory moves them
 * "permanently to CPU"; _reassign_or_swap_out_partitioned_parameters copies the step's new
 * weights into it rather than swapping them out) [A: source], spread over the layers as a share
 * of every block here where DeepSpeed keeps the first sub-groups whole. Gradients
 * are reduce-scattered, copied down and written to NVMe in fp32 (4 B/param). After backward the
 * optimizer runs in chunks: NVMe -> DRAM (12 B/param of state + 4 B of gradient) -> CPU AdamW ->
 * NVMe (12 B/param, and the new compute-dtype weights of the parameters on NVMe, 2 B/param:
 * step.c, update), serialised after backward (Smart-Infinity Table I, published.md 9.3).
 * DRAM (published.md 9.5): the pinned parameter swap buffers, 8 x 1 GB in the Smart-Infinity
 * configuration (or each the largest parameter partition), and the optimizer sub-group being
 * stepped, sub_group_size parameters x 18 B (fp32 master, m, v, gradient and the fp16 copy);
 * both are pinned allocations, which MemAscend finds take about twice their size in practice,
 * and each rank (process) pins its own, so a node holds its ranks' sets; plus the reserve.
 * Activation checkpoints stay on the GPU, or (the second variant) go to DRAM as DeepSpeed's
 * activation_checkpointing.cpu_checkpointing does, which the ZeRO-Infinity paper uses for its
 * largest models (sec. 5, "offload activation memory to CPU"); sim_run keeps the faster that
 * fits.
 * zero3-offload keeps the same state in pinned DRAM instead and never touches the drives: the
 * states themselves (the pools count them), the reserve, and the pinned-allocation overhead on
 * the CPU-resident parameters (published.md 9.5: "CPU-resident fp16 params when offload_param:
 * cpu (2 Psi) ... x2"). With --offload-param no it is ZeRO-3 with offload_optimizer alone: the
 * weight shards stay on the GPUs and are all-gathered there, the updated shard goes back up
 * after the CPU step, and DRAM holds no parameters; with --offload-ratio below 1 as well
 * (DeepSpeed's ZeRO-Offload++ Twin-Flow) the first optimizer sub-groups stay on the GPU, their
 * fp32 state and gradients there, stepped by torch.optim.AdamW before or beside the CPU's
 * step of the rest (step.c, update), and only the rest goes up afterwards. With
 * --optimizer-in-backward it is PyTorch FSDP's CPU offload under torchtune's optimizer_in_bwd:
 * the CPU steps each layer as backward lands its gradients.
 * Gradients leave the GPU as DeepSpeed's ZeRO-3 copies them (step.c grads_to_host: the
 * micro-batches' sum round-trips through pinned DRAM, the boundary's sum goes down in fp32);
 * FSDP's CPU offload copies each shard down once.
 */
#include <math.h>
#include <stdio.h>

#include "step.h"

/* bytes per parameter of a sub-group in flight: 16-18 B (published.md 9.5) [D] */
#define SUB_GROUP_BYTES 18.0
/* pinned-allocation overhead: "≈ x2 per MemAscend" (published.md 9.5; arXiv 2505.23254) [C]; the
 * ceiling of one mechanism behind it: PyTorch's CachingHostAllocator, which DeepSpeed's
 * pin_memory() buffers go through, rounds each pinned allocation up to the next power of two
 * (pytorch/pytorch#150517; LMCache#1147: 5 GiB pins 8) [B], 1-2x by size, not modelled per
 * allocation */
#define PINNED_OVERHEAD 2.0

/* Where ZeRO-3's offloaded state lives: on NVMe (offload_param and offload_optimizer: nvme) or
 * in pinned DRAM (: cpu). */
enum tier { ON_NVME, ON_CPU };

static int place_with(struct step_ctx *x, int v, char *err, size_t errlen, enum tier t)
{
	if (step_ckpt_variant(x, v))
		return 1;
	if (step_require_dp_only(x, err, errlen))
		return -1;
	if (t == ON_NVME && x->hw->flash_count == 0) {
		snprintf(err, errlen, "policy zero-infinity needs flash drives: give --flash NAME:COUNT");
		return -1;
	}
	double on_flash = t == ON_NVME ? 1 : 0;
	/* dram_fixed is a node's: what each rank (process) pins counts its ranks on the node, not
	 * the data-parallel degree, which spans the nodes */
	const struct sim_config *c = x->c;
	double ranks = step_node_gpus(x->hw, c->layout.dp);
	x->pl.fetch = FETCH_STREAM;
	x->pl.weights_on_flash = on_flash;
	x->pl.shard_stream = true;
	x->pl.grads = GRADS_HOST;
	x->pl.grads_copy = COPY_DS_ZERO3;
	x->pl.grads_on_flash = on_flash;
	x->pl.update = UPD_CPU_AFTER;
	x->pl.opt_on_flash = on_flash;
	x->pl.pipe_read = c->swap_read_ahead && t == ON_NVME;
	x->pl.pipe_write = c->swap_write_behind && t == ON_NVME;
	if (t == ON_CPU && c->params_on_gpu) {
		/* --offload-param no: ZeRO-3 with offload_optimizer alone, the common config when
		 * the parameter shards fit. Each GPU keeps its shard of the compute-dtype
		 * parameters and all-gathers each block for forward and backward as ZeRO-3 on the
		 * GPU does; gradients go down as with the parameters offloaded, the CPU steps the
		 * fp32 state after backward and the updated shard goes back up (stage3.py: the
		 * fp16 partitions live on the device unless offload_param is set) [A: DeepSpeed
		 * source and config docs]. No pinned parameter copy: the reserve alone. */
		x->pl.fetch = c->layout.dp > 1 ? FETCH_GATHER : FETCH_RESIDENT;
		x->pl.dram_fixed = mdl_dram_reserve(&x->hw->host);
		/* --offload-ratio: Twin-Flow keeps the first sub-groups on the GPU */
		x->pl.opt_gpu = step_twin_gpu_share(
		    c, (double)mdl_job_trainable(&x->w->arch, &x->job) / c->layout.dp);
		return 0;
	}
	if (t == ON_CPU) {
		/* optimizer in backward (--optimizer-in-backward, one micro-batch per step): the CPU
		 * steps each layer's shard as backward lands its gradients, overlapping the rest of
		 * backward, as PyTorch FSDP with CPU offload runs torchtune's optimizer_in_bwd (the
		 * step is a post-accumulate-grad hook per parameter:
		 * Tensor.register_post_accumulate_grad_hook; torchtune full_finetune_distributed
		 * with fsdp_cpu_offload) [B: torchtune and PyTorch source] */
		/* --grad-sync last: FSDP's CPU offload under no_sync takes the reduced shard down
		 * once, at the last micro-batch (step.c, grads_synced_last), none of DeepSpeed's
		 * sum round trip */
		if (c->grad_sync_last)
			x->pl.grads_copy = COPY_PLAIN;
		if (c->opt_in_bwd) {
			x->pl.update = UPD_CPU_OVERLAP;
			/* FSDP copies each reduce-scattered gradient shard down once, in its
			 * reduce dtype, for the CPU to step (_fsdp_collectives.py foreach_reduce);
			 * none of DeepSpeed's sum round trip or fp32 copy */
			x->pl.grads_copy = COPY_PLAIN;
		}
		/* the pinned fp16 parameters counted once more: the allocation overhead over the
		 * pool that holds them, the partitions of the node's ranks */
		struct mdl_states st;
		mdl_job_states(&x->w->arch, &x->job, &st);
		x->pl.dram_fixed = mdl_dram_reserve(&x->hw->host) +
				   (PINNED_OVERHEAD - 1) * st.weights_bytes * ranks / c->layout.dp;
		return 0;
	}
	/* each rank pins its own sub-group in flight and its own parameter swap buffers (one
	 * DeepSpeedCPUAdam step and one AsyncPartitionedParameterSwapper per process) */
	double shard = (double)mdl_job_trainable(&x->w->arch, &x->job) / c->layout.dp;
	double staging = fmin(step_sub_group(c), shard) * SUB_GROUP_BYTES;
	/* the parameter swap buffers: the config's (--deepspeed) or the plan's own; DeepSpeed
	 * asserts that each holds the largest parameter partition, so a smaller one is refused */
	double need = step_param_buffer_elements(&x->w->arch, &x->job, c->layout.dp);
	double largest = step_param_partition(&x->w->arch, c->layout.dp);
	if (c->param_buffer_size > 0 && c->param_buffer_size < largest) {
		snprintf(err, errlen,
			 "--deepspeed: zero_optimization.offload_param.buffer_size %.0f is below the "
			 "largest parameter partition, %.0f elements on %u rank%s: DeepSpeed asserts "
			 "'More elements than buffer size' (allowed: at least %.0f)",
			 c->param_buffer_size, largest, c->layout.dp, c->layout.dp == 1 ? "" : "s",
			 largest);
		return -1;
	}
	double buffers = (c->param_buffers ? c->param_buffers : STEP_PARAM_BUFFERS) *
			 mdl_job_weight_bytes(&x->job) *
			 (c->param_buffer_size > 0 ? c->param_buffer_size : need);
	/* the weights kept in DRAM (--max-in-cpu): the pools count them (a share of the weights
	 * off flash), and the pinned buffer's overhead here, as zero3-offload's */
	struct mdl_states st;
	mdl_job_states(&x->w->arch, &x->job, &st);
	double kept = fmin(shard, fmax(c->max_in_cpu, 0)) * mdl_job_weight_bytes(&x->job);
	double per_rank = st.weights_bytes / c->layout.dp;
	x->pl.weights_on_flash = per_rank > 0 ? fmax(0, 1 - kept / per_rank) : 1;
	x->pl.dram_fixed = mdl_dram_reserve(&x->hw->host) +
			   PINNED_OVERHEAD * ranks * (buffers + staging) +
			   (PINNED_OVERHEAD - 1) * ranks * kept;
	return 0;
}

static int place_nvme(struct step_ctx *x, int v, char *err, size_t errlen)
{
	return place_with(x, v, err, errlen, ON_NVME);
}

static int place_cpu(struct step_ctx *x, int v, char *err, size_t errlen)
{
	return place_with(x, v, err, errlen, ON_CPU);
}

const struct sim_policy sim_pol_zero_infinity = {
	"zero-infinity", "ZeRO-3 with weights and optimizer state on NVMe", SIM_TIERED, 3, 2,
	false, true, place_nvme};

const struct sim_policy sim_pol_zero3_offload = {
	"zero3-offload", "ZeRO-3 with weights and optimizer state in DRAM, AdamW on the CPU",
	SIM_TIERED, 3, 2, false, true, place_cpu};
