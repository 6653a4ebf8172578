/*
 * act — what each op of a decoder layer saves for backward, op by op.
 *
 * The inventory follows Korthikanti et al. 2022 (arXiv 2205.05198, sec. 4.1) generalised to
 * grouped-query attention, gated MLPs (SwiGLU/GeGLU), mixture-of-experts and LoRA adapters: each
 * saved tensor is listed with its bytes for one micro-batch and whether tensor parallelism splits
 * it. For a GPT layer with dropout and eager attention the list sums to s b h (34 + 5 a s / h)
 * bytes, the paper's figure; flash attention saves Q, K, V, the output and an fp32 log-sum-exp
 * per row instead of the s^2 softmax. Recompute: selective drops the attention core's saved
 * tensors; full keeps only each layer's input and rematerialises one layer at a time; op keeps
 * what torchtitan's per-op selective checkpointing keeps (mdl_op_sac_recomputed).
 * Outside the layers: the embedding output's dropout mask, the final norm and lm_head inputs, the
 * logits in compute precision and the fp32 log-softmax the loss keeps (s b V x 4 bytes).
 * FP8 (Transformer Engine): each linear layer keeps its input as the FP8 copy it cast for the
 * GEMM, 1 byte an element, while the kernels before it still write and read the compute dtype.
 * GPTQ (job.h, mdl_quant): each linear's forward keeps its dequantised weight for backward, an
 * item per half of the layer whatever the tokens (attn. and mlp.dequantised_weights).
 * LoRA: a frozen linear keeps nothing of its input (autograd keeps a matmul's input for the
 * weight gradient alone); a projection's input is kept where an adapter reading it, a
 * quantised base that keeps it (GPTQ, bitsandbytes before 0.43.2) or another op (the attention
 * kernel its output) holds it, and its item keeps 0 bytes otherwise. A fused q/k/v projection
 * (job.fused_qkv) keeps its whole output through the v view the attention saves, and carries
 * one adapter for its q, k and v targets, which drops and casts the input once.
 *
 * Sizes are doubles holding exact integers (below 2^53 for every supported input).
 */
#ifndef TIERPLAN_ACT_H
#define TIERPLAN_ACT_H

#include <stdbool.h>

#include "arch.h"
#include "job.h"

struct mdl_act_item {
	const char *name;
	double bytes; /* on one GPU of the TP group, in the dtype its kernels write and read */
	double kept;  /* of those, what backward holds: less for a linear's FP8 input (gemm_input) */
	bool attn_core; /* dropped by selective recompute */
	bool mlp;       /* belongs to the MLP half of the layer (from its norm on) */
	bool held;      /* what it keeps the graph holds past backward (mdl_act_layer_held) */
};

/* more than mdl_act_layer_items can list: 46 places add an item, several exclusive of others
 * (gated or not, eager attention's or the log-sum-exp, eager norms' or compile's rstd) */
#define MDL_ACT_MAX_ITEMS 52

/* Whether the attention keeps a fused q/k/v projection's q and k parts beside the rotated
 * copies (job.fused_qkv): with rotary positions, which copy q and k; not MLA's projections. */
static inline bool mdl_act_fused_qkv_kept(const struct mdl_arch *a, const struct mdl_job *j)
{
	return j->fused_qkv && mdl_arch_rotary(a) && !a->kv_lora_rank;
}

/* Whether the attention keeps grouped keys and values copied to every query head
 * (job.repeat_kv), for a model with groups to copy (not MLA's). */
static inline bool mdl_act_kv_repeated(const struct mdl_arch *a, const struct mdl_job *j)
{
	return j->repeat_kv && a->kv_heads < a->heads && !a->kv_lora_rank;
}

/* What --repeat-kv auto means: on under eager attention, which Hugging Face runs through
 * repeat_kv always, and for a model whose own code copies the groups (arch.kv_repeated). */
static inline bool mdl_act_repeat_kv_auto(const struct mdl_arch *a, const struct mdl_job *j)
{
	return j->attention == MDL_ATTN_EAGER || a->kv_repeated;
}

/* Saved tensors of one decoder layer for one micro-batch, ignoring recompute. tp >= 1 splits
 * what Megatron's tensor parallelism splits; sp also splits the norms, dropouts and inputs. */
int mdl_act_layer_items(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp,
			struct mdl_act_item *out);

/* torchtitan's op-level selective activation checkpointing (torchtitan/distributed/
 * activation_checkpoint.py, selective_ac_option "op"): under each layer's checkpoint the policy
 * counts the aten.mm calls and keeps the output of the 1st, 3rd, 5th ... ("saves output of all
 * compute ops, except every second mm"), the attention kernel's outputs and the collectives';
 * everything else is recomputed in backward. Experts run grouped matmuls, which are recomputed.
 * The parameters of the layer's matmuls whose outputs are recomputed (x tokens x 2 = the
 * recompute's FLOPs). */
double mdl_op_sac_recomputed(const struct mdl_arch *a);
/* Whether the policy runs matmul t again, for the layer's matmuls taken in order (k counts the
 * dense ones seen, from 0). */
