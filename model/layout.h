/*
 * layout — what each GPU holds under tensor, pipeline and data parallelism with ZeRO.
 *
 * TP (Megatron) splits every layer's weights and most activations t ways; sequence parallelism
 * also splits the norms, dropouts and layer inputs. PP splits the layers into equal stages, or,
 * where pp x vp divides the layers plus two and not the layers, as Megatron-Core's
 * --account-for-embedding-in-pipeline-split and --account-for-loss-in-pipeline-split do: the
 * embedding and the loss count as a layer each, so the first chunk of the first stage and the
 * last chunk of the last stage hold one layer fewer (NeMo's Llama 3.1 405B recipe: 126 layers
 * on pp 8 x vp 2, chunks of 8 with 7 at the ends); the
 * first stage also holds the embeddings, the last the final norm, lm_head (a tied head keeps a
 * copy of the embedding there, as Megatron does) and the logits. Under the 1F1B schedule stage p
 * keeps activations for min(pp - p, m) micro-batches in flight (Narayanan et al. 2021, sec. 2.2).
 * The interleaved schedule gives each GPU vp chunks of layers/(pp vp) layers, round-robin over
 * the stages; Megatron's warm-up runs 2 (pp - p - 1) + (vp - 1) pp chunk forwards before the
 * first backward, so stage 0 holds pp + (pp - 1)/vp micro-batches of its layers' activations,
 * Korthikanti et al. 2022's factor 1 + (pp - 1)/(pp vp) (sec. 4.2.3).
 * ZeRO over the dp ranks (a hybrid layout: over groups of `shard` of them, each group a
 * replica) shards optimizer state (stage 1), + gradients (2), + weights (3)
 * (Rajbhandari et al. 2020, sec. 5); stage 3 adds the gathered working set of one layer and the
 * prefetch of the next (ZeRO-Infinity, arXiv 2104.07857, sec. 4: model-state working memory).
 * The per-GPU figure is that of the most loaded stage.
 *
 * Failure: mdl_layout_check() returns -1 naming the degree that does not divide, ZeRO 2-3
 * with pipeline parallelism (DeepSpeed refuses that combination), interleaving without
 * pipeline parallelism, or a shard group without ZeRO or with expert parallelism.
 */
#ifndef TIERPLAN_LAYOUT_H
#define TIERPLAN_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "job.h"

struct mdl_layout {
	uint32_t tp, pp, dp;
	uint32_t zero; /* 0..3 */
	bool sp;       /* sequence parallel (only meaningful with tp > 1) */
	uint32_t vp;   /* virtual pipeline stages per GPU (interleaved 1F1B); 0 or 1 = none */
	/* expert parallelism: each rank of a data-parallel group of ep holds experts / ep of every
	 * MoE layer and tokens reach their experts by all-to-all (Megatron-Core's
	 * --expert-model-parallel-size, carved out of the data- and context-parallel ranks); 0 or
	 * 1 = none */
	uint32_t ep;
	/* context parallelism: cp GPUs split every sequence, each holding 1/cp of its tokens and
	 * exchanging keys and values around a ring for attention (Megatron-Core's
	 * --context-parallel-size); 0 or 1 = none */
	uint32_t cp;
	/* hybrid sharding: ZeRO's partition spans `shard` of the dp ranks (times cp) and the
	 * dp / shard groups of them each hold a replica, so parameter all-gathers and gradient
	 * reduce-scatters stay within a group and the replicas all-reduce their shard of the
	 * gradients (PyTorch FSDP's HYBRID_SHARD, FSDP2's HSDP mesh: torchtitan's
	 * data_parallel_shard_degree; DeepSpeed's MiCS mics_shard_size; Megatron-Core's
	 * distributed optimizer over --num-distributed-optimizer-instances); 0 = all dp ranks */
	uint32_t shard;
	/* expert tensor parallelism: the TP ranks each routed expert's matrices split over, a
	 * divisor of tp (Megatron-Core's --expert-tensor-parallel-size, "MoE parallel folding":
	 * below tp, the expert-parallel group spans tp / etp TP ranks of each data-parallel and
	 * context-parallel rank too, whole experts on fewer ranks and no gather of the routed
	 * tokens across TP); 0 = tp, Megatron-Core's default */
	uint32_t etp;
	/* an uneven pipeline: the decoder layers on the first and on the last stage, the rest split
	 * evenly over the stages between (Megatron-Core's --decoder-first-pipeline-num-layers and
	 * --decoder-last-pipeline-num-layers; each stage's layers split evenly over its virtual
	 * chunks); 0 = as the even split would give them */
	uint32_t first, last;
};

static inline uint32_t mdl_layout_ep(const struct mdl_layout *l)
{
	return l->ep > 1 ? l->ep : 1;
}

/* The expert TP size: etp where it is set, else tp. */
static inline uint32_t mdl_layout_etp(const struct mdl_layout *l)
{
	return l->etp >= 1 && l->etp < l->tp ? l->etp : l->tp;
}

/* What a GPU keeps of the routed experts' states, times tp (the dense share a TP rank keeps is
 * divided by tp, the experts' by etp): tp / (ep x etp); 1 / ep with the experts split as the
 * dense linears are. */
static inline double mdl_layout_expert_keep(const struct mdl_layout *l)
{
	return (double)l->tp / ((double)mdl_layout_ep(l) * mdl_layout_etp(l));
}

