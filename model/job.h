/*
 * job — what a fine-tuning job stores per parameter and how much work a step is.
 *
 * The job (method full/LoRA/QLoRA, precision, optimizer, recompute, attention kernel, sequence,
 * micro-batch) turns an architecture into model-state bytes: weights, gradients, optimizer
 * state, each for the whole unsharded model. Trainable parameters carry weights + gradients +
 * optimizer state at the precision's bytes; frozen ones (LoRA/QLoRA base) only their weights,
 * quantised for QLoRA (NF4 or GPTQ: mdl_quant, with the traffic each dequantisation moves and
 * the copy GPTQ keeps). FLOPs follow Megatron's convention (DESIGN.md): model FLOPs per
 * micro-batch = 3 x forward, forward = 2 x matmul params x tokens + 4 b s^2 (n_heads d_head)
 * per layer; recompute adds hardware FLOPs, never model FLOPs.
 *
 * Every bytes-per-parameter constant in job.c names its source. Pure functions; no failure
 * modes beyond the parsers, which return -1 with a message naming the allowed values.
 */
#ifndef TIERPLAN_JOB_H
#define TIERPLAN_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "arch.h"

enum mdl_method { MDL_FULL, MDL_LORA, MDL_QLORA };
/* fp8: the linear layers' GEMMs in FP8 (Transformer Engine, torchao float8) with bf16 weights,
 * activations and attention and fp32 master weights and optimizer state, as bf16-mixed */
enum mdl_precision { MDL_BF16_MIXED, MDL_BF16, MDL_FP16_MIXED, MDL_FP32, MDL_FP8 };
/* paged-*: bitsandbytes' PagedAdamW / PagedAdamW8bit (Hugging Face optim paged_adamw_32bit /
 * paged_adamw_8bit; torchtune's 8B single-device full fine-tune): the states of adamw / adamw8bit
 * in CUDA unified memory, which the driver evicts to host DRAM when the GPU runs short */
enum mdl_optimizer {
	MDL_ADAMW,
	MDL_ADAMW8BIT,
	MDL_SGD,
	MDL_LION,
	MDL_ADAFACTOR,
	MDL_PAGED_ADAMW,
	MDL_PAGED_ADAMW8BIT
};
/* Whether the optimizer keeps its states in pageable unified memory (the paged-* ones). */
static inline bool mdl_optimizer_paged(enum mdl_optimizer o)
{
	return o == MDL_PAGED_ADAMW || o == MDL_PAGED_ADAMW8BIT;
}
/* none; selective: Korthikanti's attention core; full: each layer from its input; op:
 * torchtitan's per-op selective checkpointing (the outputs of every other matmul and of the
 * attention kernel kept, the rest recomputed) */
enum mdl_recompute { MDL_RC_NONE, MDL_RC_SELECTIVE, MDL_RC_FULL, MDL_RC_OP };
/*
 * What --recompute selective recomputes: Megatron-Core's recompute_modules (transformer_config.py,
 * default ["core_attn"]) [A: source], as bits of mdl_job.recompute_modules. core_attn, the
 * attention core (Korthikanti et al. 2022); layernorm, the norms Megatron-Core runs as modules of
 * their own, a MoE layer's pre-MLP norm and MLA's input norm (gpt_layer_specs.py: elsewhere each
 * is fused into the linear after it, an IdentityOp); moe_act, the routed experts' activation;
 * mla_up_proj, MLA's up-projections and rotary; mlp, the dense layers' MLP. The first four
 * discard their outputs after use and make them again in backward (output-discarding
 * checkpoints), mlp checkpoints the whole submodule (act.c, job.c).
 */
enum {
	MDL_RM_CORE_ATTN = 1 << 0,
	MDL_RM_LAYERNORM = 1 << 1,
	MDL_RM_MOE_ACT = 1 << 2,
	MDL_RM_MLA_UP = 1 << 3,
	MDL_RM_MLP = 1 << 4,
};
/* The attention core: a fused flash kernel (FlashAttention-2's, as flash-attn and PyTorch's SDPA
 * run it; cuDNN's, which Transformer Engine prefers on Hopper and later: NeMo, Megatron-Core; or
 * FlashAttention in Triton, the 2022-23 kernel MosaicML's MPT ran as attn_impl triton) keeps no
 * s^2 scores and skips the causal mask's upper blocks; eager materialises the scores. */
