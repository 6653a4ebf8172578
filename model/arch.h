/*
 * arch — transformer architectures read from Hugging Face config.json files.
 *
 * A model is described by its config.json (of a model_type mdl_arch_supported lists); fields a
 * file omits take the defaults of the transformers library's config class for that model_type
 * (table in arch.c, with the class each default comes from). From the config we build one tensor inventory per decoder
 * layer plus the tensors outside the layers; every count — total, trainable, active (MoE),
 * matmul parameters for FLOPs, LoRA adapter sizes, factored optimizer states — is derived from
 * that one inventory, so the counts cannot disagree. Fused projections (phi3 qkv_proj and
 * gate_up_proj, gpt2 c_attn) are listed as their logical parts; the parameter count is identical.
 *
 * Layers that differ (DeepSeek-V3's first three dense layers before 58 MoE layers, Qwen3-MoE's
 * mlp_only_layers) are one inventory whose tensors say how many layers hold them: totals stay
 * exact, and a per-layer figure (a pipeline stage's share, a layer's activations) is the mean
 * layer, as if the heavier layers were spread evenly over the stages.
 * Multi-head latent attention (DeepSeek-V2/V3, MLA) is listed as its down- and up-projections;
 * attention runs on heads of qk_nope + qk_rope dimensions for scores and v_head_dim for values,
 * with keys and values decompressed per head as the Hugging Face implementation does.
 *
 * Invariants: all dimensions positive; heads divisible by kv_heads; counts exact in uint64.
 * Failure: mdl_arch_load() returns -1 with a one-line message naming the file and field.
 */