static inline uint32_t mdl_layout_cp(const struct mdl_layout *l)
{
	return l->cp > 1 ? l->cp : 1;
}

/* The data-parallel ranks a ZeRO partition spans: shard where it splits dp, else all dp. */
static inline uint32_t mdl_layout_shard(const struct mdl_layout *l)
{
	return l->shard >= 1 && l->shard < l->dp ? l->shard : l->dp;
}

/* The GPUs of a layout: tp x cp x pp x dp. */
static inline uint64_t mdl_layout_gpus(const struct mdl_layout *l)
{
	return (uint64_t)l->tp * l->pp * l->dp * mdl_layout_cp(l);
}

/* The virtual stages per GPU, 1 when the layout does not interleave. */
static inline uint32_t mdl_layout_vp(const struct mdl_layout *l)
{
	return l->vp > 1 ? l->vp : 1;
}

struct mdl_gpu_memory {
	double weights, gradients, optimizer, activations, other, total;
	/* of activations: what the transformer layers keep for backward over the micro-batches in
	 * flight, without the embedding, the logits and the recompute working set (the quantity
	 * of Korthikanti et al. 2022, figure 1) */
	double layer_activations;
	uint32_t stage; /* the pipeline stage these figures belong to */
	/* a floor of the simulated peak: what some stage holds at once in every step, not the
	 * total's sum of transients that do not coexist (the planner prunes by it) */
	double floor;
};

/*
 * CUDA context plus the framework's kernels and library handles on one GPU, resident before the
 * first tensor: 1,343 MB measured with nvidia-smi after torch.ones(1).cuda() on a V100
 * (Hugging Face transformers docs, "Model training anatomy"; published.md B.7).
 */
#define MDL_CUDA_CONTEXT_BYTES 1343e6

/* Whether pp stages of vp chunks split the layers: evenly (*ends false), or with the embedding
 * and the loss counted as layers (*ends true: the end chunks one layer lighter, each keeping
 * one at least). ends may be NULL. */
bool mdl_layout_splits(const struct mdl_arch *a, uint32_t pp, uint32_t vp, bool *ends);

/* The layout's context, expert and expert-TP groups as the option names write them after dp,
 * " cp2 ep8 etp1" (each only where it is more than one, or below tp; the expert TP size only
 * with `etp`), into buf; "" for none. */
void mdl_layout_groups_str(const struct mdl_layout *l, bool etp, char *buf, size_t n);

/* Whether the layout sets the first or the last stage's layers (an uneven pipeline). */
static inline bool mdl_layout_uneven(const struct mdl_layout *l)
{
	return l->pp > 1 && (l->first || l->last);
}

/* Whether the layout's stages and chunks split the model's layers: an uneven pipeline's, else
 * mdl_layout_splits. */
bool mdl_layout_split_ok(const struct mdl_arch *a, const struct mdl_layout *l);

/* Layers of chunk c of stage p, and of the whole stage (its vp chunks); the layout must split
 * the layers (mdl_layout_check). */
uint32_t mdl_layout_chunk_layers(const struct mdl_arch *a, const struct mdl_layout *l, uint32_t p,
				 uint32_t c);
uint64_t mdl_layout_stage_layers(const struct mdl_arch *a, const struct mdl_layout *l, uint32_t p);
/* The smallest share of a chunk's layers that run the job's recompute mode (mdl_job_rc_layers:
 * under --recompute-layers the first ones, the rest none); 1 where every layer of every chunk
 * does. */
double mdl_layout_rc_share(const struct mdl_arch *a, const struct mdl_job *j,
			   const struct mdl_layout *l);

/* Checks that tp * pp * dp == gpus and that the degrees divide the model. 0 ok, -1 with err. */
int mdl_layout_check(const struct mdl_arch *a, const struct mdl_layout *l, uint64_t gpus,
		     char *err, size_t errlen);

/* Peak bytes on one GPU of the most loaded stage, m micro-batches per optimizer step. */
void mdl_layout_memory(const struct mdl_arch *a, const struct mdl_job *j,
		       const struct mdl_layout *l, uint64_t m, struct mdl_gpu_memory *mem);

/* ZeRO sharding of whole-model state bytes over dp ranks (the paper's Table 1 arithmetic). */
void mdl_zero_shard(uint32_t zero, uint32_t dp, double *weights, double *grads, double *opt);

/* The states one GPU of an expert-parallel group keeps before ZeRO and before the common division
 * by tp: the dense part of all whole, `keep` of experts (mdl_layout_expert_keep: 1 / ep where
 * the experts split over TP as the dense linears do) in params and bytes of weights, gradients
 * and optimizer. */
void mdl_ep_local(const struct mdl_states *all, const struct mdl_states *experts, double keep,
		  struct mdl_states *local);

/* Per-GPU weights, gradients and optimizer bytes of a stage whose states are all and whose
 * routed experts' share of them is experts, over tp: what ZeRO shards is all / dp (expert state
 * is sharded over the ranks that hold the same expert slices, tp x dp / (ep x etp) of them, so
 * every rank keeps experts / (tp x dp) whatever the split), the rest keeps the dense part whole
 * and `keep` of the experts (mdl_ep_local). */
void mdl_ep_shard(uint32_t zero, uint32_t dp, double keep, const struct mdl_states *all,
		  const struct mdl_states *experts, double tp, double *weights, double *grads,
		  double *opt);

#endif