enum mdl_attention { MDL_ATTN_FLASH, MDL_ATTN_EAGER, MDL_ATTN_CUDNN, MDL_ATTN_TRITON };
static inline bool mdl_attn_fused(enum mdl_attention a)
{
	return a != MDL_ATTN_EAGER;
}
/* The loss: full materialises the b x s x vocab logits and their fp32 upcast (Hugging Face
 * LlamaForCausalLM, torchtitan); chunked fuses lm_head and cross-entropy over chunks of tokens
 * so no full logits exist (Liger-Kernel's fused linear cross-entropy, torchtune's
 * LinearCrossEntropyLoss; aiDAPTIV avoids the full logits too); chunked-output keeps the full
 * logits but upcasts and differentiates them a chunk at a time (torchtune's
 * CEWithChunkedOutputLoss); fused keeps the full logits in the compute dtype and takes the loss
 * and its gradient in one kernel each, with no fp32 copy (flash-attn's cross-entropy kernel:
 * llm-foundry's loss_fn fused_crossentropy, MPT's default); fused-fp32 runs such a kernel on an
 * fp32 copy of the shifted logits, which it keeps and overwrites with their gradient
 * (fms-acceleration's fast_loss: Unsloth's Triton cross-entropy behind transformers' loss
 * function, 4.46 and later, whose logits.float() and shifted .contiguous() it keeps);
 * vocab-parallel is Megatron-Core's cross-entropy over the vocab-parallel logits, which keeps
 * their fp32 softmax for backward and turns it into their gradient in place (Megatron-LM's
 * default), and vocab-parallel-fused the same in fewer, fused passes (its
 * cross_entropy_loss_fusion with the native implementation: NeMo 2.0's GPTConfig and
 * Megatron-Bridge turn it on); vocab-parallel-te is that fusion with Transformer Engine's
 * kernel (cross_entropy_fusion_impl "te", Megatron-Bridge's Llama 3 providers), which writes the
 * logits' fp32 gradient in its forward and keeps that (TE 2.18 and later), and
 * vocab-parallel-te-legacy the same kernel before TE 2.18, which wrote the gradient over the
 * logits themselves, keeping nothing more. */
enum mdl_loss {
	MDL_LOSS_FULL,
	MDL_LOSS_CHUNKED,
	MDL_LOSS_CHUNKED_OUTPUT,
	MDL_LOSS_FUSED,
	MDL_LOSS_FUSED_FP32,
	MDL_LOSS_VOCAB_PARALLEL,
	MDL_LOSS_VOCAB_PARALLEL_FUSED,
	MDL_LOSS_VOCAB_PARALLEL_TE,
	MDL_LOSS_VOCAB_PARALLEL_TE_LEGACY
};
/*
 * The format of QLoRA's frozen base weights, and the kernels that train through them.
 * nf4: bitsandbytes' NF4 with double quantisation (QLoRA; PEFT, torchtune, Unsloth). Its
 * MatMul4Bit keeps the 4-bit weight and dequantises it before each GEMM: in forward, again for
 * the input gradient in backward (bitsandbytes autograd/_functions.py) [B: source].
 * nf4-legacy: the same as bitsandbytes before 0.43.2 ran it, whose MatMul4Bit also kept each
 * 4-bit linear's input for backward (act.c, inputs_kept).
 * nf4-torchao: torchao's NF4Tensor (torchtune's QLoRA; the same NF4 blocks of 64 with 8-bit
 * block constants in blocks of 256): its linear_nf4 keeps the 4-bit weight alone and
 * dequantises it in forward and again for the input gradient, as bitsandbytes does, but
 * eagerly by a chain of PyTorch ops over int64 indices rather than one kernel
 * (NF4Tensor.get_original_weight; job.c, TORCHAO_NF4_*) [B: source]; torch.compile fuses the
 * chain into one pass.
 * gptq: a GPTQ int4 checkpoint (a 4-bit zero point and an fp16 scale per group of input
 * features and output feature, an int32 group index per input feature) as auto-gptq's
 * QuantLinear trains it: transformers' docs advise turning the ExLlama kernels off to fine-tune
 * with PEFT, which leaves qlinear_cuda_old (qlinear_cuda with desc_act); trainable=True turns its
 * CUDA kernel off, and past 128 rows (kernel_switch_threshold: any training micro-batch) it runs
 * PyTorch ops: the packed int32 shifted into an int32 per weight, cast to int8, masked, the zero
 * point subtracted, times the scale into an fp16 weight, then torch.matmul, whose autograd keeps
 * that fp16 weight for the input gradient, so backward dequantises nothing and the weights stay
 * until each layer's backward (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, forward;
 * utils/import_utils.py, dynamically_import_QuantLinear) [B: source]. torch.compile fuses the
 * chain into one kernel and keeps the weight all the same (job.c).
 */
enum mdl_quant { MDL_QUANT_NF4, MDL_QUANT_NF4_LEGACY, MDL_QUANT_GPTQ, MDL_QUANT_NF4_TORCHAO };
/*
 * Whose FP8 training runs the linear layers under --precision fp8.
 * te: Transformer Engine (NeMo, Megatron-Core, llm-foundry): each GEMM input cast with its
 * transpose in one kernel, the FP8 copies kept for backward (act.c, job.c).
 * torchao: torchao's Float8Linear with tensorwise dynamic scaling (torchtitan, torchtune;
 * torchao/float8/float8_linear.py, matmul_with_hp_or_float8_args): forward keeps the 16-bit
 * input and weight (ctx.save_for_backward(input_hp, weight_hp_t)) and backward casts them again
 * for the weight and input gradients, each cast an amax pass and a cast pass [A: source].
 */
