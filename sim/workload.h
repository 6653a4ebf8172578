/*
 * workload — what one simulated training step takes: the workload (model, job, batch, tokens),
 * the configuration (layout, micro-batches, policy, prefetch depth), the policy's ops struct,
 * and the constants the step builder shares with its callers.
 *
 * The step builder (sim/step.c) owns these: it reads them and defines SIM_GEMM_EFFICIENCY;
 * sim_run (sim/sim.c) and the planner sit above it and include this header too, so no module
 * of sim/ needs the declarations of one above it. Types only; nothing here fails.
 */
#ifndef TIERPLAN_WORKLOAD_H
#define TIERPLAN_WORKLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../model/arch.h"
#include "../model/hw.h"
#include "../model/job.h"
#include "../model/layout.h"

struct sim_workload {
	struct mdl_arch arch;
	struct mdl_job job;
	uint64_t grad_accum;   /* micro-batches per step; 0 = from global_batch (see plan.h) */
	uint64_t global_batch; /* sequences per optimizer step, rounded up per layout */
	double tokens;	       /* tokens to train on */
};

enum sim_kind { SIM_GPU_ONLY, SIM_TIERED };

#define SIM_MAX_PP 64

struct step_ctx;

struct sim_policy {
	const char *name, *summary;
	enum sim_kind kind;
	/* the ZeRO stage it runs over the data-parallel ranks, whatever --zero says (a host-tier
	 * policy shards as its framework does: tp_sim_config refuses another stage and echoes
	 * this one); -1: the layout's (policy gpu) */
	int zero;
	int variants; /* placements the policy offers; sim_run keeps the best that fits */
	bool own_recompute; /* its variants choose the recompute mode (else sim_run tries each
			     * mode with each variant unless --recompute fixed one) */
	bool fallback;      /* a variant runs only when the one before it (same recompute) did
			     * not fit: later variants only add traffic */
	/* Checks the layout and chooses the placement of variant v. 0 ok, -1 + err. */
	int (*place)(struct step_ctx *x, int v, char *err, size_t errlen);
};

/*
 * Megatron-Core's token dispatchers under expert parallelism (--moe-dispatcher): alltoall (its
 * default, --moe-token-dispatcher-type alltoall) sends a token once for each of its top-k
 * experts, as many copies as experts it is routed to; deepep and hybridep (--moe-token-
 * dispatcher-type flex --moe-flex-dispatcher-backend deepep|hybridep) send it once to each GPU
 * holding one of its experts and, across nodes, once over the network to each node holding
 * one, forwarded there over NVLink (step.c, step_ep_wire). The two flex backends move the same
 * bytes in the model.
 */
enum sim_dispatcher { SIM_DISPATCH_ALLTOALL, SIM_DISPATCH_DEEPEP, SIM_DISPATCH_HYBRIDEP };
/* SMs a flex dispatcher's dispatch and combine kernels run on unless told: DeepEP's default
 * for its normal kernels, 20 (Megatron-Core transformer_config.py, moe_deepep_num_sms: "historical
 * default 20"; DeepEP's Buffer.num_sms) [A: source]; HybridEP's own default is not stated there
 * ("None uses the default from DeepEP") and is taken as the same [C] */
#define SIM_FLEX_SMS 20