#ifndef TIERPLAN_ARCH_H
#define TIERPLAN_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* LoRA targets, as --lora-targets names them. embed and head are not adapted but trained whole
 * beside the adapters, as PEFT's modules_to_save does (a trainable copy, the frozen original
 * kept): Qwen's finetune.py saves wte and lm_head for base models, LLaMA-Factory's
 * additional_target and Unsloth's continued pretraining likewise. "all" is every linear of a
 * layer (PEFT's all-linear), not them. */
enum {
	MDL_T_Q = 1 << 0,
	MDL_T_K = 1 << 1,
	MDL_T_V = 1 << 2,
	MDL_T_O = 1 << 3,
	MDL_T_GATE = 1 << 4,
	MDL_T_UP = 1 << 5,
	MDL_T_DOWN = 1 << 6,
	MDL_T_ALL = 0x7f,
	MDL_T_EMBED = 1 << 7, /* the token embedding, trained whole */
	MDL_T_HEAD = 1 << 8,  /* the output head, trained whole (untied models) */
};

struct mdl_tensor {
	const char *name;
	uint64_t rows;    /* input features for a linear; elements for a vector */
	uint64_t cols;    /* output features for a linear; 1 for a vector (norm weight, bias) */
	unsigned target;  /* MDL_T_* if LoRA can adapt it, else 0 */
	bool matmul;      /* a weight multiplied with every token it sees */
	uint32_t copies;  /* stored copies per layer (experts) */
	uint32_t active;  /* copies each token passes through (top-k experts) */
	uint32_t layers;  /* decoder layers that hold it; 0 = every layer */
};

#define MDL_MAX_TENSORS 32

struct mdl_arch {
	char name[96];
	char model_type[24];
	uint64_t vocab, hidden, layers, heads, kv_heads, head_dim, intermediate, positions;
	uint64_t v_head_dim;               /* value head size; = head_dim except MLA */
	uint32_t experts, experts_per_tok; /* 0 and 0 for dense models */
	uint64_t moe_intermediate;         /* one expert's width (= intermediate for mixtral) */
	uint32_t shared_experts;           /* experts every token passes (DeepSeek, Qwen2-MoE) */
	uint64_t shared_intermediate;      /* their one MLP's width: n_shared x the expert
					    * width (DeepSeek), shared_expert_intermediate_size
					    * (Qwen2-MoE), the expert width (Llama 4) */
	bool shared_gate;                  /* a sigmoid gate on the shared expert (Qwen2-MoE) */
	uint64_t moe_layers;               /* layers with experts (0 for dense models) */
	uint64_t q_lora_rank, kv_lora_rank, qk_rope_dim; /* MLA; 0 = standard attention */
	bool qk_norm;                      /* RMSNorm on each query and key head (Qwen3, Gemma 3) */
	bool qk_norm_full;                 /* ... over the whole q and k projections (OLMo 2) */
	uint64_t sliding_window;           /* tokens a windowed layer attends to; 0 = none */
	uint64_t sliding_layers;           /* layers with the window; the rest attend fully */
	bool tied;                         /* lm_head shares the embedding matrix */
	bool gated_mlp;                    /* SwiGLU/GeGLU: gate, up, down */
	bool geglu;                        /* gated by GELU (Gemma), not SiLU */
	bool quick_glu;                    /* gpt-oss: gated by quick GELU, up offset by 1 */
	double glu_limit;                  /* gpt-oss: swiglu_limit, its clamp; 0 none */
	bool learned_positions;            /* gpt2, opt: position embedding table */
	uint32_t position_offset;          /* rows of that table beyond the positions (OPT's 2) */
	bool alibi;                        /* positions as attention biases (BLOOM): no table,
					    * no rotary embedding */
	bool embed_norm;                   /* a LayerNorm on the token embeddings (BLOOM) */
	bool relu_mlp;                     /* the plain MLP's activation is ReLU (OPT), whose
					    * backward reads its output, the second linear's
					    * input: one tensor kept, not GELU's two */
	bool squared_relu;                 /* ... squared ReLU (Nemotron's relu2): two kept,
					    * the ReLU's output and the square's, as GELU's */
	bool norm_weightless;              /* norms without weights or biases (OLMo's
					    * non-parametric LayerNorm): no parameters, the same
					    * kernels and activations */
	/* the norms return their input's dtype whatever their weight's (transformers
	 * modeling_*.py): GemmaRMSNorm and Gemma 3's (output.type_as(x)), Olmo2RMSNorm and
	 * OLMo 3's ((weight * x).to(input_dtype)), CohereLayerNorm and Cohere2LayerNorm;
	 * LlamaRMSNorm's weight * x.to(input_dtype) takes an fp32 weight's dtype (mdl_upcast) */
	bool norm_cast_back;
	bool norm_1p;                      /* LayerNorm weights stored less one (Nemotron's
					    * LayerNorm1P): the same tensors */
	double rotary_fraction;            /* share of each head RoPE rotates (Nemotron's and
					    * GLM's partial_rotary_factor, ChatGLM's half); 0 =
					    * all of it */
	bool qkv_bias, o_bias, mlp_bias;   /* linear biases */
	bool router_bias;                  /* a bias on the MoE router's logits (GPT-OSS) */
	bool attn_sinks;                   /* a learned sink logit per attention head (GPT-OSS) */
	bool norm_bias;                    /* LayerNorm (weight + bias) rather than RMSNorm */
	bool head_bias;                    /* lm_head has a bias (Phi) */
	/* tanh soft-capping (Gemma 2: attn_logit_softcapping, final_logit_softcapping): the
	 * scores / cap, tanh, * cap, as Gemma2's eager attention and Gemma2ForCausalLM run it;
	 * tanh keeps its output for backward (act.c) */
	bool attn_softcap, final_softcap;
	bool norm_head;                    /* lm_head's weight normalised each forward, a copy
					    * its matmul keeps for backward (Baichuan 2) */
	int norms_per_layer;               /* 2; 4 for gemma2; 1 for a parallel block (Phi) */
	bool parallel;                     /* attention and MLP side by side on the same input
					    * (Phi, Falcon), each normed (2 norms) or one norm */
	/* The Hugging Face implementation projects q, k and v in one linear and splits its output
	 * into views: GPTNeoXAttention (query_key_value, chunked), Phi3Attention (qkv_proj,
	 * sliced), QWenAttention (c_attn, split; modeling_qwen.py). The rotary embedding makes new
	 * q and k; v stays a view, so the attention's saved v keeps the whole projection output
	 * alive until backward (mdl_job.fused_qkv, act.c). Falcon's multi-query split copies k
	 * and v by indexing, GPT-2's and MPT's fused outputs are q, k and v themselves (no
	 * rotary): no such arch. */
	bool fused_qkv;
	/* The implementation copies grouped keys and values to every query head before the
	 * attention kernel, which keeps the copies (ChatGLM's remote code): --repeat-kv auto */
	bool kv_repeated;
	double attn_dropout, resid_dropout, embd_dropout;
	/* a key the config spells close to one tierplan reads, which therefore fell back to its
	 * default ("" when none): a typo such as num_hidden_layer silently changes the model */
	char warning[256];
	/* the checkpoint's quantization_config (Hugging Face): its quant_method ("" none) and, for
	 * GPTQ, its bits, group size (input features sharing a scale; 0 for group_size -1, one
	 * group) and act order (desc_act) */
	char quant_method[16];
	uint32_t quant_bits, quant_group;
	bool quant_desc_act;
	bool quant_named; /* these come from a quantised release's name (cfg_model_resolve) */

	/* inventory, filled by mdl_arch_load() */
	struct mdl_tensor layer[MDL_MAX_TENSORS]; /* one decoder layer */
	int nlayer;
	struct mdl_tensor outer[8]; /* embeddings, final norm, lm_head */
	int nouter;
};

/* Whether the layers rotate queries and keys (RoPE): not with a position table or ALiBi. */
static inline bool mdl_arch_rotary(const struct mdl_arch *a)
{
	return !a->learned_positions && !a->alibi;
}

/* The share of the decoder layers that hold t: 1 for a tensor of every layer. Multiplying a
 * tensor's per-layer figure by it and summing gives the mean layer. */
static inline double mdl_tensor_share(const struct mdl_arch *a, const struct mdl_tensor *t)
{
	return t->layers ? (double)t->layers / (double)a->layers : 1.0;
}

/* Whether t is one of the attention half's projections (query, key, value, output; MLA's
 * down and up projections among them), not the MLP's or a router. */
static inline bool mdl_tensor_attn(const struct mdl_tensor *t)
{
	return (t->target & (MDL_T_Q | MDL_T_K | MDL_T_V | MDL_T_O)) != 0;
}

/* The intermediate width a token passes through in the mean layer's MLP (experts it is routed
 * to, shared experts, or the dense MLP), in elements. */
double mdl_arch_mlp_width(const struct mdl_arch *a);

/* The query/key/value/output projections' weights a token multiplies through in one layer. */
double mdl_arch_attn_proj_params(const struct mdl_arch *a);

/* Elements of the model's largest stored weight tensor (an expert's matrix counted alone, as
 * Hugging Face's models hold each expert's linears apart): the embedding, for most models. */
uint64_t mdl_arch_largest_tensor(const struct mdl_arch *a);

struct mdl_counts {
	uint64_t params;        /* exact total, as in the checkpoint */
	uint64_t active_params; /* per token (MoE: top-k experts); = params for dense */
	uint64_t layer_params;  /* the mean decoder layer (exact when all layers are alike) */
	uint64_t embed_params;  /* input embedding (+ positions) */
	uint64_t head_params;   /* final norm + untied lm_head */
	uint64_t matmul_params; /* weights each token multiplies through, lm_head included */
};

/* Reads a Hugging Face config.json at path into *a. 0 ok; -1 with err ("file: field: why"). */
int mdl_arch_load(const char *path, struct mdl_arch *a, char *err, size_t errlen);

/* Parses a config.json already in memory (for fuzzing and tests); origin names it in errors. */
int mdl_arch_parse(const char *json, const char *origin, struct mdl_arch *a, char *err,
		   size_t errlen);

/* Exact parameter counts derived from the inventory. */
void mdl_arch_counts(const struct mdl_arch *a, struct mdl_counts *c);

/* The model_types the reader supports, comma separated, for messages and help. */
const char *mdl_arch_supported(void);

/* Parses "q,k,v,o,gate,up,down" or "all" into an MDL_T_* mask. -1 with err on an unknown name. */
int mdl_parse_targets(const char *s, unsigned *mask, char *err, size_t errlen);

/* Writes the mask back as "q,k,v,o,gate,up,down". */
char *mdl_targets_str(unsigned mask, char *buf, size_t n);

#endif