enum mdl_fp8_recipe { MDL_FP8_TE, MDL_FP8_TORCHAO };
/*
 * The parameters a bitsandbytes QLoRA base leaves unquantised (norms, biases, embeddings,
 * lm_head: transformers' get_keys_to_not_convert keeps the head, nn.Embedding is never replaced)
 * kept in fp32 (--kbit-upcast).
 * none: in the model's dtype (torchtune, Unsloth, LitGPT, Axolotl, which casts norms and
 * embeddings back for FlashAttention-2, LLaMA-Factory without upcast_layernorm; QLoRA under
 * FSDP or ZeRO-3, which TRL and Axolotl never prepare).
 * all: PEFT's prepare_model_for_kbit_training ("cast all non INT8 parameters to fp32": every
 * fp16 or bf16 parameter that is not a Params4bit; peft/utils/other.py), as a script that calls
 * it alone leaves them (PEFT's examples, Qwen's finetune.py).
 * norms: the same followed by TRL's peft_module_casting_to_bf16 under bf16 (SFTTrainer's
 * prepare_peft_model for QLoRA not sharded; the QLoRA paper's qlora.py): embeddings and lm_head
 * back to bf16, the norms left in fp32 (trl/models/utils.py, trl/trainer/utils.py) [A: source].
 * An fp32 norm weight promotes a Llama-style RMSNorm's output to fp32 (LlamaRMSNorm returns
 * weight * x.to(input_dtype)), and bitsandbytes' Linear4bit casts its output back to its
 * input's dtype (bnb.matmul_4bit(x.to(compute_dtype), ...).to(inp_dtype), bitsandbytes
 * nn/modules.py) [A: source], so from the first norm on the residual stream, the norms' and the
 * quantised linears' outputs and the MLP's intermediates are fp32 (mdl_job_stream_bytes).
 */
enum mdl_upcast { MDL_UPCAST_NONE, MDL_UPCAST_NORMS, MDL_UPCAST_ALL };
/* GPTQConfig's default group_size (transformers utils/quantization_config.py) [A] */
#define MDL_GPTQ_GROUP 128

/* Gradients kept in the parameters' dtype (PyTorch, DeepSpeed, Hugging Face) or accumulated and
 * reduced in fp32 main grads (Megatron's --accumulate-allreduce-grads-in-fp32, the 18 bytes per
 * parameter of Korthikanti et al. 2022, fig. 1). */
enum mdl_grad_dtype { MDL_GRAD_PARAM, MDL_GRAD_FP32 };

/* The fp32 master copy mixed precision steps: a whole fp32 copy (torch.amp with an fp32
 * optimizer, DeepSpeed, Megatron-Core's distributed optimizer), or only the low 16 bits of each
 * fp32 value, whose high 16 bits are the bf16 parameter itself (Apex DistributedFusedAdam's
 * store_param_remainders, which NeMo 1.x's distributed_fused_adam sets for bf16 models:
 * megatron_base_model.py setup_optimization; Transformer Engine FusedAdam's, which
 * Megatron-Core's precision-aware optimizer sets from TE 2.1: megatron/core/optimizer/__init__.py,
 * and NeMo 2.0's performance scripts turn on for BF16) [A: source]. */
enum mdl_master { MDL_MASTER_FP32, MDL_MASTER_REMAINDER };