struct sim_config {
	struct mdl_layout layout;
	uint64_t grad_accum; /* micro-batches per step, >= 1 */
	const struct sim_policy *policy;
	uint32_t prefetch;	/* weight buffers for streaming policies; 0 = 2 */
	double gemm_efficiency; /* fraction of dense peak; 0 = SIM_GEMM_EFFICIENCY */
	bool recompute_fixed;	/* the user chose --recompute: policies keep it */
	bool loss_fixed;	/* the user chose --loss: policies keep it */
	/* --overlap-grad-reduce no: the DP gradient reduction runs after each stage's backward
	 * and the compute waits for it (Megatron-LM without --overlap-grad-reduce, DeepSpeed with
	 * overlap_comm false); by default it overlaps backward bucket by bucket (PyTorch DDP,
	 * FSDP, Megatron-Core's --overlap-grad-reduce) */
	bool no_grad_overlap;
	/* --overlap-param-gather yes: Megatron-Core's distributed optimizer (--zero 1) leaves the
	 * all-gather of the updated parameters to the next step, whose forward waits for each
	 * layer's as it reaches it, the gathers dispatched a bucket ahead (its forward pre-hooks,
	 * distributed/distributed_data_parallel.py; Megatron-LM's --overlap-param-gather,
	 * default off, which requires the distributed optimizer and --overlap-grad-reduce; NeMo's
	 * and Megatron-Bridge's recipes turn it on); by default (false) the all-gather follows
	 * the optimizer step and the step waits for it (DeepSpeed ZeRO-1/2 gathers so too) */
	bool overlap_param_gather;
	/* --tp-comm-overlap yes: TP collectives pipelined with the GEMMs (Megatron-Core with
	 * Transformer Engine userbuffers; needs sequence parallelism); default no, as
	 * Megatron-Core's */
	bool tp_comm_overlap;
	/* --ep-overlap yes: Megatron-Core's --overlap-moe-expert-parallel-comm with
	 * --delay-wgrad-compute (its combined 1F1B schedule: the forward of one micro-batch runs
	 * layer by layer beside the backward of another, each pass's expert all-to-alls on a
	 * stream of their own behind the other pass's compute; sim_ep_overlap says where it runs);
	 * default no, as Megatron-Core's */
	bool ep_overlap;
	/* --shared-expert-overlap yes: Megatron-Core's moe_shared_expert_overlap, the shared
	 * experts' linears on a stream of their own beside the token dispatcher's all-to-alls
	 * (shared_experts.py: fc1 during the dispatch, fc2 during the combine; step.c, compute);
	 * needs policy gpu and shared experts, not with --ep-overlap, as Megatron-Core asserts */
	bool shared_overlap;
	/* --moe-dispatcher: how expert parallelism moves the routed tokens (step.c, step_ep_wire);
	 * zero, Megatron-Core's default alltoall */
	enum sim_dispatcher dispatcher;
	/* --moe-dispatcher-sms N: the SMs a flex dispatcher's kernels hold while they run
	 * (Megatron-Core's moe_flex_dispatcher_num_sms); with --ep-overlap the compute beside them
	 * runs on the rest (step.c, compute). 0: SIM_FLEX_SMS */
	uint32_t dispatcher_sms;
	/* --optimizer-in-backward yes: each block's optimizer step runs as soon as its gradients
	 * are ready and frees them, so no full gradient buffer exists (torchtune's
	 * optimizer_in_bwd, PyTorch's register_post_accumulate_grad_hook); policy gpu, one GPU
	 * per replica and no gradient accumulation, as torchtune requires */
	bool opt_in_bwd;
	/* --activation-offload yes: the activations forward keeps for backward (with recompute,
	 * the checkpoints) go to pinned DRAM on the copy stream as each block finishes and come
	 * back one block ahead of its backward (torchtune's OffloadActivations, a
	 * saved_tensors_hooks context on its own CUDA stream); policy gpu */
	bool act_offload;
	/* --activation-offload-layers N: only the first N layers of each pipeline chunk offload,
	 * the rest keep their activations on the GPU (Megatron-Core's cpu_offloading_num_layers,
	 * Transformer Engine's CPU offload of whole layers, double-buffered back ahead of
	 * backward); 0: every layer */
	uint32_t act_offload_layers;
	/* --fp8-all-gather: FSDP / ZeRO-3 gathers the FP8 linears' weights in FP8, cast on each
	 * rank's shard (torchao's enable_fsdp_float8_all_gather); policy gpu, --zero 3, fp8 */
	bool fp8_all_gather;
	/* --offload-param no: policy zero3-offload keeps the parameters partitioned on the GPUs
	 * (ZeRO-3 with offload_optimizer alone); by default (false) they live in pinned DRAM */
	bool params_on_gpu;
	/* --offload-ratio R (DeepSpeed ZeRO-Offload++ Twin-Flow, offload_optimizer.ratio): with
	 * params_on_gpu, a rank's first int((1 - R) x n) of its n optimizer sub-groups are stepped
	 * on its GPU by torch.optim.AdamW, the rest by CPU Adam (step_twin_gpu_share). Held as
	 * 1 - R, so that a zeroed config offloads the whole optimizer, DeepSpeed's default R = 1 */
	double twin_gpu;
	/* --clip-grad no: no torch.nn.utils.clip_grad_norm_ before a GPU optimizer step; by
	 * default (false, so every caller's zeroed config agrees with the command line) a foreach
	 * norm reads the GPU's gradients, a scalar all-reduce combines the norms, a foreach
	 * multiply reads and writes them (it runs whatever the coefficient, to avoid a host
	 * sync) */
	bool no_clip_grad;
	/* --foreach-optimizer yes: a GPU AdamW step runs PyTorch's _multi_tensor_adam (the
	 * default of torch.optim.AdamW on CUDA without fused=True) instead of one fused kernel:
	 * SIM_FOREACH_ADAM_PASSES times the traffic, and its sqrt of the second moment is a new
	 * tensor list, a temporary as large as that state */
	bool opt_foreach;
	/* --swap-pipeline read|write|both: ZeRO-Infinity's optimizer swapper reads the next tile
	 * while a tile steps (pipeline_read), writes the previous one (pipeline_write); by default
	 * neither, as DeepSpeed's */
	bool swap_read_ahead, swap_write_behind;
	/* --cpu-checkpointing: the DeepSpeed offload policies' checkpoints in DRAM or on the GPU
	 * (step_ckpt_variant); auto: the faster that fits */
	enum sim_cpu_ckpt { SIM_CPU_CKPT_AUTO, SIM_CPU_CKPT_YES, SIM_CPU_CKPT_NO } cpu_ckpt;
	/* --weights-up in-step: ZeRO-1/2's CPU offload under fp16 as DeepSpeed 0.3-0.8 ran it,
	 * the new weights copied up tile by tile inside CPU Adam's step (step.c, update) */
	bool weights_in_step;
	/* --graph-freed next-forward: the training loop holds each micro-batch's autograd graph
	 * and logits until the next micro-batch's forward has run (its loop variables, loss and
	 * logits, reassigned then), so what the graph holds past backward (mdl_act_layer_held)
	 * and the returned logits (mdl_act_head_logits) stay on the GPU through that forward
	 * (step.c, graph_held); by default (false) both go as backward returns (Hugging Face's
	 * Trainer) */
	bool graph_next_fwd;
	/* --backward-prefetch post: a sharded block's backward gathers the next block's weights
	 * once its own backward is done (FSDP's BackwardPrefetch.BACKWARD_POST, Composer's and
	 * llm-foundry's default), so the next block waits for the gather; by default (pre) the
	 * gather is issued as the block's backward starts and runs beside it (FSDP's default
	 * BACKWARD_PRE, Accelerate's, FSDP2's implicit prefetch, DeepSpeed's trace) */
	bool bwd_prefetch_post;
	/* --checkpoint-wrap outside: the activation checkpoint wraps each FSDP-wrapped layer
	 * (transformers' gradient_checkpointing, reentrant, around the FSDP units: the Hugging
	 * Face Trainer, TRL, LLaMA-Factory, Axolotl under FSDP), not the layer inside its unit
	 * (inside, the default: accelerate's fsdp_activation_checkpointing, torchtune, torchtitan,
	 * fms-fsdp). With frozen layers (LoRA, QLoRA) each layer's checkpoint and its input's
	 * gradient then stay until backward ends (step.c, holds_checkpoints) */
	bool ckpt_outside;
	/* --grad-sync last: under FSDP (ZeRO-2/3 on the GPUs across data-parallel ranks, one
	 * pipeline stage, or its CPU offload) every micro-batch but a step's last keeps its
	 * gradients whole and unreduced on each GPU, accumulating them, and the last
	 * reduce-scatters the sum (the Hugging Face Trainer's and accelerate's no_sync; step.c,
	 * grads_synced_last); by default (each) every micro-batch reduce-scatters its own
	 * (torchtitan, torchtune, Composer) */
	bool grad_sync_last;
	/* --reduce-bucket N: elements of each of the two buckets offloaded gradients leave the GPU
	 * through (DeepSpeed's reduce_bucket_size); 0 = DeepSpeed's default 5e8 */
	double reduce_bucket;
	/* the run is DeepSpeed's (--deepspeed): under ZeRO-3 without offload it keeps a reduce
	 * bucket of reduce_bucket elements for the step (contiguous_gradients) and converts the
	 * gradients of one optimizer sub-group (sub_group elements; 0 = DeepSpeed's 1e9) to fp32
	 * at the step */
	bool deepspeed;
	double sub_group;
	/* --deepspeed's offload_param buffer_count and buffer_size under NVMe: ZeRO-Infinity's
	 * parameter swap buffers and the elements each holds; 0 = the plan's own
	 * (STEP_PARAM_BUFFERS of step_param_buffer_elements) */
	uint32_t param_buffers;
	double param_buffer_size;
	/* --max-in-cpu: ZeRO-Infinity keeps the compute-dtype copy of each rank's first
	 * max_in_cpu trainable parameters in pinned DRAM, the rest on the drives
	 * (pol_zero_infinity.c); 0 = all on the drives */
	double max_in_cpu;
	/* simulate every micro-batch instead of repeating the steady period past the first few
	 * (step.c); the tests compare the two */
	bool every_micro_batch;
	/* the caller reads a run that does not fit its GPUs only as "does not fit" (the planner
	 * once a smaller option fits): the run stops as soon as a GPU holds more than fits, and
	 * its option says that alone (eng_pool_stop; not with a paged optimizer, whose states
	 * leave the GPU as it fills); where what a GPU holds all step, or that and the floor of
	 * 1F1B's warm-up (sim.c, inflight_floor), already overflows, no pass is built */
	bool stop_unfit;
};

