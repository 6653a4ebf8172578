/* opts — see opts.h. */
#include "opts.h"

#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../model/arch.h"
#include "../model/job.h"
#include "../model/catalog.h"
#include "../model/units.h"

enum otype { O_STR, O_COUNT, O_SIZE, O_REAL, O_TIME, O_USD, O_ENUM, O_TARGETS, O_FLAG };

struct opt {
	const char *name;
	enum otype type;
	size_t off;
	double min, max;
	const char *def; /* NULL: no default (required if `required`) */
	bool required;
	const char *what; /* enum kind for O_ENUM; unit text for help */
	int cmds;
	const char *help;
};

#define OFF(f) offsetof(struct tp_opts, f)
#define P (CMD_PLAN | CMD_SIMULATE | CMD_COMPARE)
#define S CMD_SIMULATE
#define PC (CMD_PLAN | CMD_COMPARE)
#define ALL (CMD_PLAN | CMD_MODELS | CMD_HARDWARE | CMD_SIMULATE | CMD_COMPARE)

static const struct opt table[] = {
	{"model", O_STR, OFF(model), 0, 0, NULL, true, "name|path", P,
	 "catalog model or alias (see 'tierplan models'), or a Hugging Face config.json or the "
	 "snapshot directory holding it"},
	{"seq", O_COUNT, OFF(seq), 1, 10485760, NULL, true, "tokens", P,
	 "sequence length in tokens, a plain number like 4096, not 4k"},
	{"batch", O_COUNT, OFF(batch), 1, 65536, "1", false, "sequences", P,
	 "micro-batch per GPU"},
	{"global-batch", O_COUNT, OFF(global_batch), 1, 1e9, "128", false, "sequences", P,
	 "sequences per optimizer step, the same for every option (LitGPT's 128)"},
	{"grad-accum", O_COUNT, OFF(grad_accum), 1, 1e6, NULL, false, "micro-batches", P,
	 "micro-batches per step instead of --global-batch"},
	{"method", O_ENUM, OFF(method), 0, 0, "full", false, "method", P, "full | lora | qlora"},
	{"quant", O_ENUM, OFF(quant), 0, 0, "nf4", false, "quant", P,
	 "--method qlora's base weights: nf4 (bitsandbytes' NF4, double-quantised; dequantised "
	 "for each GEMM, forward and backward, by one kernel; as bitsandbytes 0.43.2 and later run "
	 "it, keeping nothing of a linear's input) | nf4-legacy (the same under bitsandbytes "
	 "before 0.43.2, July 2024, which kept every 4-bit linear's input for backward) | "
	 "nf4-torchao (torchao's NF4Tensor, torchtune's QLoRA: the same blocks, dequantised by a "
	 "chain of 13 PyTorch ops through int64 indices, about 33 B of HBM traffic a weight where "
	 "one kernel moves 2.5, and 14 B a weight held while it runs; one fused kernel under "
	 "--compile yes) | gptq (a GPTQ int4 checkpoint, group size 128, as auto-gptq trains it "
	 "with the ExLlama kernels off: dequantised by PyTorch ops in forward, the fp16 weights "
	 "kept until backward)"},
	{"kbit-upcast", O_ENUM, OFF(kbit_upcast), 0, 0, "none", false, "kbit-upcast", P,
	 "--method qlora under bitsandbytes: the unquantised parameters (norms, embeddings, "
	 "lm_head) kept in fp32: none (the model's dtype: torchtune, Unsloth, LitGPT, Axolotl, "
	 "LLaMA-Factory, FSDP or ZeRO-3 QLoRA) | norms (TRL's SFTTrainer with bf16, the QLoRA "
	 "paper's qlora.py, LLaMA-Factory's upcast_layernorm) | all (PEFT's "
	 "prepare_model_for_kbit_training alone: PEFT's examples, Qwen's finetune.py). An fp32 norm hands a Llama-style layer an fp32 residual stream, "
	 "which Linear4bit keeps: the checkpoints, norms' and MLP's tensors in fp32, each 4-bit "
	 "linear casting its input and output (Gemma's, OLMo 2's and Cohere's norms cast back: "
	 "norms changes nothing there)"},
	{"quant-head", O_STR, OFF(quant_head), 0, 0, "no", false, "yes|no", P,
	 "--method qlora under bitsandbytes: the untied lm_head quantised as well (LitGPT: "
	 "Lightning's BitsandbytesPrecision replaces every nn.Linear), and dequantised for each "
	 "of its GEMMs as the layers' linears are (--quant-from); no: the head in the compute "
	 "dtype (Hugging Face transformers and PEFT, torchtune)"},
	{"quant-from", O_STR, OFF(quant_from), 0, 0, "auto", false, "auto|model|fp16", P,
	 "--method qlora under bitsandbytes: the dtype the base was quantised from, which each "
	 "dequantisation writes back: model (transformers and PEFT quantise the weights in the "
	 "dtype they load them in) | fp16 (Lightning's BitsandbytesPrecision, LitGPT, quantises "
	 "every linear from an fp16 copy: under bf16 each dequantised weight is then cast, 2 B "
	 "a weight more written, read and held at the cast) | auto (fp16 with --quant-head yes, "
	 "which only Lightning's plugin does, else model)"},
	{"double-quant", O_STR, OFF(double_quant), 0, 0, "yes", false, "yes|no", P,
	 "--method qlora under bitsandbytes: NF4's block constants quantised again, 8 bits in "
	 "blocks of 256 (0.127 bits a weight: QLoRA's double quantisation, torchao's NF4, "
	 "LitGPT's bnb.nf4-dq) or kept in fp32 (no: 0.5 bits a weight, transformers' "
	 "BitsAndBytesConfig without bnb_4bit_use_double_quant, its default; LitGPT's bnb.nf4)"},
	{"lora-rank", O_COUNT, OFF(lora_rank), 1, 65536, "8", false, "", P, "LoRA rank r"},
	{"lora-dropout", O_REAL, OFF(lora_dropout), 0, 0.9, "0", false, "probability", P,
	 "PEFT's lora_dropout: above 0 each adapter keeps its dropped input and mask (0: the "
	 "input itself, which a frozen linear does not keep)"},
	{"lora-dtype", O_ENUM, OFF(lora_dtype), 0, 0, "model", false, "lora-dtype", P,
	 "the adapters' weights: model (the base's dtype: torchtune, LitGPT, NeMo; TRL's QLoRA "
	 "sharded by FSDP or ZeRO-3, which asks get_peft_model for them) | fp32 (PEFT 0.12 and "
	 "later upcast a bf16 or fp16 base's adapters, TRL's SFTTrainer otherwise included, each "
	 "casting its input to fp32 before its dropout and lora_A, its scaled output added to the "
	 "base's in fp32 and cast back; LLaMA-Factory's default): fp32 weights, gradients and "
	 "AdamW states, and the casts' traffic"},
	{"lora-kernels", O_ENUM, OFF(lora_kernels), 0, 0, "peft", false, "lora-kernels", P,
	 "what runs the adapters: peft (PEFT's LoRA layers: A, B, the scaling and the sum as "
	 "separate ops, x A kept for B's gradient) | unsloth (Unsloth's fused autograd functions, "
	 "patched in where a layer's q, k and v, its o, or its gate, up and down are adapted whole: "
	 "(X A) B added into X W in place, X kept alone, the MLP's SwiGLU one kernel whose product "
	 "backward makes again; needs --lora-dropout 0, no DoRA, a bitsandbytes or unquantised "
	 "base)"},
	{"dora", O_STR, OFF(dora), 0, 0, "no", false, "yes|no", P,
	 "--method lora or qlora as DoRA (PEFT's use_dora, torchtune's dora builders): a trained "
	 "magnitude per output feature over the norm of W + s B A, which each forward computes "
	 "whole (B A made by running the adapters on an identity matrix, W cast to the adapters' "
	 "dtype, a 4-bit W dequantised again), and the base and adapter outputs kept for the "
	 "magnitude's gradient; under --lora-dropout PEFT runs the base product again on the "
	 "dropped input in the adapters' dtype, keeping the weight it read"},
	{"compile", O_STR, OFF(compile), 0, 0, "no", false, "yes|no", P,
	 "torch.compile: norms and pointwise ops fused; what only fused ops read in backward "
	 "(the MLP's activation) is recomputed, what a matmul reads is kept (PyTorch's min-cut "
	 "partitioner)"},
	{"fused-qkv", O_STR, OFF(fused_qkv), 0, 0, "auto", false, "auto|yes|no", P,
	 "q, k and v from one linear, split into views: the rotary embedding copies q and k, and "
	 "the attention's saved v keeps the whole output (LitGPT's attn for every model); auto: "
	 "as the model's Hugging Face implementation (GPT-NeoX, Phi-3, Qwen v1 fuse)"},
	{"repeat-kv", O_STR, OFF(repeat_kv), 0, 0, "auto", false, "auto|yes|no", P,
	 "grouped-query attention's keys and values copied to every query head and kept so "
	 "(Hugging Face's repeat_kv: under SDPA before transformers 4.48, and since with an "
	 "attention mask, i.e. padded batches); auto: under --attention eager, which always "
	 "copies them, and for ChatGLM's remote code, which does too"},
	{"swiglu", O_ENUM, OFF(swiglu), 0, 0, "eager", false, "swiglu", P,
	 "a gated MLP's activation (SwiGLU, GeGLU): eager, act(gate) * up as PyTorch ops, which "
	 "keep act(gate) for backward too (Hugging Face transformers, torchtune, torchtitan, "
	 "LitGPT), or fused, one kernel keeping only its input (Megatron-Core's bias-SwiGLU "
	 "fusion: Megatron-LM's default, NeMo)"},
	{"pointwise", O_STR, OFF(pointwise), 0, 0, "fused", false, "fused|eager", P,
	 "norms and rotary embeddings: fused, one kernel each (Megatron-Core and Transformer "
	 "Engine, apex, Liger, Unsloth; torch.compile does the same), or eager, PyTorch ops as "
	 "Hugging Face transformers, torchtune and LitGPT write them without --compile (an "
	 "RMSNorm's 8 kernels through fp32 temporaries, kept for backward; the rotary "
	 "embedding's 5 per tensor)"},
	{"doc-tokens", O_COUNT, OFF(doc_tokens), 0, 10485760, "0", false, "tokens", P,
	 "documents packed into each sequence, their mean length: each attends to itself alone "
	 "(per-document causal masks: variable-length fused attention, Megatron-Core/NeMo packed "
	 "sequences, TRL padding_free), so attention costs s x doc, not s^2 (eager attention "
	 "computes the masked s^2); at most --seq; 0 = one document a sequence"},
	{"moe-gemm", O_STR, OFF(moe_gemm), 0, 0, "loop", false, "loop|grouped", P,
	 "MoE experts: loop (Hugging Face transformers launches each expert's linears) or grouped "
	 "(one grouped GEMM per projection for all local experts: Megatron-Core "
	 "--moe-grouped-gemm, torchtitan, torchtune)"},
	{"lora-targets", O_TARGETS, OFF(lora_targets), 0, 0, "all", false, "list", P,
	 "adapted projections: q,k,v,o,gate,up,down or all; with embed and/or head also trained "
	 "whole beside them (PEFT's modules_to_save, as Qwen's finetune.py does for base models)"},
	{"optimizer", O_ENUM, OFF(optimizer), 0, 0, "adamw", false, "optimizer", P,
	 "adamw | adamw8bit | sgd | lion | adafactor | paged-adamw | paged-adamw8bit"},
	{"precision", O_ENUM, OFF(precision), 0, 0, "bf16-mixed", false, "precision", P,
	 "bf16-mixed | bf16 | fp16-mixed | fp32 | fp8 (Transformer Engine: linear layers' GEMMs at "
	 "the FP8 rate, their inputs kept for backward as FP8 copies, the rest as bf16-mixed); GPUs "
	 "without bf16 (V100, T4) default to fp16-mixed"},
	{"recompute", O_ENUM, OFF(recompute), 0, 0, "auto", false, "recompute", P,
	 "none | selective (Megatron's attention core) | full | op (torchtitan's per-op SAC: every "
	 "other matmul output kept) | auto (the fastest that fits of none, selective, full)"},
	{"recompute-modules", O_STR, OFF(recompute_modules), 0, 0, "core_attn", false,
	 "list", P,
	 "what --recompute selective makes again, Megatron-Core's --recompute-modules, comma "
	 "separated: core_attn (the attention core), layernorm (a MoE layer's pre-MLP norm and "
	 "MLA's input norm, the norms that are modules of their own), moe_act (the routed experts' "
	 "activation; needs --moe-gemm grouped), mla_up_proj (MLA's up-projections and rotary), mlp "
	 "(the dense layers' MLP); with --recompute selective or auto"},
	{"recompute-layers", O_COUNT, OFF(recompute_layers), 0, 10000, "0", false, "layers", P,
	 "with --recompute full, only the first N layers of each pipeline stage (of each virtual "
	 "chunk when interleaved) recompute, the rest keep their activations: Megatron-Core's "
	 "recompute_method block with recompute_num_layers N, as Megatron-Bridge's performance "
	 "configs set it; policy gpu; 0 = every layer"},
	{"attention", O_ENUM, OFF(attention), 0, 0, "flash", false, "attention", P,
	 "flash (FlashAttention-2: flash-attn, PyTorch SDPA before 2.11; no Blackwell kernels) | "
	 "cudnn (cuDNN's fused attention: Transformer Engine's choice on Hopper and later, NeMo, "
	 "Megatron-Core; PyTorch 2.11's SDPA on H100 and B200) | triton (FlashAttention in Triton, "
	 "MosaicML llm-foundry's attn_impl triton for MPT: FlashAttention-2's rates over 1.4 "
	 "forward, 2 backward) | eager (an ALiBi model's default: BLOOM, as transformers runs "
	 "it; its s^2 softmax kept in the compute dtype as Megatron's fused softmax does, with "
	 "--pointwise eager as PyTorch ops do: fp32, and the compute-dtype copy the next bmm "
	 "keeps)"},
	{"grad-dtype", O_ENUM, OFF(grad_dtype), 0, 0, "param", false, "grad-dtype", P,
	 "gradients in the parameters' dtype (param) or fp32: main grads as Megatron keeps them, and "
	 "the data-parallel reduction in fp32 (FSDP's reduce_dtype float32: torchtitan's default, "
	 "Composer's DEFAULT)"},
	{"master-weights", O_ENUM, OFF(master), 0, 0, "fp32", false, "master-weights", P,
	 "the fp32 master copy mixed precision steps: fp32, whole (PyTorch, DeepSpeed, "
	 "Megatron-Core's distributed optimizer), or remainder: only the low 16 bits beside the "
	 "bf16 weights (Apex DistributedFusedAdam's store_param_remainders, NeMo 1.x's "
	 "distributed_fused_adam for bf16 models; Megatron-Core's "
	 "--use-precision-aware-optimizer); policy gpu, bf16 weights"},
	{"loss", O_ENUM, OFF(loss), 0, 0, "auto", false, "loss", P,
	 "full | chunked (fused lm_head + cross-entropy, no full logits) | chunked-output "
	 "(torchtune: full logits, loss a chunk at a time) | fused (flash-attn's cross-entropy "
	 "kernel, llm-foundry's default: full logits, no fp32 copy) | fused-fp32 (Unsloth's "
	 "cross-entropy kernel on the fp32 copy of the shifted logits transformers makes, its "
	 "gradient written over that copy: fms-acceleration's fast_loss; before transformers 4.46 "
	 "with --logits-upcast model) | vocab-parallel (Megatron-Core's cross-entropy, "
	 "Megatron-LM's default: the fp32 softmax kept and turned into the gradient in place) | "
	 "vocab-parallel-fused (the same in fused passes: cross_entropy_loss_fusion, NeMo 2.0's "
	 "and Megatron-Bridge's default) | vocab-parallel-te (the fusion in Transformer Engine's "
	 "kernel, cross_entropy_fusion_impl te: the fp32 gradient written in forward and kept) | "
	 "vocab-parallel-te-legacy (that kernel before TE 2.18: the gradient written over the "
	 "logits, nothing more kept) | auto (chunked for tiered and tiered-dram, full otherwise)"},
	{"logits-upcast", O_STR, OFF(logits_upcast), 0, 0, "loss", false, "loss|model", P,
	 "where the unchunked full and fused-fp32 losses get fp32 logits: loss (Hugging Face "
	 "transformers 4.46 and later, whose loss function casts them while the model's output "
	 "still holds the compute-dtype ones; torchtitan) or model (transformers before 4.46: "
	 "the model casts lm_head's output, a temporary freed at the cast, so the loss peaks 2 B "
	 "a logit lower in bf16; torchtune's unembed)"},
	{"tokens", O_REAL, OFF(tokens), 1, TP_MAX_TOKENS, "100M", false, "tokens", P,
	 "training tokens for the runtime (k, M, B suffixes)"},
	{"epochs", O_REAL, OFF(epochs), 0, 1e6, "0", false, "", P,
	 "with --dataset-tokens: tokens = epochs x dataset tokens"},
	{"dataset-tokens", O_REAL, OFF(dataset_tokens), 0, TP_MAX_TOKENS, "0", false, "tokens", P,
	 "tokens in one epoch of the dataset"},
	{"gpu", O_STR, OFF(gpu), 0, 0, "h100-sxm", false, "name|path", P,
	 "GPU type (see 'tierplan hardware')"},
	{"gpu-headroom", O_REAL, OFF(gpu_headroom), 0, 0.5, "0", false, "fraction", P,
	 "share of each GPU's memory kept free (fragmentation, other processes); the 0.97 % "
	 "caching-allocator slack is always counted"},
	{"gpus-per-node", O_COUNT, OFF(gpus_per_node), 0, 72, "0", false, "", P,
	 "GPUs per node, up to the host's slots; 0 = all of them"},
	{"objective", O_STR, OFF(objective), 0, 0, "cost", false, "name", PC,
	 "what the recommendation minimises: cost | time | power | gpus, among the options "
	 "searched (GPU-only up to about 8x the fewest GPUs that fit, in powers of two; --deadline "
	 "searches on); of options within 1 % of the best's figure and cost, the one that buys the "
	 "least hardware"},
	{"deadline", O_TIME, OFF(deadline), 0, 1e10, "0", false, "time", PC,
	 "longest acceptable runtime (e.g. 12h, 3d); 0 = none"},
	{"budget", O_USD, OFF(budget), 0, 1e12, "0", false, "USD", PC,
	 "most the job may cost (owned); 0 = none"},
	{"report", O_STR, OFF(report), 0, 0, NULL, false, "dir", PC,
	 "write report.md, report.html and the charts (gnuplot) into DIR"},
	{"emit", O_STR, OFF(emit), 0, 0, NULL, false, "dir", CMD_PLAN,
	 "write what to run for the recommended option (or --option N) into DIR: ds_config.json "
	 "or Megatron-LM arguments, launch.sh, and README.md with the prediction to check"},
	{"option", O_COUNT, OFF(option), 0, 63, NULL, false, "index", CMD_PLAN,
	 "with --emit: the option of the table to emit (default: the recommendation)"},
	{"force", O_FLAG, OFF(force), 0, 0, NULL, false, "", PC,
	 "let --report write into a non-empty directory that is not a tierplan report"},
	{"wide", O_FLAG, OFF(wide), 0, 0, NULL, false, "", PC,
	 "text output: every column (kind, peak DRAM and flash used, tokens/s, cloud cost, hardware "
	 "to buy); default fits 120 columns"},
	{"gpus", O_STR, OFF(gpu_list), 0, 0, "1,2,4,8,16", false, "list", CMD_COMPARE,
	 "GPU counts to compare, comma-separated (the default stops at one node on a host without a "
	 "network, and goes on, doubling, to --tier-nodes nodes' GPUs)"},
	{"max-gpus", O_COUNT, OFF(max_gpus), 1, 65536, "4096", false, "", CMD_PLAN,
	 "the most GPUs an option may use, GPU-only or tiered (the tiered options stay on "
	 "--tier-nodes nodes)"},
	{"tier-nodes", O_COUNT, OFF(tier_nodes), 1, 64, "1", false, "", PC,
	 "nodes the host-tier options (tiered, ZeRO-Infinity, ZeRO-Offload, ZeRO-3 offload) may "
	 "span, each with its own DRAM and drives, over the host's network: 1 keeps them on one "
	 "node; more searches their GPU counts on to that many nodes' (1, 2, 4, ... GPUs)"},
	{"threads", O_COUNT, OFF(threads), 0, 1024, "0", false, "", PC,
	 "worker threads of the search, 0 for one per online CPU; the result is the same on any "
	 "number"},
	{"model-parallel", O_STR, OFF(model_parallel), 0, 0, "yes", false, "yes|no", PC,
	 "search tensor, pipeline, context and expert parallelism beside data parallelism "
	 "(Megatron-Core, NeMo, torchtitan), or no: data parallelism alone with ZeRO/FSDP sharding, "
	 "what Hugging Face Trainer and Accelerate, torchtune and DeepSpeed alone run"},
	{"host", O_STR, OFF(host), 0, 0, "auto", false, "name|path", P,
	 "node type: CPU, DRAM, PCIe, power, price; auto = the GPU's usual node (its catalog "
	 "'host': dgx-a100 for A100s, dgx-2 for the V100, gh200-node, gb200-nvl72 and "
	 "gb300-nvl72 for Grace superchips, workstation-4gpu for RTX cards), hgx-8gpu for the "
	 "rest and for more GPUs than a usual node without a network holds"},
	{"dram", O_SIZE, OFF(dram), 0, 1e15, "0", false, "bytes", P,
	 "DRAM per node for tiered options (e.g. 512GiB); 0: simulate takes the host's, plan and "
	 "compare search the sizes its DIMMs make (tierplan hardware)"},
	{"flash", O_STR, OFF(flash), 0, 0, TP_FLASH_DEFAULT ":4", false, "name[:count]", P,
	 "flash drives per node for tiered options, or none (the host tiers end at DRAM)"},
	{"profile", O_STR, OFF(profile), 0, 0, NULL, false, "file", P,
	 "a calibrated hardware profile (tierplan calibrate) overriding the catalog"},
	{"prices", O_STR, OFF(prices), 0, 0, NULL, false, "file", P,
	 "price list to use instead of configs/prices.json (same layout)"},
	{"amortize-years", O_REAL, OFF(amortize_years), 0.1, 50, "3", false, "years", P,
	 "capex lifetime (Epoch AI uses 3)"},
	{"pue", O_REAL, OFF(pue), 1, 5, "1.58", false, "", P,
	 "facility power usage effectiveness (Uptime Institute 2023 average)"},
	{"usd-per-kwh", O_REAL, OFF(usd_per_kwh), 0, 10, "0.083", false, "USD", P,
	 "electricity price (EIA US industrial, Jan 2023)"},
	{"policy", O_STR, OFF(policy), 0, 0, "gpu", false, "name", S,
	 "gpu | zero-offload | zero3-offload | zero-infinity | tiered | tiered-dram"},
	{"gpus", O_COUNT, OFF(gpus), 1, 65536, "1", false, "", S,
	 "GPUs in the configuration (tp x pp x dp)"},
	{"tp", O_COUNT, OFF(tp), 1, 64, "1", false, "", S, "tensor-parallel degree"},
	{"pp", O_COUNT, OFF(pp), 1, 64, "1", false, "", S, "pipeline-parallel stages"},
	{"dp", O_COUNT, OFF(dp), 0, 65536, "0", false, "", S,
	 "data-parallel degree; 0 = gpus / (tp x pp x cp)"},
	{"zero", O_COUNT, OFF(zero), 0, 3, "0", false, "", S,
	 "ZeRO stage over the data- and context-parallel ranks: 0 all-reduces the gradients, 1 "
	 "reduce-scatters them and all-gathers the updated weights (Megatron-Core's distributed "
	 "optimizer, DeepSpeed's stage 1), 2 and 3 reduce-scatter every micro-batch's (gpu "
	 "policy; a host-tier policy runs its own: zero-offload 2, the others 3)"},
	{"dp-shard", O_COUNT, OFF(dp_shard), 0, 65536, "0", false, "ranks", S,
	 "hybrid sharding: ZeRO's partition spans this many of the data-parallel ranks, each group "
	 "of them holding a replica, so all-gathers and reduce-scatters stay in the group and the "
	 "replicas all-reduce their gradient shards (FSDP's HYBRID_SHARD: the GPUs of a node; "
	 "torchtitan's data_parallel_shard_degree; DeepSpeed's mics_shard_size; Megatron-Core's "
	 "--dp / --num-distributed-optimizer-instances); must divide --dp, --zero 1-3, policy gpu; "
	 "0 = every data-parallel rank"},
	{"cp", O_COUNT, OFF(cp), 1, 64, "1", false, "ranks", S,
	 "context parallelism: GPUs that split each sequence, exchanging keys and values around a "
	 "ring for attention, the gradients reduced over them with the data-parallel ranks "
	 "(Megatron-Core --context-parallel-size; policy gpu)"},
	{"ep", O_COUNT, OFF(ep), 1, 4096, "1", false, "ranks", S,
	 "expert parallelism: data- and context-parallel ranks that split each MoE layer's "
	 "experts, tokens exchanged by all-to-all; divides dp x cp (Megatron-Core "
	 "--expert-model-parallel-size; policy gpu)"},
	{"expert-tp", O_COUNT, OFF(expert_tp), 0, 64, "0", false, "ranks", S,
	 "expert tensor parallelism: the TP ranks each routed expert splits over, a divisor of "
	 "--tp (Megatron-Core --expert-tensor-parallel-size, MoE parallel folding): below --tp, "
	 "--ep may span the TP ranks too (ep dividing dp x cp x tp / expert-tp), experts sit whole "
	 "on fewer ranks and their tokens arrive by the all-to-all alone, not gathered across "
	 "TP; 0 = --tp (Megatron-Core's default)"},
	{"first-stage-layers", O_COUNT, OFF(first_stage_layers), 0, 100000, "0", false, "layers", S,
	 "an uneven pipeline: the decoder layers of the first stage, the rest split evenly over the "
	 "stages after it (Megatron-Core --decoder-first-pipeline-num-layers; DeepSeek-V3's 61 "
	 "layers over 16 stages); needs --pp 2 or more; 0 = an even share"},
	{"last-stage-layers", O_COUNT, OFF(last_stage_layers), 0, 100000, "0", false, "layers", S,
	 "the decoder layers of the last stage, beside its head and loss (Megatron-Core "
	 "--decoder-last-pipeline-num-layers); needs --pp 2 or more; 0 = an even share"},
	{"interleave", O_COUNT, OFF(interleave), 1, 64, "1", false, "stages", S,
	 "virtual pipeline stages per GPU (Megatron's interleaved 1F1B); 1 = none"},
	{"sequence-parallel", O_STR, OFF(sequence_parallel), 0, 0, "auto", false, "yes|no", S,
	 "Megatron sequence parallelism: yes | no | auto (yes when --tp > 1)"},
	{"overlap-grad-reduce", O_STR, OFF(overlap_grad_reduce), 0, 0, "yes", false, "yes|no", P,
	 "overlap the DP gradient reduction with backward (no: after it, as Megatron-LM without "
	 "--overlap-grad-reduce)"},
	{"overlap-param-gather", O_STR, OFF(overlap_param_gather), 0, 0, "no", false, "yes|no", P,
	 "Megatron-Core's --overlap-param-gather: the distributed optimizer's all-gather of the "
	 "updated weights waits for the next step, whose first forward takes each layer's as it "
	 "reaches it (no: after the optimizer step, which the step waits for; needs policy gpu, "
	 "--zero 1 and --overlap-grad-reduce yes; plan: its layouts with --zero 1)"},
	{"tp-comm-overlap", O_STR, OFF(tp_comm_overlap), 0, 0, "no", false, "yes|no", P,
	 "pipeline the TP collectives with the GEMMs (Megatron-Core --tp-comm-overlap; needs "
	 "sequence parallelism; Transformer Engine's collectives take 16 SMs from the GEMMs they "
	 "run beside; plan: its layouts with tp > 1)"},
	{"shared-expert-overlap", O_STR, OFF(shared_expert_overlap), 0, 0, "no", false, "yes|no", P,
	 "Megatron-Core's --moe-shared-expert-overlap: the shared experts' linears on a stream of "
	 "their own beside the token dispatcher's all-to-alls, so a MoE layer takes the longer of "
	 "the two where it took their sum; needs policy gpu, a model with shared experts and --ep 2 "
	 "or more, not with --ep-overlap; plan: its layouts with expert parallelism"},
	{"moe-dispatcher", O_STR, OFF(moe_dispatcher), 0, 0, "alltoall", false,
	 "alltoall|deepep|hybridep", P,
	 "Megatron-Core's token dispatcher under --ep 2 or more: alltoall (its default) sends a "
	 "token once per expert it is routed to; deepep and hybridep (--moe-token-dispatcher-type "
	 "flex) once to each GPU holding one of its experts and, across nodes, once to each node "
	 "over the network, forwarded there over NVLink (routing taken as uniform; the kernels' "
	 "SMs: --moe-dispatcher-sms)"},
	{"moe-dispatcher-sms", O_COUNT, OFF(moe_dispatcher_sms), 0, 1024, "0", false, "SMs", P,
	 "SMs a deepep or hybridep dispatcher's kernels hold while they run (Megatron-Core's "
	 "--moe-flex-dispatcher-num-sms; 0: DeepEP's default, 20): with --ep-overlap the compute "
	 "beside them runs on the GPU's other SMs"},
	{"ep-overlap", O_STR, OFF(ep_overlap), 0, 0, "no", false, "yes|no", P,
	 "hide the experts' all-to-alls behind compute: Megatron-Core's "
	 "--overlap-moe-expert-parallel-comm with --delay-wgrad-compute runs each micro-batch's "
	 "forward beside another's backward, layer by layer, their all-to-alls on a stream of their "
	 "own (the step's first forward and last backward, and a pipeline's warm-up and cool-down, "
	 "alone); needs policy gpu, --ep 2 or more, --interleave 2 or more with --pp 2 or more, and "
	 "no full recompute (--recompute auto leaves it out); the all-to-alls take no SMs from the "
	 "GEMMs in the model; plan: its layouts that allow it"},
	{"optimizer-in-backward", O_STR, OFF(optimizer_in_backward), 0, 0, "no", false, "yes|no", P,
	 "step each parameter's optimizer as its gradient is ready, freeing it (torchtune's "
	 "optimizer_in_bwd; policy gpu, or zero3-offload as FSDP's CPU offload runs it: the CPU "
	 "steps each layer as backward lands it; no gradient accumulation; plan: its GPU-only "
	 "layouts are data parallel alone, and zero3-offload the one host tier)"},
	{"clip-grad", O_STR, OFF(clip_grad), 0, 0, "yes", false, "yes|no", P,
	 "clip the gradients' global norm before the optimizer step, as Hugging Face's Trainer "
	 "(max_grad_norm 1.0), torchtitan and Megatron do by default: a norm pass and a scaling "
	 "pass over the GPU's gradients"},
	{"foreach-optimizer", O_STR, OFF(foreach_optimizer), 0, 0, "no", false, "yes|no", P,
	 "AdamW as PyTorch's multi-tensor path runs it, torch.optim.AdamW's default without "
	 "fused=True (Hugging Face Trainer's adamw_torch, its default before PyTorch 2.8; "
	 "Lightning): eight passes over the states, "
	 "3x the fused kernel's HBM traffic, and a temporary copy of the second moment at the step "
	 "(no: one fused kernel, as DeepSpeed, Megatron, torchtune and torchtitan run)"},
	{"swap-pipeline", O_STR, OFF(swap_pipeline), 0, 0, "none", false, "none|read|write|both", P,
	 "ZeRO-Infinity's optimizer swapper: read the next tile from the drives while one steps on "
	 "the CPU (read), write the previous one meanwhile (write), or both (DeepSpeed's "
	 "offload_optimizer pipeline_read / pipeline_write; none, DeepSpeed's default: read, step "
	 "and write one after the other; policy zero-infinity)"},
	{"cpu-checkpointing", O_STR, OFF(cpu_checkpointing), 0, 0, "auto", false, "auto|yes|no", P,
	 "policies zero-offload, zero3-offload and zero-infinity: full recompute's checkpoints in "
	 "DRAM, as DeepSpeed's activation_checkpointing.cpu_checkpointing keeps them where "
	 "deepspeed.checkpointing runs (Megatron-DeepSpeed), each copied synchronously through "
	 "pageable memory (yes), or on the GPU (no); auto: the faster that fits"},
	{"weights-up", O_STR, OFF(weights_up), 0, 0, "after", false, "after|in-step", P,
	 "policy zero-offload under --precision fp16-mixed: how the new fp16 weights go back "
	 "to the GPU, after the CPU step (DeepSpeed 0.9 and later, and every bf16 run) or "
	 "in-step (DeepSpeed 0.3 to 0.8: DeepSpeedCPUAdam hands each 128M-parameter tile's new "
	 "weights to a GPU kernel that reads them over PCIe as fp32 while it steps the next, so "
	 "only the last tile's copy follows the step)"},
	{"graph-freed", O_STR, OFF(graph_freed), 0, 0, "backward", false, "backward|next-forward", P,
	 "when the training loop lets go of a micro-batch's autograd graph and outputs, and so of "
	 "what the graph still holds after backward (bitsandbytes' 4-bit linears' inputs before "
	 "0.43.2, --quant nf4-legacy) and of the logits: backward (as it returns: Hugging Face's "
	 "Trainer keeps only the detached loss) or next-forward (once the next micro-batch's "
	 "forward has run: a loop keeping loss or logits in a variable, as LitGPT's finetune "
	 "scripts and PEFT's example loops do)"},
	{"max-in-cpu", O_COUNT, OFF(max_in_cpu), 0, 1e13, "1G", false, "elements", P,
	 "policy zero-infinity: the trainable parameters of each rank whose compute-dtype copy "
	 "DeepSpeed keeps in pinned DRAM instead of on the drives, read and rewritten there "
	 "(offload_param max_in_cpu, DeepSpeed's default 1e9; its examples' ZeRO-Infinity "
	 "configs set 1); 0 = every parameter on the drives"},
	{"offload-param", O_STR, OFF(offload_param), 0, 0, "yes", false, "yes|no", P,
	 "policy zero3-offload: the parameters in pinned DRAM, fetched over PCIe for every pass "
	 "(DeepSpeed's offload_param: cpu), or no: partitioned on the GPUs and all-gathered, only "
	 "the optimizer on the CPU (offload_optimizer alone)"},
	{"offload-ratio", O_REAL, OFF(offload_ratio), 0, 1, "1", false, "fraction", P,
	 "policy zero3-offload with --offload-param no: the share of the optimizer the CPU steps, "
	 "the rest kept and stepped on the GPUs, as DeepSpeed's ZeRO-Offload++ Twin-Flow does "
	 "with offload_optimizer ratio R: the first int((1 - R) x n) of a rank's n optimizer "
	 "sub-groups (--deepspeed's sub_group_size, 1e9 parameters by default) stay on its GPU, "
	 "their fp32 state and gradients 16 B a parameter there (1: the whole optimizer on the "
	 "CPU, DeepSpeed's default; a rank with one sub-group keeps it on the CPU for any ratio "
	 "above 0)"},
	{"activation-offload", O_STR, OFF(activation_offload), 0, 0, "no", false, "yes|no", P,
	 "copy the activations kept for backward to pinned DRAM as forward makes them and back "
	 "ahead of backward (torchtune's enable_activation_offloading; policy gpu)"},
	{"activation-offload-layers", O_COUNT, OFF(activation_offload_layers), 0, 10000, "0", false,
	 "layers", P,
	 "with --activation-offload yes, only the first N layers of each pipeline stage send their "
	 "activations to DRAM, the rest keep them on the GPU: Megatron-Core's "
	 "cpu_offloading_num_layers (Transformer Engine's CPU offload), as Megatron-Bridge's "
	 "Blackwell configs set it; 0 = every layer"},
	{"fp8-all-gather", O_STR, OFF(fp8_all_gather), 0, 0, "no", false, "yes|no", P,
	 "with --precision fp8 under FSDP / ZeRO-3 on the GPUs (policy gpu, --zero 3), gather the "
	 "linear layers' weights in FP8, each rank casting its own shard (torchao's "
	 "enable_fsdp_float8_all_gather, torchtitan's float8 option): half the bytes gathered "
	 "and held, 1/dp of the weight casts; plan: its ZeRO-3 layouts"},
	{"fp8-recipe", O_STR, OFF(fp8_recipe), 0, 0, "auto", false, "auto|te|torchao", P,
	 "whose FP8 training --precision fp8 runs: te, Transformer Engine (NeMo, Megatron-Core, "
	 "llm-foundry: each GEMM input cast with its transpose in one pass, the FP8 copies kept "
	 "for backward), or torchao, its Float8Linear with dynamic tensorwise scaling (torchtitan, "
	 "torchtune: the 16-bit inputs kept, every cast an amax pass and a cast pass, backward "
	 "casting the input and weight again); auto: torchao with --fp8-all-gather yes, else te"},
	{"backward-prefetch", O_STR, OFF(backward_prefetch), 0, 0, "pre", false, "pre|post", P,
	 "when ZeRO-3 / FSDP backward gathers the next block's weights: pre, as each block's "
	 "backward starts, beside it (FSDP's default BACKWARD_PRE, Accelerate, FSDP2's implicit "
	 "prefetch in torchtitan and torchtune, DeepSpeed's trace prefetch), or post, once it "
	 "is done, so the next block waits for the gather (BACKWARD_POST: Composer's and "
	 "llm-foundry's default)"},
	{"checkpoint-wrap", O_STR, OFF(checkpoint_wrap), 0, 0, "inside", false, "inside|outside", P,
	 "FSDP (--zero 3; its CPU offload as policy zero3-offload without --deepspeed) with "
	 "--recompute full: whether each layer's activation checkpoint runs "
	 "inside its FSDP unit (accelerate's fsdp_activation_checkpointing, torchtune, torchtitan, "
	 "fms-fsdp) or wraps the unit from outside, reentrant (transformers' gradient_checkpointing "
	 "with its default use_reentrant=True: the Hugging Face Trainer, LLaMA-Factory, TRL before "
	 "2026, Axolotl under FSDP; a non-reentrant one outside is as inside); outside, frozen "
	 "layers (LoRA, QLoRA) keep each checkpoint and its input gradient until backward ends "
	 "(FSDP's reshard-only hook)"},
	{"checkpoint-early-stop", O_STR, OFF(checkpoint_early_stop), 0, 0, "no", false, "yes|no",
	 P,
	 "with --recompute full: the recompute stops once every tensor backward reads is made "
	 "again, so a layer's down projection (its last matmul) is not run again, as PyTorch's "
	 "non-reentrant checkpoint does since 2.1 (use_reentrant=False, FSDP's NO_REENTRANT "
	 "checkpoint_wrapper: torchtitan, torchtune, fms-fsdp, accelerate's "
	 "fsdp_activation_checkpointing, Lightning); its hooks drop only what autograd saves, so "
	 "bitsandbytes' legacy 4-bit inputs (--quant nf4-legacy) escape it; no: the whole forward "
	 "again (Megatron-Core, DeepSpeed, transformers' default use_reentrant=True, PyTorch "
	 "before 2.1)"},
	{"grad-sync", O_STR, OFF(grad_sync), 0, 0, "each", false, "each|last", P,
	 "FSDP (--zero 2 or 3, policy gpu; its CPU offload, zero3-offload) with gradient "
	 "accumulation: each micro-batch "
	 "reduce-scatters its gradients (torchtitan, torchtune, Composer, accelerate with "
	 "sync_each_batch), or only the last, the others keeping every layer's whole gradients "
	 "on each GPU until then (the Hugging Face Trainer's and accelerate's default: no_sync "
	 "on all micro-batches but the last; LLaMA-Factory, TRL and Axolotl under FSDP)"},
	{"prefetch", O_COUNT, OFF(prefetch), 1, 16, "2", false, "buffers", P,
	 "weight buffers per GPU for streaming policies (double buffering = 2); 1: no prefetch, "
	 "each block's weights fetched once the block before it has computed, never beside "
	 "compute (DeepSpeed before 0.6, whose ZeRO-3 fetched each parameter after "
	 "torch.cuda.synchronize() with a blocking copy)"},
	{"reduce-bucket", O_COUNT, OFF(reduce_bucket), 1e5, 1e10, "500M", false, "elements", P,
	 "each of the two buckets offloaded gradients leave the GPU through (DeepSpeed's "
	 "reduce_bucket_size)"},
	{"deepspeed", O_STR, OFF(deepspeed), 0, 0, NULL, false, "file", P,
	 "a DeepSpeed ds_config.json: its ZeRO stage, offload targets, batch, precision and "
	 "optimizer become the flags they mean (plan: the search keeps to its policy and stage); "
	 "notes on stderr say which keys were used or ignored"},
	{"trace", O_STR, OFF(trace), 0, 0, NULL, false, "file", S,
	 "write a Chrome trace event file (open in Perfetto or chrome://tracing)"},
	{"format", O_STR, OFF(format), 0, 0, "text", false, "text|json|csv|md", PC,
	 "output format"},
	{"format", O_STR, OFF(format), 0, 0, "text", false, "text|json|csv|md", S,
	 "output format: csv is a header and the row `sweep` writes for the configuration, md the "
	 "text report as Markdown"},
	{"format", O_STR, OFF(format), 0, 0, "text", false, "text|json", CMD_MODELS | CMD_HARDWARE,
	 "output format"},
	{"match", O_STR, OFF(match), 0, 0, NULL, false, "text", CMD_MODELS,
	 "only the models whose name, an alias or Hugging Face repository holds this text (case "
	 "ignored): qwen2-, llama-3, meta-llama/"},
	{"help", O_FLAG, OFF(help), 0, 0, NULL, false, "", ALL, "print this help"},
};