struct mdl_job {
	enum mdl_method method;
	uint32_t lora_rank;
	unsigned lora_targets; /* MDL_T_* mask */
	enum mdl_precision precision;
	enum mdl_optimizer optimizer;
	enum mdl_recompute recompute;
	enum mdl_attention attention;
	uint64_t seq;        /* tokens per sequence */
	uint64_t micro_batch; /* sequences per GPU per micro-step */
	enum mdl_loss loss;   /* last, so that positional initialisers default to full */
	enum mdl_grad_dtype grad_dtype;
	enum mdl_master master; /* bf16 weights only: fp16 or fp32 ones keep a whole fp32 copy */
	double lora_dropout;  /* PEFT's lora_dropout probability; 0 = none (nn.Identity) */
	/* The adapters of a 16-bit base kept in fp32, each casting its input to them: PEFT 0.12
	 * and later upcast bf16 and fp16 adapter weights (get_peft_model's autocast_adapter_dtype,
	 * default true: peft/tuners/tuners_utils.py, _cast_adapter_dtype) and Linear.forward runs
	 * x.to(lora_A.weight.dtype) before the adapter (peft/tuners/lora/layer.py) [A: PEFT
	 * source]; LLaMA-Factory casts trainable parameters to fp32 unless pure_bf16. Else they
	 * are in the base's dtype (torchtune, LitGPT, NeMo; TRL 0.13's QLoRA sharded by FSDP or
	 * ZeRO-3, which calls get_peft_model(autocast_adapter_dtype=False): trl/trainer/
	 * sft_trainer.py) */
	bool lora_fp32;
	/* torch.compile: the min-cut partitioner saves the inputs of norms and pointwise ops and
	 * recomputes their outputs in backward (act.c) */
	bool compile;
	/* q, k and v projected by one linear and split into views, the rotary embedding making
	 * new q and k: the attention's saved v keeps the whole output, its q and k parts beside the
	 * rotated copies (act.c). The architecture's Hugging Face implementation sets it
	 * (mdl_arch.fused_qkv); LitGPT fuses every model's (CausalSelfAttention.attn) */
	bool fused_qkv;
	/* grouped-query attention's keys and values copied to every query head before the
	 * kernel and kept so (Hugging Face's repeat_kv: under eager attention always, under
	 * SDPA before transformers 4.48 and since with an attention mask: padded batches) */
	bool repeat_kv;
	/* Norms and rotary embeddings as PyTorch eager ops, as Hugging Face transformers and
	 * torchtune write them (LlamaRMSNorm's eight kernels through fp32 temporaries, the rotary
	 * embedding's five per tensor), not as one fused kernel each (Megatron-Core and Transformer
	 * Engine, apex, Liger, Unsloth; torch.compile fuses them too, so never with compile):
	 * more launches, more memory-bound traffic, and the norms' fp32 temporaries kept for
	 * backward (act.c, job.c) */
	bool eager_ops;
	/* A gated MLP's activation as one fused kernel that keeps only its input, gate and up
	 * together, for backward (Megatron-Core's bias_swiglu_impl: SwiGLUFunction saves its input
	 * alone, megatron/core/fusions/fused_bias_swiglu.py, under bias_activation_fusion, which
	 * Megatron-LM sets unless --no-bias-swiglu-fusion and NeMo's Llama configs set), not
	 * act(gate) * up as PyTorch ops, whose product also keeps act(gate) (Hugging Face
	 * transformers, torchtune, torchtitan, LitGPT): one intermediate-wide tensor less a layer,
	 * one kernel less (act.c, job.c) [A: source] */
	bool fused_glu;
	/* MoE: each projection of the local experts one grouped GEMM, the tokens permuted to the
	 * experts and back once (Megatron-Core --moe-grouped-gemm, torchtitan, torchtune,
	 * Transformer Engine's GroupedLinear), not a loop launching every expert's linears
	 * (Hugging Face transformers' MoE blocks) (job.c, mdl_job_launches) */
	bool grouped_experts;
	/* Documents packed into each sequence, their mean length in tokens, each attending only
	 * to itself (a per-document causal mask: variable-length fused attention over cu_seqlens,
	 * Megatron-Core's packed THD sequences, TRL's padding_free); 0: one document a sequence.
	 * A fused kernel skips the other documents' blocks; an eager one computes the whole
	 * masked s x s (job.c, mdl_job_flops) */
	uint64_t doc_tokens;
	enum mdl_quant quant; /* QLoRA's base weights (mdl_quant); ignored by full and LoRA */
	enum mdl_fp8_recipe fp8_recipe; /* --precision fp8's casts and kept inputs */
	/* GPTQ: input features sharing a zero point and scale (GPTQConfig's group_size, 128 by
	 * default; 0: one group, group_size -1), and act order (desc_act), which auto-gptq runs
	 * through qlinear_cuda's gathered dequantisation (job.c) */
	uint32_t quant_group;
	bool quant_desc_act;
	/* With full recompute, the layers of each pipeline chunk that recompute: the first N,
	 * the rest keeping their activations as without recompute (Megatron-Core's
	 * recompute_method "block" with recompute_num_layers N, which Megatron-Bridge's
	 * performance configs set: transformer_config.py, the activation recomputation guide);
	 * 0: every layer (mdl_job_rc_layers) */
	uint32_t recompute_layers;
	/* With selective recompute, the modules recomputed (MDL_RM_* bits: --recompute-modules);
	 * 0: the attention core alone (mdl_job_rc_modules) */
	uint8_t recompute_modules;
	/* With full recompute, the checkpoint stops its recompute once every tensor backward reads
	 * is made again: PyTorch's non-reentrant torch.utils.checkpoint (use_reentrant=False, the
	 * NO_REENTRANT checkpoint_wrapper) since 2.1, whose recompute raises _StopRecomputationError
	 * in the saved-tensors pack hook as the last of the tensors the original forward saved is
	 * saved again (set_checkpoint_early_stop, on by default: pytorch PR 96866) [A: PyTorch
	 * source]. A layer's last matmul whose output nothing saves (the MLP's down projection
	 * before the residual add) is then not run again (mdl_job_early_stop). Reentrant
	 * checkpoints (Megatron-Core's CheckpointFunction, DeepSpeed's, transformers' default
	 * use_reentrant=True) and non-reentrant ones before PyTorch 2.1 run the whole forward */
	bool recompute_early_stop;
	enum mdl_upcast upcast; /* QLoRA under bitsandbytes: what of the base stays fp32 */
	/* QLoRA under bitsandbytes: the untied lm_head quantised too, as Lightning's
	 * BitsandbytesPrecision does to every torch.nn.Linear it replaces (LitGPT's head
	 * included); Hugging Face transformers keeps the output embedding unquantised
	 * (get_keys_to_not_convert), torchtune's output projection is a plain linear. The head
	 * is then dequantised for each of its GEMMs (mdl_job_head_dequant) as the layers' linears
	 * are (quant_fp16) [A: source] */
	bool quant_head;
	/* QLoRA under bitsandbytes: the base quantised from an fp16 copy, as Lightning's
	 * BitsandbytesPrecision does (its _Linear4bit._quantize_weight casts each weight to
	 * torch.half before quantize_4bit), so its quant_state's dtype is fp16 and
	 * dequantize_4bit writes fp16, which MatMul4Bit casts to the compute dtype
	 * (dequantize_4bit(B, state).to(A.dtype), forward and backward): a second pass and a
	 * second copy, both alive at the cast, except under fp16. transformers and PEFT quantise
	 * the weights in the dtype they load them in (torch_dtype, the compute dtype): no cast
	 * [A: source] */
	bool quant_fp16;
	/* QLoRA under bitsandbytes: NF4 without double quantisation, each block of 64 weights
	 * keeping its fp32 absmax (transformers' BitsAndBytesConfig bnb_4bit_use_double_quant,
	 * False by default; LitGPT's bnb.nf4 against bnb.nf4-dq; Params4bit compress_statistics)
	 * [A: source]: 0.5 bits a weight of constants where double quantisation keeps 0.127 */
	bool plain_nf4;
	/* The logits cast to fp32 by the model, not by its loss function: Hugging Face
	 * transformers before 4.46 (LlamaForCausalLM and its kin: logits =
	 * self.lm_head(...).float(), or logits = logits.float() in the model's forward; 4.46 moved
	 * the cast into ForCausalLMLoss, loss_utils.py, while the model's output keeps the
	 * compute-dtype logits) [A: source]. The compute-dtype logits are then a temporary freed
	 * at the cast, so the unchunked losses that upcast (full, fused-fp32) peak one
	 * compute-dtype copy of the logits lower (act.c, mdl_act_head); torchtune's unembed casts
	 * in the model too (self.output(h).float()) */
	bool upcast_in_model;
	/* MoE under tensor parallelism: the TP ranks a layer's routed tokens are gathered across
	 * for the experts split over them (the layout's expert TP size, mdl_layout_etp; simulate
	 * and the layout's memory set it), each rank keeping what it gathered for the experts'
	 * weight gradients; 0 or 1: each its own 1/tp of them (act.c) */
	uint32_t expert_gather;
	/* LoRA and QLoRA as DoRA (Liu et al. 2024, arXiv 2402.09353): each adapted linear's
	 * output scaled per feature by a trained magnitude over the column norm of W + s B A,
	 * as PEFT (use_dora: peft/tuners/lora/dora.py, DoraLinearLayer, at 5d602fd) and torchtune
	 * (torchtune/modules/peft/dora.py, DoRALinear) compute it in every forward: B A made
	 * whole by running the adapters on an identity matrix, the norm taken of W + s B A
	 * detached, the base output and the adapters' kept for the magnitude's gradient
	 * (mdl_job_weight_passes, mdl_job_dora_live, act.c) [A: source] */
	bool dora;
	/* LoRA's adapters run by Unsloth's fused autograd functions (unsloth/kernels/fast_lora.py
	 * at 0050c73: LoRA_QKV, LoRA_W, LoRA_MLP), which its get_peft_model patches in where a
	 * layer's q, k and v, its o, or its gate, up and down are adapted whole, without dropout or
	 * DoRA (unsloth/models/llama.py: "Dropout = 0 is supported for fast patching", and
	 * lora_magnitude_vector empty): each such linear computes X W and then adds s (X A) B into
	 * that output in place (matmul_lora's addmm_), in X's dtype, keeping X and the adapter
	 * weights alone (X A made again in backward), the MLP keeping X, the gate's and the up's
	 * outputs and making the SwiGLU product again in its backward kernel, and the input
	 * gradient written over X's storage (mdl_job_lora_fused; act.c, job.c) [A: source] */
	bool fused_lora;
};