/* Whether policy zero3-offload runs as FSDP's CPU offload by the flags only FSDP has (no_sync
 * under --grad-sync last, transformers' checkpoint around FSDP's units, the optimizer in
 * backward) and no --deepspeed: DeepSpeed's cpu_checkpointing is then no placement of it. */
static inline bool sim_fsdp_offload(const struct sim_config *c)
{
	return c->policy && strcmp(c->policy->name, "zero3-offload") == 0 && !c->deepspeed &&
	       (c->grad_sync_last || c->ckpt_outside || c->opt_in_bwd);
}

/* Whether c's --ep-overlap runs on layout l with recompute rc: policy gpu with expert
 * parallelism, interleaving where there are pipeline stages, and no full recompute, as
 * Megatron-Core asserts (transformer_config.py: "virtual_pipeline_model_parallel_size must be
 * specified when pipeline_model_parallel_size > 1", expert_model_parallel_size > 1, "disable
 * full recomputation when enabling overlap_moe_expert_parallel_comm"). simulate refuses it
 * elsewhere (sim_run); plan's layouts outside it run without. */
static inline bool sim_ep_overlap_allows(const struct mdl_layout *l, enum mdl_recompute rc)
{
	return mdl_layout_ep(l) > 1 && (l->pp == 1 || mdl_layout_vp(l) > 1) && rc != MDL_RC_FULL;
}