#define NOPTS ((int)(sizeof table / sizeof table[0]))
_Static_assert(sizeof table / sizeof table[0] <= 128, "tp_opts.given is a 128-bit mask");

/* Marks option i of the table as given. */
static void mark_given(struct tp_opts *o, int i)
{
	o->given[i / 64] |= 1ull << (i % 64);
}

static const struct opt *find(int cmd, const char *name)
{
	for (int i = 0; i < NOPTS; i++)
		if ((table[i].cmds & cmd) && table[i].name[0] == name[0] &&
		    strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

/*
 * Options as the peers name them, for the error an unknown one gets: the name tierplan takes
 * for the same thing (a suggestion, not an alias: one name for each flag), with the value a
 * peer's switch means where it means one. Megatron-LM's arguments.py, DeepSpeed's ds_config
 * keys, Hugging Face TrainingArguments and TRL's SFTConfig, LLaMA-Factory's, torchtune's and
 * axolotl's configs, torchrun's flags; '_' compared as '-'.
 */
static const struct {
	const char *peer, *whose, *ours;
} peers[] = {
	{"seq-length", "Megatron-LM", "seq"},
	{"max-seq-length", "TRL", "seq"},
	{"max-seq-len", "torchtune", "seq"},
	{"micro-batch-size", "Megatron-LM", "batch"},
	{"per-device-train-batch-size", "Hugging Face", "batch"},
	{"train-micro-batch-size-per-gpu", "DeepSpeed", "batch"},
	{"global-batch-size", "Megatron-LM", "global-batch"},
	{"train-batch-size", "DeepSpeed", "global-batch"},
	{"gradient-accumulation-steps", "Hugging Face and DeepSpeed", "grad-accum"},
	{"tensor-model-parallel-size", "Megatron-LM", "tp"},
	{"pipeline-model-parallel-size", "Megatron-LM", "pp"},
	{"context-parallel-size", "Megatron-LM", "cp"},
	{"expert-model-parallel-size", "Megatron-LM", "ep"},
	{"expert-tensor-parallel-size", "Megatron-LM", "expert-tp"},
	{"num-layers-per-virtual-pipeline-stage", "Megatron-LM", "interleave"},
	{"num-virtual-stages-per-pipeline-rank", "Megatron-LM", "interleave"},
	{"decoder-first-pipeline-num-layers", "Megatron-LM", "first-stage-layers"},
	{"decoder-last-pipeline-num-layers", "Megatron-LM", "last-stage-layers"},
	{"recompute-granularity", "Megatron-LM", "recompute"},
	{"recompute-num-layers", "Megatron-LM", "recompute-layers"},
	{"zero-stage", "DeepSpeed", "zero"},
	{"nproc-per-node", "torchrun", "gpus-per-node"},
	{"lora-r", "axolotl", "lora-rank"},
	{"batch-size", "torchtune", "batch"},
	{"local-batch-size", "torchtitan", "batch"},
	{"seq-len", "torchtitan", "seq"},
	{"cutoff-len", "LLaMA-Factory", "seq"},
	{"finetuning-type", "LLaMA-Factory", "method"},
	{"lora-target", "LLaMA-Factory", "lora-targets"},
	{"quantization-bit", "LLaMA-Factory", "method qlora"},
	{"load-in-4bit", "Hugging Face", "method qlora"},
	{"use-unsloth", "LLaMA-Factory", "lora-kernels unsloth"},
	{"flash-attn", "LLaMA-Factory", "attention"},
	{"optim", "Hugging Face", "optimizer"},
	{"gradient-checkpointing", "Hugging Face", "recompute full"},
	{"bf16", "Hugging Face", "precision"},
	{"fp16", "Hugging Face", "precision"},
};

/* The option an unknown name qualifies with words of its own before a dash (--micro-batch,
 * --max-seq): the longest of the n candidates it ends with after a dash; NULL none. */
static const char *qualified(const char *name, const char *const *cands, int n)
{
	const char *best = NULL;
	size_t ln = strlen(name);
	for (int i = 0; i < n; i++) {
		size_t lc = strlen(cands[i]);
		if (lc < ln && name[ln - lc - 1] == '-' && !strcmp(name + ln - lc, cands[i]) &&
		    (!best || lc > strlen(best)))
			best = cands[i];
	}
	return best;
}

/* What plan or compare searches in place of simulate's one value of option `name`, said where
 * it is not theirs (plan --gpus, --tp, --policy); NULL none. */
static const char *searched(int cmd, const char *name)
{
	static const char *const layout[] = {"tp", "pp", "dp", "cp", "ep", "expert-tp",
					     "interleave"};
	if (!(cmd & (CMD_PLAN | CMD_COMPARE)))
		return NULL;
	if (cmd == CMD_PLAN && !strcmp(name, "gpus"))
		return "it searches the GPU counts up to --max-gpus (compare --gpus lists counts; "
		       "simulate runs one)";
	if (!strcmp(name, "policy"))
		return "it weighs every policy (simulate runs one)";
	for (size_t i = 0; i < sizeof layout / sizeof *layout; i++)
		if (!strcmp(name, layout[i]))
			return "it searches the layouts (simulate runs one; --model-parallel "
			       "no keeps data parallelism alone)";
	return NULL;
}

/* The option of command cmd a peer's name for name means, and whose name it is; NULL none. */
static const char *peer_name(const char *name, int cmd, const char **whose)
{
	char n[64];
	size_t i = 0;
	for (; name[i] && i + 1 < sizeof n; i++)
		n[i] = name[i] == '_' ? '-' : name[i];
	n[i] = '\0';
	for (size_t k = 0; k < sizeof peers / sizeof peers[0]; k++) {
		/* ours may carry the value the peer's switch means (recompute full): the option
		 * is its first word */
		char flag[64];
		snprintf(flag, sizeof flag, "%.*s", (int)strcspn(peers[k].ours, " "), peers[k].ours);
		if (!strcmp(n, peers[k].peer) && find(cmd, flag)) {
			*whose = peers[k].whose;
			return peers[k].ours;
		}
	}
	return NULL;
}


bool tp_opts_given(const struct tp_opts *o, const char *name)
{
	for (size_t w = 0; w < sizeof o->given / sizeof o->given[0]; w++) /* the given alone */
		for (uint64_t bits = o->given[w]; bits; bits &= bits - 1) {
			const char *n = table[w * 64 + __builtin_ctzll(bits)].name;
			if (n[0] == name[0] && strcmp(n, name) == 0)
				return true;
		}
	return false;
}

/* The bytes an option of type t fills in struct tp_opts. */
static size_t field_size(enum otype t)
{
	switch (t) {
	case O_STR:
		return sizeof(const char *);
	case O_COUNT:
		return sizeof(uint64_t);
	case O_ENUM:
		return sizeof(int);
	case O_TARGETS:
		return sizeof(unsigned);
	case O_FLAG:
		return sizeof(bool);
	default:
		return sizeof(double);
	}
}

/* Converts one value into its destination. 0 ok, -3 with err. */
static int set(const struct opt *op, const char *val, struct tp_opts *o, char *err, size_t errlen)
{
	void *dst = (char *)o + op->off;
	char msg[400];
	double d;
	uint64_t u;

	switch (op->type) {
	case O_STR:
		if (!*val) {
			snprintf(err, errlen, "--%s: empty value", op->name);
			return -3;
		}
		*(const char **)dst = val;
		return 0;
	case O_FLAG:
		*(bool *)dst = true;
		return 0;
	case O_COUNT:
		/* a length in tokens with a suffix: "4k" is 4000 to the unit parser and 4096 to
		 * whoever speaks of a 4k context, so neither is guessed */
		if (op->what && !strcmp(op->what, "tokens") && strpbrk(val, "kKmMgGbBtT")) {
			char *end;
			double n = strtod(val, &end);
			int k = *end == 'k' || *end == 'K' ? 1 : *end == 'm' || *end == 'M' ? 2 : 3;
			snprintf(err, errlen,
				 "--%s: '%s' is ambiguous: %.0f tokens as a context length "
				 "counts, %.0f as the suffix reads; give the number",
				 op->name, val, n * pow(1024, k), n * pow(1000, k));
			return -3;
		}
		if (cfg_parse_u64(val, CFG_U_COUNT, &u, msg, sizeof msg) < 0) {
			snprintf(err, errlen, "--%s: %s", op->name, msg);
			return -3;
		}
		if ((double)u < op->min || (double)u > op->max) {
			snprintf(err, errlen, "--%s: %s is out of range (allowed %.0f to %.0f)",
				 op->name, val, op->min, op->max);
			return -3;
		}
		*(uint64_t *)dst = u;
		return 0;
	case O_SIZE:
	case O_REAL:
	case O_TIME:
	case O_USD:
		if (cfg_parse_quantity(val,
				       op->type == O_SIZE   ? CFG_U_SIZE
				       : op->type == O_TIME ? CFG_U_TIME
				       : op->type == O_USD  ? CFG_U_USD
							    : CFG_U_COUNT,
				       &d, msg, sizeof msg) < 0) {
			snprintf(err, errlen, "--%s: %s", op->name, msg);
			return -3;
		}
		if (d < op->min || d > op->max) {
			snprintf(err, errlen, "--%s: %s is out of range (allowed %g to %g)", op->name,
				 val, op->min, op->max);
			return -3;
		}
		*(double *)dst = d;
		return 0;
	case O_ENUM: {
		/* recompute and loss take auto too (-1: the fastest that fits; chunked where
		 * tiered) */
		bool automatic = !strcmp(op->what, "recompute") || !strcmp(op->what, "loss");
		if (mdl_parse_enum(op->what, val, automatic ? "auto" : NULL, (int *)dst, msg,
				   sizeof msg) < 0) {
			snprintf(err, errlen, "--%s: %s", op->name, msg);
			return -3;
		}
		/* a Trainer optim name may say AdamW steps by the multi-tensor path
		 * (tp_warn_inputs) */
		int foreach;
		if (!strcmp(op->what, "optimizer")) {
			mdl_optimizer_trainer(val, &foreach);
			o->optimizer_foreach = foreach == 1;
		}
		return 0;
	}
	case O_TARGETS:
		if (mdl_parse_targets(val, (unsigned *)dst, msg, sizeof msg) < 0) {
			snprintf(err, errlen, "--%s: %s", op->name, msg);
			return -3;
		}
		return 0;
	}
	return -3;
}

/* A --deepspeed config's flags go in as if typed, unless the command line gave the same flag
 * another value: that contradiction is refused (-3). */
static int deepspeed(int cmd, const char *path, const char **vals, struct tp_opts *o, char *err,
		     size_t errlen)
{
	if (tp_ds_read(path, &o->ds, err, errlen) < 0)
		return -3;
	for (int i = 0; i < o->ds.n; i++) {
		const struct opt *op = find(cmd, o->ds.set[i].flag);
		int k = (int)(op - table);
		if (!op) { /* plan reads policy, zero and offload-param itself; the rest are
			    * simulate's */
			size_t n = strlen(o->ds.notes);
			const char *fl = o->ds.set[i].flag;
			bool plans = !strcmp(fl, "policy") || !strcmp(fl, "zero") ||
				     !strcmp(fl, "offload-param");
			if (!plans)
				snprintf(o->ds.notes + n, sizeof o->ds.notes - n,
					 "kept --%s at its default: this command has no such flag\n",
					 fl);
			continue;
		}
		if (vals[k]) { /* both: the same value, resolved, or a contradiction */
			struct tp_opts a, b;
			char e2[256];
			memset(&a, 0, sizeof a);
			memset(&b, 0, sizeof b);
			if (set(op, vals[k], &a, e2, sizeof e2) == 0 &&
			    set(op, o->ds.set[i].value, &b, e2, sizeof e2) == 0 &&
			    (op->type == O_STR
				     ? strcmp(*(const char **)((char *)&a + op->off),
					      *(const char **)((char *)&b + op->off)) == 0
				     : memcmp((char *)&a + op->off, (char *)&b + op->off,
					      field_size(op->type)) == 0))
				continue;
			snprintf(err, errlen, "--%s %s contradicts %s: %s gives --%s %s", op->name,
				 vals[k], path, o->ds.set[i].key, op->name, o->ds.set[i].value);
			return -3;
		}
		vals[k] = o->ds.set[i].value;
		mark_given(o, k);
	}
	return 0;
}

/* Each option's default as set() converts it, once per process (a sweep parses every point's
 * flags, and converting some 80 defaults was most of that): def_ok[k] when table[k]'s default
 * converts, its field's bytes in def_val[k]. set() writes its own field alone, so copying them
 * is converting it again. */
static pthread_once_t defaults_once = PTHREAD_ONCE_INIT;
static unsigned char def_val[sizeof table / sizeof table[0]][8];
static bool def_ok[sizeof table / sizeof table[0]];
_Static_assert(sizeof def_val[0] >= sizeof(double) && sizeof def_val[0] >= sizeof(uint64_t) &&
		       sizeof def_val[0] >= sizeof(const char *),
	       "def_val holds any field");

static void convert_defaults(void)
{
	static struct tp_opts scratch;
	char err[256];
	for (int k = 0; k < NOPTS; k++) {
		const struct opt *op = &table[k];
		if (op->def && set(op, op->def, &scratch, err, sizeof err) == 0) {
			memcpy(def_val[k], (char *)&scratch + op->off, field_size(op->type));
			def_ok[k] = true;
		}
	}
}

int tp_opts_parse(int cmd, int argc, char **argv, int first, struct tp_opts *o, char *err,
		  size_t errlen)
{
	const char *vals[NOPTS];
	int rc;

	memset(o, 0, sizeof *o);
	memset(vals, 0, sizeof vals);
	for (int i = first; i < argc; i++) {
		const char *arg = argv[i], *eq, *val;
		char name[64];
		const struct opt *op;

		if (strncmp(arg, "--", 2) != 0 || !arg[2]) {
			snprintf(err, errlen, "unexpected argument '%s'", arg);
			return -2;
		}
		eq = strchr(arg + 2, '=');
		size_t len = eq ? (size_t)(eq - arg - 2) : strnlen(arg + 2, sizeof name - 1);
		len = len < sizeof name - 1 ? len : sizeof name - 1;
		memcpy(name, arg + 2, len); /* not snprintf: a sweep parses every point's flags */
		name[len] = '\0';
		op = find(cmd, name);
		if (!op) {
			const char *cands[NOPTS];
			int nc = 0;
			for (int k = 0; k < NOPTS; k++)
				if (table[k].cmds & cmd)
					cands[nc++] = table[k].name;
			/* another command's option: say whose, rather than guess a near name */
			static const struct {
				int cmd;
				const char *name;
			} cmds[] = {{CMD_PLAN, "plan"},
				    {CMD_COMPARE, "compare"},
				    {CMD_SIMULATE, "simulate"},
				    {CMD_MODELS, "models"},
				    {CMD_HARDWARE, "hardware"}};
			const char *self = "", *whose_cmd[sizeof cmds / sizeof *cmds];
			int nw = 0;
			for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++)
				if (cmds[c].cmd == cmd)
					self = cmds[c].name;
				else if (find(cmds[c].cmd, name))
					whose_cmd[nw++] = cmds[c].name;
			char others[64] = "";
			for (int w = 0; w < nw; w++) {
				size_t used = strlen(others);
				snprintf(others + used, sizeof others - used, "%s%s",
					 w == 0 ? "" : w == nw - 1 ? " and " : ", ", whose_cmd[w]);
			}
			const char *near = nw ? NULL : cfg_did_you_mean(name, cands, nc);
			const char *whose = NULL;
			if (!near && !nw)
				near = peer_name(name, cmd, &whose);
			if (!near && !nw)
				near = qualified(name, cands, nc);
			const char *instead = searched(cmd, name);
			if (instead)
				snprintf(err, errlen, "unknown option '--%s' for %s: %s", name, self,
					 instead);
			else if (nw)
				snprintf(err, errlen, "unknown option '--%s' for %s (%s take%s it)",
					 name, self, others, nw > 1 ? "" : "s");
			else if (whose)
				snprintf(err, errlen,
					 "unknown option '--%s' (%s's name; tierplan's is '--%s')",
					 name, whose, near);
			else
				snprintf(err, errlen, "unknown option '--%s'%s%s%s", name,
					 near ? " (did you mean '--" : "", near ? near : "",
					 near ? "'?)" : "");
			return -2;
		}
		if (op->type == O_FLAG) {
			if (eq) {
				snprintf(err, errlen, "--%s takes no value", op->name);
				return -2;
			}
			val = "";
		} else if (eq) {
			val = eq + 1;
		} else if (i + 1 < argc) {
			val = argv[++i];
		} else {
			snprintf(err, errlen, "--%s needs a value (%s)", op->name, op->what);
			return -2;
		}
		vals[op - table] = val;
		mark_given(o, (int)(op - table));
	}
	/* --help wins over everything else, so `plan --help` works without --model */
	if (vals[find(cmd, "help") - table]) {
		o->help = true;
		return 0;
	}
	pthread_once(&defaults_once, convert_defaults);
	const struct opt *dsop = find(cmd, "deepspeed");
	if (dsop && vals[dsop - table] && (rc = deepspeed(cmd, vals[dsop - table], vals, o, err,
							   errlen)) < 0)
		return rc;
	for (int k = 0; k < NOPTS; k++) {
		const struct opt *op = &table[k];
		if (!(op->cmds & cmd))
			continue;
		if (!vals[k] && def_ok[k]) {
			memcpy((char *)o + op->off, def_val[k], field_size(op->type));
			continue;
		}
		const char *v = vals[k] ? vals[k] : op->def;
		if (!v) {
			if (op->required) {
				snprintf(err, errlen, "--%s is required (%s)", op->name, op->help);
				return -2;
			}
			continue;
		}
		if ((rc = set(op, v, o, err, errlen)) < 0)
			return rc;
	}
	return 0;
}

int tp_opts_value(int cmd, const char *name, const char *value, char *err, size_t errlen)
{
	const struct opt *op = find(cmd, name);
	if (!op) {
		snprintf(err, errlen, "unknown option '--%s'", name);
		return -2;
	}
	struct tp_opts o;
	memset(&o, 0, sizeof o);
	if (!strcmp(name, "deepspeed"))
		return tp_ds_read(value, &o.ds, err, errlen) < 0 ? -3 : 0;
	return set(op, value, &o, err, errlen);
}

void tp_opts_help(int cmd, FILE *fp)
{
	for (int k = 0; k < NOPTS; k++) {
		const struct opt *op = &table[k];
		char left[64];
		if (!(op->cmds & cmd))
			continue;
		if (op->type == O_FLAG)
			snprintf(left, sizeof left, "--%s", op->name);
		else
			snprintf(left, sizeof left, "--%s %s", op->name,
				 op->type == O_ENUM || op->type == O_COUNT || op->type == O_REAL
					 ? "N"
					 : op->what);
		if (op->type == O_ENUM)
			snprintf(left, sizeof left, "--%s %s", op->name, "NAME");
		/* the description wrapped under its column, a long name's pushed right */
		char text[2048];
		snprintf(text, sizeof text, "%s%s%s%s", op->help,
			 op->required ? " (required)" : op->def ? " [default " : "",
			 !op->required && op->def ? op->def : "",
			 !op->required && op->def ? "]" : "");
		int col = fprintf(fp, "  %-28s ", left);
		cfg_wrap(fp, (size_t)col, 31, CFG_TEXT_COLUMNS, text, " ");
	}
}