/* The modules the job's recompute makes again by Megatron-Core's selective recompute
 * (MDL_RM_* bits): none but under --recompute selective, the attention core unless told. */
static inline unsigned mdl_job_rc_modules(const struct mdl_job *j)
{
	if (j->recompute != MDL_RC_SELECTIVE)
		return 0;
	return j->recompute_modules ? j->recompute_modules : MDL_RM_CORE_ATTN;
}

/* Whether the job's recompute runs the attention core again: full recompute, and selective
 * with core_attn among its modules. */
static inline bool mdl_job_core_again(const struct mdl_job *j)
{
	return j->recompute == MDL_RC_FULL || (mdl_job_rc_modules(j) & MDL_RM_CORE_ATTN);
}

/* Whether the job names recompute modules beyond Megatron-Core's default, the attention core:
 * what reports and --emit write out. */
static inline bool mdl_job_rc_modules_named(const struct mdl_job *j)
{
	return j->recompute_modules && j->recompute_modules != MDL_RM_CORE_ATTN;
}

/* --recompute-modules: the bits of a comma-separated list of core_attn, layernorm, moe_act,
 * mla_up_proj, mlp (0, or -1 with err naming the first unknown or unmodelled one); the list of
 * a mask, in that order, its names separated by sep; and the name of bit i (NULL past the
 * last). */
int mdl_rc_modules_parse(const char *s, uint8_t *mask, char *err, size_t errlen);
void mdl_rc_modules_str(unsigned mask, char sep, char *buf, size_t n);
const char *mdl_rc_module_name(unsigned i);

/* The layers of a chunk of `layers` that run the job's recompute mode: the first
 * recompute_layers of them under full recompute, else all; the rest run none. */
static inline uint32_t mdl_job_rc_layers(const struct mdl_job *j, uint32_t layers)
{
	return j->recompute == MDL_RC_FULL && j->recompute_layers && j->recompute_layers < layers
		       ? j->recompute_layers
		       : layers;
}

/* Whether adapted linear t runs in one of Unsloth's fused LoRA functions (job.fused_lora): its
 * group of the layer (q, k and v; o; gate, up and down of a gated MLP, which a layer must have
 * whole) adapted whole; not an expert's. */
bool mdl_job_lora_fused(const struct mdl_arch *a, const struct mdl_job *j,
			const struct mdl_tensor *t);

/* Whether QLoRA's base weights are GPTQ: trained under PEFT and auto-gptq, data parallel only
 * (no tensor, pipeline or context parallelism there). */
static inline bool mdl_job_gptq(const struct mdl_job *j)
{
	return j->method == MDL_QLORA && j->quant == MDL_QUANT_GPTQ;
}