bool mdl_op_sac_reruns(const struct mdl_tensor *t, int *k);

/* Bytes one layer's memory-bound kernels write (and read) once over its inventory, in the
 * compute dtype (what the FP8 casts read); *saved of it what the recompute mode keeps, so that
 * the recompute moves the difference again. */
double mdl_act_layer_moved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp, double *saved);

/*
 * Of what one layer keeps (mdl_act_layer_saved), the bytes its autograd graph holds after
 * backward, until the training loop lets go of the graph: a tensor a custom autograd Function
 * keeps as an attribute of its ctx, which autograd's release of the saved tensors after each
 * node's backward does not reach. bitsandbytes' MatMul4Bit before 0.43.2 kept its input A so
 * (ctx.tensors = (A, B), bitsandbytes/autograd/_functions.py at 0.42.0; 0.43.2 keeps
 * (None, B)) [A: source]: --quant nf4-legacy, each 4-bit linear's input, with or without
 * recompute's selective mode. Under full recompute a reentrant checkpoint runs the layer's
 * forward without a graph and its recompute's graph goes with that layer's backward: none. A
 * non-reentrant one (--checkpoint-early-stop yes: PyTorch's saved-tensor hooks) drops only what
 * autograd saves, so the ctx's inputs escape it and stay (fsdp_qlora's train.py: reentrant
 * checkpointing "can use less GPU memory with BNB QLoRA") [A: source], and mdl_act_layer_saved
 * counts them beside the checkpoint. Per-op recompute: none (no framework runs bitsandbytes'
 * 4-bit linears under it).
 */
double mdl_act_layer_held(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp);
/* The same outside the layers: a 4-bit lm_head's input (--quant-head yes). */
double mdl_act_head_held(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp);
/* Of what the head keeps (mdl_act_head), the logits the model returns in the compute dtype, which
 * a loop keeping its outputs in a variable holds past backward (step.c, graph_held): the full
 * and chunked-output losses' eager logits; 0 where none is returned whole (the chunked loss's
 * kernel), the model casts them to fp32 itself (job.upcast_in_model), or the loss keeps them in
 * its own form (fused, vocab-parallel, compiled). Per GPU of a TP group. */
double mdl_act_head_logits(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp);

/* Bytes one layer keeps between its forward and backward under the job's recompute mode. */
double mdl_act_layer_saved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp);
/* The same, the mean over a pipeline chunk of `layers` layers: under --recompute-layers its
 * first layers keep their inputs and the rest everything (mdl_job_rc_layers). */
double mdl_act_chunk_saved(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp,
			   uint32_t layers);

/* Bytes one layer holds while it is (re)computed and back-propagated: the whole item list
 * (full recompute's working set on top of the checkpoints). */
double mdl_act_layer_working(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			     bool sp);

/* The activation gradients a layer's backward holds beside its saved tensors at their most, per
 * GPU of a TP group: the MLP's (act.c). Every recompute mode, none included. */
double mdl_act_layer_grads(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp);

/* The same when the layer is recomputed and back-propagated one half at a time (attention,
 * then MLP, each from its own checkpoint): the larger half plus the other half's input. */
double mdl_act_half_working(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			    bool sp);

/* One chain of a layer's eager ops: what its kernels move beyond the inventory's passes, and
 * the largest tensor one of them reads or writes (what decides whether the chain's kernels hand
 * their tensors on through the GPU's L2 cache: step.c). Bytes per GPU. */
struct mdl_eager {
	double fwd, bwd;
	double tensor;
};
enum { MDL_EAGER_NORM, MDL_EAGER_ROPE, MDL_EAGER_ADAPTER, MDL_EAGER_CHAINS };

/* HBM bytes one layer's eager PyTorch ops move beyond what the inventory's tensors account
 * for, per GPU: its norms and rotary embedding (job.eager_ops; none when they run fused), at
 * the multiples of their op counts their measured times take, and LoRA's adapter path (its
 * casts, scaling and sum; none under torch.compile). Forward returned, backward in *bwd; chain
 * by chain in chains[MDL_EAGER_CHAINS] where it is not NULL. */
double mdl_act_layer_eager(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool sp, double *bwd, struct mdl_eager *chains);

/* Bytes saved outside the layers: before the first layer and after the last. */
double mdl_act_embed(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp);
double mdl_act_head(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp, bool sp);

/* What the loss's backward holds beyond mdl_act_head's saved tensors, for a moment before the
 * head's gradient reaches lm_head, a quantised head's dequantised copies included: bytes per
 * GPU of tp tensor-parallel and cp context-parallel ranks (0 for the chunked loss, whose chunks
 * are in mdl_act_head already). Context parallelism splits the tokens, not the head's weight:
 * each rank holds 1/cp of the token-sized tensors and the whole dequantised copies. */
double mdl_act_head_backward(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			     unsigned cp);

/* Whole model, one micro-batch, no parallelism: layers x saved + working set + embed + head. */
double mdl_act_total(const struct mdl_arch *a, const struct mdl_job *j);

#endif