static inline bool sim_ep_overlap(const struct sim_config *c, const struct mdl_layout *l,
				  enum mdl_recompute rc)
{
	return c->ep_overlap && c->policy && c->policy->kind == SIM_GPU_ONLY &&
	       sim_ep_overlap_allows(l, rc);
}

/* The SMs c's flex dispatcher's kernels hold: --moe-dispatcher-sms, else SIM_FLEX_SMS. */
static inline uint32_t sim_dispatcher_sms(const struct sim_config *c)
{
	return c->dispatcher_sms ? c->dispatcher_sms : SIM_FLEX_SMS;
}

/* Whether c's --shared-expert-overlap runs on layout l of a model with shared experts: policy
 * gpu and expert parallelism (the all-to-alls it overlaps). */
static inline bool sim_shared_overlap(const struct sim_config *c, const struct mdl_arch *a,
				      const struct mdl_layout *l)
{
	return c->shared_overlap && c->policy && c->policy->kind == SIM_GPU_ONLY &&
	       a->shared_experts && mdl_layout_ep(l) > 1;
}

/*
 * Bytes a host AdamW step touches per parameter: read fp32 master, m, v and the gradient, write
 * master, m, v and the compute-dtype copy: 4*3 + 2 read + 4*3 + 2 written = 28 B for mixed
 * precision (ZeRO-Infinity's "optimizer states read + write once", published.md 9.2), as
 * DeepSpeed's CPU Adam steps an fp32 master whatever the GPU's precision. The update is memory
 * bound on GPUs and CPUs alike; a GPU step's bytes follow the job's dtypes
 * (mdl_job_update_bytes: the same 28 B in mixed precision).
 */
#define SIM_ADAM_BYTES_PER_PARAM 28.0
/*
 * PyTorch's multi-tensor AdamW (torch/optim/adam.py _multi_tensor_adam, decoupled weight decay)
 * runs eight elementwise passes where the fused kernel runs one: mul_(params), lerp_(exp_avg,
 * grad), mul_(exp_avg_sq), addcmul_(exp_avg_sq, grad, grad), sqrt(exp_avg_sq) into a new list,
 * div_ and add_ on it, addcdiv_(params, exp_avg, it): 8 + 12 + 8 + 16 + 8 + 8 + 8 + 16 = 84 B per
 * fp32 parameter read and written, 3x the fused kernel's 28 [A: counted from the source].
 */
#define SIM_FOREACH_ADAM_PASSES 3.0

/* Sustained fraction of dense peak (see step.c for its sources). */
extern const double SIM_GEMM_EFFICIENCY;

#endif