/* Whether QLoRA's base weights are bitsandbytes' (nf4, nf4-legacy), the base --kbit-upcast
 * prepares (mdl_upcast); not torchao's nor GPTQ's. */
static inline bool mdl_job_bnb(const struct mdl_job *j)
{
	return j->method == MDL_QLORA &&
	       (j->quant == MDL_QUANT_NF4 || j->quant == MDL_QUANT_NF4_LEGACY);
}

/* Whether the job stores tensor t quantised: QLoRA's linear weights (bitsandbytes and auto-gptq
 * replace nn.Linear; norms, biases, embeddings and lm_head stay in the compute dtype). */
static inline bool mdl_job_quantised(const struct mdl_job *j, const struct mdl_tensor *t)
{
	return j->method == MDL_QLORA && t->matmul && t->cols > 1;
}

/* Whether the job trains in mixed precision (bf16-mixed, fp16-mixed, FP8): 16-bit (or FP8)
 * compute under autocast beside fp32 master weights, where the pure precisions keep one copy. */
static inline bool mdl_job_mixed(const struct mdl_job *j)
{
	return j->precision == MDL_BF16_MIXED || j->precision == MDL_FP16_MIXED ||
	       j->precision == MDL_FP8;
}

/* Bytes of an adapter weight element: fp32 where job.lora_fp32 upcasts a 16-bit base's
 * adapters, else the trainable weights' dtype (mdl_job_weight_bytes). */
unsigned mdl_job_adapter_bytes(const struct mdl_job *j);

/* Bytes of an element lora_A's and lora_B's GEMMs take and write: the compute dtype's under
 * autocast (mixed precision), else the adapters' own (mdl_job_adapter_bytes). */
unsigned mdl_job_lora_out_bytes(const struct mdl_job *j);

/* Whole-model, unsharded model-state bytes. */
struct mdl_states {
	uint64_t params, trainable_params, frozen_params;
	double weights_bytes, gradients_bytes, optimizer_bytes;
};

/* Bytes of one element of an optimizer state (AdamW's m or v): the parameters' dtype in pure
 * bf16, else fp32. */
double mdl_job_state_bytes(const struct mdl_job *j);

/* HBM bytes a fused GPU optimizer step reads and writes per trainable parameter: its states
 * and master copy read and written, the gradient read, and the weights, where a master copy is
 * kept the compute-dtype copy written (read and written with a master remainder, whose high
 * halves they are), else the weights read and written in their own dtype. AdamW: 28 B in
 * mixed precision and in fp32, 14 B in pure bf16, whose states torch.optim keeps in the
 * parameters' dtype. */
double mdl_job_update_bytes(const struct mdl_job *j);

/* Model-state bytes of the job on this architecture. */
void mdl_job_states(const struct mdl_arch *a, const struct mdl_job *j, struct mdl_states *s);

/* The same for a part of the model: nlayers decoder layers, plus the embeddings and/or the
 * final norm and lm_head (a pipeline stage). */
/* Whether an outer tensor (embed_tokens, lm_head) is trained whole: always in a full fine-tune;
 * under LoRA or QLoRA where --lora-targets names it (PEFT's modules_to_save). */
bool mdl_job_trains_whole(const struct mdl_job *j, const struct mdl_tensor *t);

void mdl_job_states_part(const struct mdl_arch *a, const struct mdl_job *j, uint64_t nlayers,
			 bool embed, bool head, struct mdl_states *s);
/* The model states of the routed experts alone (tensors stored in more than one copy) in
 * nlayers decoder layers: what expert parallelism divides. */
void mdl_job_expert_states(const struct mdl_arch *a, const struct mdl_job *j, uint64_t nlayers,
			   struct mdl_states *s);

/* Trainable parameters (all for full fine-tuning; adapters for LoRA/QLoRA). */
uint64_t mdl_job_trainable(const struct mdl_arch *a, const struct mdl_job *j);

/* FLOPs of one micro-batch split by where they run: one decoder layer's forward, backward and
 * recompute (hardware FLOPs), and the lm_head's forward and backward. */
struct mdl_flops {
	double layer_fwd, layer_bwd, layer_recompute; /* by Megatron's convention */
	double head_fwd, head_bwd;
	/* what the kernels execute of each layer figure: causal flash attention skips the blocks
	 * above the diagonal, about half of the s^2 work, which the convention still counts */
	double layer_fwd_exec, layer_bwd_exec, layer_recompute_exec;
	/* the attention half's forward as executed (q, k, v, o projections and the core): what a
	 * layer recomputed half by half runs once more */
	double attn_half_fwd_exec;
	/* of the *_exec figures, the attention core's (QK^T and attention x V) forward, and its
	 * backward: twice the forward, 2.5 times for flash attention, which recomputes the
	 * scores; a recompute (full or selective) runs the forward once more */
	double attn_core_fwd_exec, attn_core_bwd_exec;
	/* of layer_fwd, LoRA's adapters (A and B of every adapted linear) that run in the adapters'
	 * own dtype: all but those inside Unsloth's fused functions (job.fused_lora), which cast A
	 * and B to the input's; their backward is twice it and a full recompute runs it again (0
	 * for a full fine-tune) */
	double adapter_fwd;
	/* of layer_fwd_exec and layer_bwd_exec, DoRA's GEMMs beyond LoRA's (job.dora; hardware
	 * FLOPs, not in layer_fwd): B A made whole on an identity in each forward (lora_A over
	 * in x in, lora_B over in x r) and, under lora_dropout, PEFT's base product computed again
	 * on the dropped input, forward and its input gradient; in the adapters' dtype, a full or
	 * per-op recompute running the forward's again */
	double dora_fwd, dora_bwd;
};
void mdl_job_flops(const struct mdl_arch *a, const struct mdl_job *j, struct mdl_flops *f);

/* Where a full recompute stops early (job.recompute_early_stop): the parameters of the matmul a
 * layer's recompute leaves out, averaged over the layers as mdl_flops counts them (its dense
 * MLP's down projection: the last matmul of the layer, whose output only the residual add
 * reads, which saves nothing), and in *layers the share of layers that leave it out. 0 (and 0)
 * where the recompute runs every matmul: no early stop, no full recompute, routed experts (the
 * routing weights' product saves each expert's output), a norm after the MLP (Gemma 2's
 * post_feedforward_layernorm saves its input), a residual dropout (its mask is saved after
 * the matmul), a LoRA adapter on the down projection (PEFT runs the adapter after the base,
 * and the adapter's input is saved). */
double mdl_job_early_stop(const struct mdl_arch *a, const struct mdl_job *j, double *layers);

/* Model FLOPs of one micro-batch forward pass (Megatron convention, see above). */
double mdl_job_forward_flops(const struct mdl_arch *a, const struct mdl_job *j);

/* Model FLOPs of one micro-batch forward + backward: 3 x forward for trained weights and the
 * attention core, 2 x forward for frozen weights (no weight gradient). */
double mdl_job_model_flops(const struct mdl_arch *a, const struct mdl_job *j);

/* Hardware FLOPs of one micro-batch forward + backward, recompute included. */
double mdl_job_hardware_flops(const struct mdl_arch *a, const struct mdl_job *j);
/* FLOPs the kernels execute for one micro-batch: hardware FLOPs less the attention blocks a
 * causal flash kernel skips (mdl_flops *_exec); what the step's compute time is made of. */
double mdl_job_executed_flops(const struct mdl_arch *a, const struct mdl_job *j);

/* Kernel launches of the mean decoder layer in one micro-batch: its forward, its backward, and
 * the forward a recompute runs again inside backward (0 without one). What the host must issue
 * one by one, whatever the kernels' sizes. mm_*: of those, the matrix kernels (a linear's GEMMs,
 * LoRA's, the attention core's), each of which costs the GPU a fixed time on top of its FLOPs. */
struct mdl_launches {
	double fwd, bwd, recompute;
	double mm_fwd, mm_bwd, mm_recompute;
};
void mdl_job_launches(const struct mdl_arch *a, const struct mdl_job *j, uint32_t ep,
		      struct mdl_launches *k);

/* HBM bytes one decoder layer moves passing over its base weights beyond what its GEMMs read:
 * dequantising its quantised base weights (QLoRA, mdl_quant) and DoRA's norm of each adapted
 * weight (job.dora; 0 for neither): fwd in its forward, bwd in its backward with the forward a
 * recompute runs again. nf4 dequantises in forward and for the input gradient; gptq in forward
 * only; DoRA in each forward. */
struct mdl_weight_passes {
	double fwd, bwd;
};
void mdl_job_weight_passes(const struct mdl_arch *a, const struct mdl_job *j,
			   struct mdl_weight_passes *d);

/* torchtune's CEWithChunkedOutputLoss cuts the logits into num_output_chunks = 8
 * (torchtune/modules/loss/ce_chunked_output_loss.py) [A: source]: --loss chunked-output. */
#define MDL_OUTPUT_CHUNKS 8.0

/* HBM bytes a quantised head (job.quant_head) moves dequantising itself in one forward, and
 * again in one backward (for the input gradient): a pass over the head's NF4 blocks per GEMM
 * it runs (one, or one a chunk of --loss chunked-output), each writing the dequantised weight
 * and, from an fp16 copy (job.quant_fp16), casting it to the compute dtype; 0 without
 * quant_head. Per GPU of a TP group (the head split over it). */
double mdl_job_head_dequant(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp);

/* HBM bytes, at the rate memory-bound kernels get, the time the loss's kernels take on the GPU
 * that runs the head, one micro-batch: forward returned, backward in *bwd (the casts to and
 * from fp32 logits, the log-softmax and its gradient, as each --loss computes them). Split by
 * a vocab-parallel head over tp. */
double mdl_job_loss_traffic(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			    double *bwd);

/* Bytes a decoder layer's passes over its weights (mdl_job_weight_passes) hold at their most
 * beside what the layer keeps, per GPU of a TP group, in its forward or (backward) its
 * backward: the largest quantised linear's weight dequantised for its GEMM, with what the
 * dequantising ops hold while they make it (torchao's eager chain, GPTQ's: job.c), and DoRA's
 * norm of the largest adapted weight, in forward and in a recompute's (one linear at a time:
 * the larger); 0 without either, and for compiled GPTQ, whose dequantised weights the layer
 * keeps (mdl_job_dequant_kept) and whose fused kernel makes nothing else. */
double mdl_job_weight_live(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			   bool backward);

/* Bytes a quantised head's dequantised copies hold while one of its GEMMs runs: the
 * dequantised weight, and from an fp16 copy (job.quant_fp16) its cast to the compute dtype,
 * both alive at the cast; 0 without quant_head. Per GPU of a TP group. */
double mdl_job_head_dequant_live(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp);

/* Bytes one decoder layer's forward leaves in the compute dtype for its backward beside the
 * activations, whatever the tokens: the GPTQ weights torch.matmul keeps (mdl_quant), of the
 * attention half (attn) or of the MLP half; 0 otherwise. Per GPU of a TP group. */
double mdl_job_dequant_kept(const struct mdl_arch *a, const struct mdl_job *j, unsigned tp,
			    bool attn);

/* HBM bytes the FP8 casts move for one decoder layer (0 unless --precision fp8). Transformer
 * Engine: each linear's input cast to FP8 with its transpose in forward (a frozen weight's
 * without it: no weight gradient reads it), its weight likewise,
 * its output gradient likewise in backward (TE's cast_transpose: the 16-bit tensor read, FP8
 * data and FP8 transpose written, 2 + 1 + 1 bytes per element, as Hopper's FP8 GEMMs take only
 * the TN layout); the step casts the weights once a step where Megatron-Core keeps TE's FP8
 * copies (step.c fp8_layer_casts). torchao (mdl_fp8_recipe): a cast reads the
 * 16-bit tensor for its amax, reads it again and writes a byte; forward casts the input and
 * the weight, backward the output gradient twice on one amax (for each gradient's GEMM), the
 * kept input again and the weight again. Per token through the layer in forward and in
 * backward, and per micro-batch for the weights. */
struct mdl_fp8_casts {
	double fwd_per_token, bwd_per_token, weights;
	double weights_bwd; /* the weights' casts again in backward (torchao), per micro-batch */
	double experts;     /* the routed experts' part of weights (and of weights_bwd, which
			     * repeats weights): a GPU casts those it holds (expert parallelism) */
};
void mdl_job_fp8_casts(const struct mdl_arch *a, const struct mdl_job *j,
		       struct mdl_fp8_casts *c);

/* Bytes of one activation element: 2 for 16-bit compute, 4 for fp32. */
unsigned mdl_job_act_bytes(const struct mdl_job *j);

/* Bytes of one element of the residual stream and the tensors computed from it outside the
 * matmuls and the attention kernel (the norms' and the quantised linears' outputs, the MLP's
 * intermediates): the compute dtype's, or 4 where a bitsandbytes QLoRA base keeps fp32 norms
 * that hand their input fp32 on (mdl_upcast: every upcast but norms alone under an
 * architecture whose norms cast back to their input's dtype, mdl_arch.norm_cast_back). */
unsigned mdl_job_stream_bytes(const struct mdl_arch *a, const struct mdl_job *j);
/* The job's upcast where it applies (mdl_job_bnb: PEFT casts nothing of a GPTQ model,
 * prepare_model_for_kbit_training's is_gptq_quantized), else none. */
enum mdl_upcast mdl_job_upcast(const struct mdl_job *j);

/* Bytes of one weight element in compute precision (the copy that streams layer by layer). */
unsigned mdl_job_weight_bytes(const struct mdl_job *j);

/* Name <-> enum for flags and output; parse returns -1 with err listing the allowed names. */
const char *mdl_method_name(enum mdl_method m);
const char *mdl_precision_name(enum mdl_precision p);
const char *mdl_optimizer_name(enum mdl_optimizer o);
/* The optimizer a Hugging Face Trainer `optim` name builds (adamw_torch, adamw_bnb_8bit, ...),
 * -1 for none; *foreach (NULL: not asked) 1 where it steps AdamW by PyTorch's multi-tensor path,
 * 0 by one fused kernel, -1 neither. */
int mdl_optimizer_trainer(const char *name, int *foreach);
const char *mdl_recompute_name(enum mdl_recompute r);
const char *mdl_attention_name(enum mdl_attention a);
const char *mdl_loss_name(enum mdl_loss l);
/* Whether loss l takes the whole logits cast to fp32, the cast job.upcast_in_model places in the
 * model (full and fused-fp32; chunked never forms them, chunked-output casts chunk by chunk,
 * fused keeps the compute dtype) */
bool mdl_loss_upcasts(enum mdl_loss l);
/* Whether l is Megatron-Core's vocab-parallel cross-entropy, fused or not, or Transformer
 * Engine's that it calls. */
bool mdl_loss_vocab_parallel(enum mdl_loss l);
const char *mdl_grad_dtype_name(enum mdl_grad_dtype g);
const char *mdl_master_name(enum mdl_master m);
const char *mdl_quant_name(enum mdl_quant q);
const char *mdl_fp8_recipe_name(enum mdl_fp8_recipe r);
const char *mdl_upcast_name(enum mdl_upcast u);
const char *mdl_lora_dtype_name(bool fp32); /* "model" | "fp32" (job.lora_fp32) */
const char *mdl_lora_kernels_name(bool fused); /* "peft" | "unsloth" (job.fused_lora) */
const char *mdl_quant_from_name(bool fp16); /* "model" | "fp16" (job.quant_fp16) */
/* The setting `what` ("method", "precision", "recompute", ...) named s into *out: 0, or -1 with
 * err naming s and the allowed names. `also` (NULL: none) is one more name it takes, listed
 * first, for which *out is -1 (a command's "auto"). */
int mdl_parse_enum(const char *what, const char *s, const char *also, int *out, char *err,
		   size_t errlen);

#endif
