/* arch — see arch.h. Defaults per model_type are data (family table); one reader walks it. */
#include "arch.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog.h"
#include "file.h"

/*
 * Defaults for fields a config.json omits, per model_type, as the transformers library's
 * config classes define them (transformers v4.45, src/transformers/models/<type>/configuration_
 * <type>.py): LlamaConfig, GraniteConfig (Llama's tensors; its embedding, residual, attention
 * and logit multipliers change no shape), MistralConfig, MixtralConfig, Qwen2Config, GemmaConfig,
 * Gemma2Config, Phi3Config, GPT2Config, Olmo2Config (its q and k RMSNorms span the whole
 * projections; its two norms follow attention and MLP instead of preceding them: the same
 * tensors); and transformers v4.51-4.55 for Qwen3Config,
 * Qwen3MoeConfig, Gemma3TextConfig and DeepseekV3Config; DeepSeek-V2 (its own
 * DeepseekV2Config, shipped with the checkpoint) takes DeepSeek-V2-Lite's shape, the one
 * fine-tuned most, and differs from V3 in its router (no selection bias) and its q_proj
 * (q_lora_rank null in Lite). kv_heads 0 means "= heads"
 * (num_key_value_heads=None); head_dim 0 means hidden/heads. Biases and norm shapes are not
 * config fields but fixed by the modeling code: Qwen2Attention builds q/k/v with bias=True;
 * GemmaDecoderLayer has two RMSNorms, Gemma2DecoderLayer and Gemma3DecoderLayer have
 * four RMSNorms; Qwen3Attention and Gemma3Attention add q_norm and k_norm over head_dim;
 * DeepseekV3Attention normalises its compressed query and key-value (q_a_layernorm,
 * kv_a_layernorm) and its router keeps an e_score_correction_bias per expert; GPT-2 uses
 * LayerNorm (weight and bias) and biases on every Conv1D. GptOssConfig (transformers v4.55):
 * every layer's MLP is experts (num_local_experts, intermediate_size wide, with biases on
 * their gate-up and down projections), the router and q/k/v/o carry biases, each attention
 * head a learned sink logit, and every other layer a 128-token window.
 * OPTConfig and BloomConfig (transformers v4.45): OPT (opt and bloom below say what their own
 * keys mean) keeps a learned position table and biases on every linear, its MLP by ReLU;
 * BLOOM (ALiBi) has no position table, a LayerNorm on its embeddings, biases everywhere and a
 * GELU MLP of 4 x hidden; both tie the head to the embeddings. BloomConfig's own defaults are a
 * test model's (hidden 64, 2 layers, 8 heads), kept as the library has them.
 * Qwen (v1: Qwen-1.8B to Qwen-72B) ships its own QWenConfig and modeling_qwen.py with the
 * checkpoint (Qwen/Qwen-7B on the Hub): c_attn is one q/k/v projection with a bias, c_proj and
 * the MLP's w1, w2 and c_proj carry biases only without no_bias, the head dimension is
 * kv_channels, and intermediate_size counts both gated branches: each is intermediate_size / 2
 * wide (QWenMLP's ff_dim_in).
 * Sliding windows: the modeling code applies sliding_window to every layer for Mistral and Phi-3,
 * to every other layer for Gemma 2 (layer i is windowed when i is even), and to five layers of
 * six for Gemma 3 (sliding_window_pattern 6); a config's layer_types list, where present, says
 * it per layer. Qwen2/Qwen3 use one only with use_sliding_window true.
 */
/* A family's own config keys, read after the common ones and the experts (see each). */
typedef int own_keys(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		     size_t errlen);
static own_keys qwen_v1, baichuan, llama4, chatglm, glm, falcon, gpt_neox, opt, bloom, mpt,
	glm4_moe, gemma2, gemma3_text,
	nemotron, starcoder2, gpt_bigcode, cohere, phimoe, stablelm, seed_oss, arcee, ernie4_5_moe;

struct family {
	const char *model_type;
	/* json key names: gpt2 spells them differently */
	const char *k_hidden, *k_layers, *k_heads, *k_inter, *k_pos;
	uint64_t vocab, hidden, intermediate, layers, heads, kv_heads, head_dim, positions;
	uint32_t experts, experts_per_tok;
	bool tied, qkv_bias, o_bias, mlp_bias, norm_bias, gated, learned_pos;
	int norms_per_layer;
	const char *k_attn_drop, *k_resid_drop, *k_embd_drop; /* NULL: not a field (0.0) */
	double attn_drop, resid_drop, embd_drop;
	bool qk_norm, qk_norm_full; /* per head; over the whole projection (Olmo2Attention) */
	bool router_bias, sinks; /* GptOssTopKRouter's bias; GptOssAttention's sinks */
	bool head_bias;          /* PhiForCausalLM's lm_head bias */
	bool alibi;              /* positions as attention biases (BLOOM's ALiBi) */
	bool embed_norm;         /* BloomModel's word_embeddings_layernorm */
	bool norm_weightless;    /* OlmoLayerNorm: no weight, no bias */
	bool norm_cast_back;     /* the norms return their input's dtype (mdl_arch says whose) */
	bool parallel;           /* attention and MLP on the same input (Phi, Falcon) */
	bool fused_qkv;          /* one q/k/v projection, split into views (arch.h) */
	bool geglu;              /* the gated MLP's activation is GELU (GemmaMLP's
				  * hidden_activation gelu_pytorch_tanh), not SiLU */
	bool quick_glu;          /* GptOssExperts: gate x sigmoid(1.702 gate), clamped at
				  * swiglu_limit, times (up + 1) */
	uint64_t window;     /* sliding_window's default; 0 = None */
	uint32_t full_every; /* every n-th layer attends fully (Gemma); 0 = all windowed */
	bool windowed;       /* the modeling code honours sliding_window without a switch */
	/* MoE (qwen3_moe, deepseek_v3) */
	uint64_t moe_inter, first_dense;
	uint32_t shared;
	uint64_t shared_inter; /* shared_expert_intermediate_size's default; 0: n_shared x moe */
	/* MLA (deepseek_v3) */
	uint64_t q_lora, kv_lora, qk_rope, qk_nope, v_head;
	const char *k_experts; /* the routed-expert count's key; NULL: num_experts */
	const char *k_attn_bias; /* the key that puts biases on q, k, v and o (attention_bias:
				  * LlamaConfig, GraniteConfig, GemmaConfig, Gemma2Config,
				  * GptOssConfig; bias: InternLM2Config); NULL: none */
	bool mlp_bias_key;     /* mlp_bias on gate, up and down (LlamaConfig, GraniteConfig) */
	const char *k_all_bias; /* the key that puts biases on every projection, attention's and
				 * the MLP's (use_bias: Starcoder2Config, Ernie4_5Config; bias:
				 * FalconConfig); NULL: none */
	own_keys *own;         /* the family's own keys, or NULL */
};

static const struct family families[] = {
	{"llama", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "attention_bias", .mlp_bias_key = true},
	{"chatglm", "hidden_size", "num_layers", "num_attention_heads", "ffn_hidden_size",
	 "seq_length", 65024, 4096, 13696, 28, 32, 0, 128, 2048, 0, 0, false, false, false, false,
	 false, true, false, 2, "attention_dropout", "hidden_dropout", NULL, 0.0, 0.0, 0.0,
	 .own = chatglm},
	/* GlmConfig and Glm4Config (transformers modeling_glm.py, modular_glm4.py; GLM-4-9B's
	 * transformers port and the GLM-4-0414 family), whose defaults are GLM-4-9B's shape: q, k
	 * and v biased with attention_bias, o_proj never (GlmAttention); Phi3MLP's merged gate and
	 * up projection, SiLU; RMSNorms, two a layer, Glm4DecoderLayer four (after attention and
	 * after the MLP as well, Gemma 2's placement); an untied head; glm below reads the rest */
	{"glm", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151552, 4096, 13696, 40, 32, 2, 128, 131072, 0, 0, false, true,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .own = glm},
	{"glm4", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151552, 4096, 13696, 40, 32, 2, 128, 131072, 0, 0, false, true,
	 false, false, false, true, false, 4, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .own = glm},
	{"granite", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "attention_bias", .mlp_bias_key = true},
	/* InternLM2 and InternLM2.5 (remote code: configuration_internlm2.py and
	 * modeling_internlm2.py shipped with each checkpoint): Llama's tensors with q, k and v
	 * fused in one wqkv, the same shapes; `bias` (true in InternLM2Config, false in the
	 * released checkpoints' configs) on wqkv and wo. Its checkpoints' configs name every shape
	 * field; InternLM2Config's defaults differ between releases (the vocabulary above all),
	 * so Llama's stand in. */
	{"internlm2", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 0,
	 0, false, true, true, false, false, true, false, 2, NULL, NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "bias"},
	/* OlmoConfig (transformers configuration_olmo.py and modeling_olmo.py; OLMo-1B and 7B,
	 * the -hf checkpoints), whose defaults are OLMo-7B's shape: Llama's tensors under
	 * OlmoLayerNorm, a LayerNorm without weight or bias; q/k/v/o biased with attention_bias;
	 * clip_qkv clamps activations and changes no shape */
	{"olmo", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 50304, 4096, 11008, 32, 32, 0, 0, 2048, 0, 0, false, false,
	 false, false, true, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .norm_weightless = true, .k_attn_bias = "attention_bias"},
	/* StableLmConfig (transformers configuration_stablelm.py and modeling_stablelm.py;
	 * StableLM-3B-4E1T, StableLM 2, Zephyr and StableCode), whose defaults are
	 * StableLM-3B-4E1T's shape: Llama's attention and gated SiLU MLP under LayerNorms of weight
	 * and bias, an untied head; stablelm below reads the rest */
	{"stablelm", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 50304, 2560, 6912, 32, 32, 0, 0, 4096, 0,
	 0, false, false, false, false, true, true, false, 2, "attention_dropout",
	 "hidden_dropout", NULL, 0.0, 0.0, 0.0, .own = stablelm},
	/* SmolLM3Config (transformers configuration_smollm3.py; SmolLM3-3B), whose defaults are
	 * SmolLM3-3B's shape: Llama's tensors with the head tied; its NoPE layers (every fourth,
	 * no_rope_layers) skip the rotary kernels, which are counted on every layer, and its
	 * optional windows (use_sliding_window, off in the checkpoint) are not modelled */
	{"smollm3", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 128256, 2048, 11008, 36, 16, 4, 0, 32768, 0, 0, true, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "attention_bias", .mlp_bias_key = true},
	/* ArceeConfig (transformers configuration_arcee.py and modular_arcee.py; Arcee's
	 * AFM-4.5B): Llama's attention (q/k/v/o biased with attention_bias) and RMSNorms with
	 * Nemotron's plain MLP (up_proj, hidden_act, down_proj; biased with mlp_bias), relu2 by
	 * default (arcee below); an untied head; defaults as ArceeConfig's */
	{"arcee", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 2560, 18432, 32, 32, 0, 0, 4096, 0, 0, false, false,
	 false, false, false, false, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "attention_bias", .mlp_bias_key = true, .own = arcee},
	/* HunYuanDenseV1Config (transformers configuration_hunyuan_v1_dense.py and
	 * modular_hunyuan_v1_dense.py; Tencent's Hunyuan 0.5B to 7B): Llama's attention (q/k/v/o
	 * biased with attention_bias) with an RMSNorm over each query and key head
	 * (query_layernorm, key_layernorm), Llama's MLP never biased; defaults as its config's */
	{"hunyuan_v1_dense", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 290943, 4096, 11008, 32, 32, 0, 0, 2048, 0,
	 0, false, false, false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0,
	 0.0, 0.0, .qk_norm = true, .k_attn_bias = "attention_bias"},
	/* SeedOssConfig (transformers configuration_seed_oss.py and modular_seed_oss.py;
	 * ByteDance's Seed-OSS-36B): Llama's layer with q, k and v biased by attention_bias (true)
	 * and o_proj by attention_out_bias (false), gate, up and down by mlp_bias; dropout on the
	 * attention probabilities and on the attention's and the MLP's outputs (residual_dropout),
	 * 0.1 each by default; an untied head (seed_oss below reads the biases) */
	{"seed_oss", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 155136, 4096, 27648, 64, 80, 8, 128,
	 524288, 0, 0, false, true, false, false, false, true, false, 2, "attention_dropout",
	 "residual_dropout", NULL, 0.1, 0.1, 0.0, .mlp_bias_key = true, .own = seed_oss},
	/* Ernie4_5Config (transformers configuration_ernie4_5.py and modular_ernie4_5.py; Baidu's
	 * ERNIE-4.5-0.3B, whose shape the defaults are): Llama's layer, use_bias on every
	 * projection of attention and the MLP, no attention dropout, the head
	 * tied; its interleaved rotary changes no shape */
	{"ernie4_5", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 103424, 1024, 3072, 18, 16, 2, 128, 131072,
	 0, 0, true, false, false, false, false, true, false, 2, NULL, NULL, NULL, 0.0, 0.0, 0.0,
	 .k_all_bias = "use_bias"},
	/* Ernie4_5_MoeConfig (transformers configuration_ernie4_5_moe.py and
	 * modular_ernie4_5_moe.py; ERNIE-4.5-21B-A3B, whose shape the defaults are): ERNIE 4.5's
	 * attention (use_bias on every projection), a dense MLP of intermediate_size in the
	 * layers before moe_layer_start_index, then moe_num_experts experts of
	 * moe_intermediate_size, moe_k a token, beside moe_num_shared_experts shared ones (one
	 * MLP as wide as they are together), its router keeping a correction bias per expert
	 * (Ernie4_5_MoeStatics); the head tied (ernie4_5_moe below reads its MoE keys) */
	{"ernie4_5_moe", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 103424, 2560, 12288, 28, 20, 4, 0, 131072,
	 64, 6, true, false, false, false, false, true, false, 2, NULL, NULL, NULL, 0.0, 0.0, 0.0,
	 .router_bias = true, .moe_inter = 1536, .first_dense = 1, .shared = 2,
	 .k_experts = "moe_num_experts", .k_all_bias = "use_bias", .own = ernie4_5_moe},
	/* Exaone4Config (transformers configuration_exaone4.py and modular_exaone4.py; LG's
	 * EXAONE 4.0 1.2B and 32B): Olmo2's layer (RMSNorms after attention and after the MLP)
	 * with Qwen3's RMSNorm over each query and key head, no biases, an untied head by default;
	 * sliding_window (4,096) on three layers of four (sliding_window_pattern 4, or a string of
	 * L and G such as "LLLG"; layer_types where given), the full layers without rotary
	 * (NoPE: their rotary kernels are counted as the others') */
	{"exaone4", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 102400, 4096, 16384, 32, 32, 32, 0, 2048, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true, .window = 4096, .full_every = 4, .windowed = true},
	{"olmo2", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 50304, 4096, 11008, 32, 32, 0, 0, 2048, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true, .qk_norm_full = true, .norm_cast_back = true},
	/* Olmo3Config (transformers configuration_olmo3.py and modular_olmo3.py; OLMo 3 7B and
	 * 32B): OLMo 2's layer (q and k RMSNorms over the whole projections, norms after attention
	 * and the MLP), q/k/v/o biased with attention_bias (Olmo2Attention), an untied head;
	 * sliding_window (4,096) on three layers of four (layer_types where given) */
	{"olmo3", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 50304, 4096, 11008, 32, 32, 0, 0, 2048, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true, .qk_norm_full = true, .window = 4096, .full_every = 4, .windowed = true,
	 .k_attn_bias = "attention_bias", .norm_cast_back = true},
	{"mistral", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 14336, 32, 32, 8, 0, 131072, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .window = 4096, .windowed = true},
	{"mixtral", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32000, 4096, 14336, 32, 32, 8, 0, 131072, 8, 2, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .windowed = true,
	 .k_experts = "num_local_experts"},
	/* GraniteMoeConfig (transformers configuration_granitemoe.py; IBM's Granite 3.0/3.1
	 * 1B-A400M and 3B-A800M): Granite's attention (its multipliers change no shape) with
	 * num_local_experts experts of intermediate_size in place of the MLP (input_linear holds
	 * gate and up, output_linear down), num_experts_per_tok chosen a token by a router without
	 * bias; RMSNorms; defaults as GraniteMoeConfig's (Llama-7B's dense shape, 8 experts, 2) */
	{"granitemoe", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 32000, 4096, 11008, 32, 32, 0, 0, 2048, 8,
	 2, false, false, false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0,
	 0.0, 0.0, .k_experts = "num_local_experts", .k_attn_bias = "attention_bias"},
	/* PhimoeConfig (transformers configuration_phimoe.py and modeling_phimoe.py; Phi-3.5-MoE),
	 * whose defaults are Phi-3.5-MoE's shape: Mixtral's layer (16 experts of gated SiLU MLPs,
	 * two chosen a token, grouped-query attention) with LayerNorms of weight and bias, q/k/v/o
	 * biased with attention_bias, an untied head biased with lm_head_bias (phimoe below) */
	{"phimoe", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32064, 4096, 6400, 32, 32, 8, 0, 131072, 16, 2, false, false,
	 false, false, true, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .windowed = true, .k_experts = "num_local_experts", .k_attn_bias = "attention_bias",
	 .own = phimoe},
	/* OlmoeConfig (transformers configuration_olmoe.py and modeling_olmoe.py; OLMoE-1B-7B),
	 * whose defaults are OLMoE-1B-7B's shape but for the experts' width (2,048; the checkpoint
	 * has 1,024): Llama's pre-norm layer with num_experts experts of intermediate_size in place
	 * of the MLP, num_experts_per_tok chosen a token, q/k/v/o biased with attention_bias, and
	 * RMSNorms over the whole q and k projections (q_norm hidden wide, k_norm the key-value
	 * width, as Olmo2's); an untied head */
	{"olmoe", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 50304, 2048, 2048, 16, 16, 0, 0, 4096, 64, 8, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true, .qk_norm_full = true, .k_attn_bias = "attention_bias"},
	{"qwen2", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151936, 4096, 22016, 32, 32, 32, 0, 32768, 0, 0, false, true,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0},
	{"qwen", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151936, 4096, 22016, 32, 32, 0, 128, 8192, 0, 0, false, true,
	 false, false, false, true, false, 2, "attn_dropout_prob", NULL, "emb_dropout_prob", 0.0,
	 0.0, 0.0, .fused_qkv = true,
	 .own = qwen_v1},
	/* Baichuan 1 and 2 (their own BaichuanConfig and modeling_baichuan.py, remote code; the
	 * defaults Baichuan2-7B's shape): Llama's layer with q, k and v in one W_pack without a
	 * bias, split into views; rotary positions where the config has max_position_embeddings
	 * (7B), ALiBi where it has model_max_length alone (13B); baichuan below reads the rest */
	{"baichuan", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 125696, 4096, 11008, 32, 32, 0, 0, 4096, 0, 0, false, false,
	 false, false, false, true, false, 2, NULL, NULL, NULL, 0.0, 0.0, 0.0, .fused_qkv = true,
	 .own = baichuan},
	{"qwen3", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151936, 4096, 22016, 32, 32, 32, 128, 32768, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true},
	{"qwen2_moe", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151936, 2048, 5632, 24, 16, 16, 0, 32768, 60, 4, false, true,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .moe_inter = 1408, .shared = 1, .shared_inter = 5632},
	{"qwen3_moe", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 151936, 2048, 6144, 24, 32, 4, 128, 32768, 128, 8, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true, .moe_inter = 768},
	{"gemma", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 256000, 3072, 24576, 28, 16, 16, 256, 8192, 0, 0, true, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "attention_bias", .geglu = true, .norm_cast_back = true},
	{"gemma2", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 256000, 2304, 9216, 26, 8, 4, 256, 8192, 0, 0, true, false,
	 false, false, false, true, false, 4, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .window = 4096, .full_every = 2, .windowed = true,
	 .k_attn_bias = "attention_bias", .geglu = true, .norm_cast_back = true, .own = gemma2},
	{"gemma3_text", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 262208, 2304, 9216, 26, 8, 4, 256, 131072, 0,
	 0, true, false, false, false, false, true, false, 4, "attention_dropout", NULL, NULL, 0.0,
	 0.0, 0.0, .qk_norm = true, .window = 4096, .full_every = 6, .windowed = true,
	 .geglu = true, .norm_cast_back = true, .own = gemma3_text},
	{"llama4_text", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 202048, 5120, 8192, 48, 40, 8, 128, 131072,
	 16, 1, false, false, false, false, false, true, false, 2, "attention_dropout", NULL, NULL,
	 0.0, 0.0, 0.0,
	 .k_experts = "num_local_experts", .own = llama4},
	{"deepseek_v2", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 102400, 2048, 10944, 27, 16, 16, 0, 163840,
	 64, 6, false, false, false, false, false, true, false, 2, "attention_dropout", NULL, NULL,
	 0.0, 0.0, 0.0, .moe_inter = 1408, .first_dense = 1, .shared = 2, .q_lora = 0,
	 .kv_lora = 512, .qk_rope = 64, .qk_nope = 128, .v_head = 128,
	 .k_experts = "n_routed_experts"},
	{"deepseek_v3", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 129280, 7168, 18432, 61, 128, 128, 0, 4096,
	 256, 8, false, false, false, false, false, true, false, 2, "attention_dropout", NULL, NULL,
	 0.0, 0.0, 0.0, .router_bias = true, .moe_inter = 2048, .first_dense = 3, .shared = 1,
	 .q_lora = 1536, .kv_lora = 512, .qk_rope = 64, .qk_nope = 128, .v_head = 128,
	 .k_experts = "n_routed_experts"},
	/* Glm4MoeConfig's defaults are GLM-4.5-Air's shape (its head_dim 128 is a config field:
	 * 4096 / 96 heads is not whole) */
	{"glm4_moe", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 151552, 4096, 10944, 46, 96, 8, 0, 131072,
	 128, 8, false, false, false, false, false, true, false, 2, "attention_dropout", NULL, NULL,
	 0.0, 0.0, 0.0, .router_bias = true, .moe_inter = 1408, .first_dense = 1, .shared = 1,
	 .k_experts = "n_routed_experts", .own = glm4_moe},
	/* Dots1Config (transformers modular_dots1.py; rednote's dots.llm1): Qwen3's attention (an
	 * RMSNorm over each query and key head, q/k/v/o biased with attention_bias) over
	 * DeepSeek-V3's MoE: first_k_dense_replace dense MLPs, then n_routed_experts experts of
	 * moe_intermediate_size, num_experts_per_tok a token, n_shared_experts beside them and a
	 * selection bias on the router; an untied head. Dots1Config leaves the expert counts None:
	 * dots.llm1's (128, 6 a token, 2 shared, one dense layer) stand in; its windows
	 * (max_window_layers) cover no layer in the released configs and are not read */
	{"dots1", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 152064, 4608, 10944, 62, 32, 32, 0, 2048, 128, 6, false, false,
	 false, false, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .qk_norm = true, .router_bias = true, .moe_inter = 1408, .first_dense = 1, .shared = 2,
	 .k_experts = "n_routed_experts", .k_attn_bias = "attention_bias"},
	{"gpt_oss", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 201088, 2880, 2880, 36, 64, 8, 64, 131072, 128, 4, false, true,
	 true, true, false, true, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .router_bias = true, .sinks = true, .window = 128, .full_every = 2, .windowed = true,
	 .k_experts = "num_local_experts", .k_attn_bias = "attention_bias", .quick_glu = true},
	{"phi", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 51200, 2048, 8192, 24, 32, 0, 0, 2048, 0, 0, false, true, true,
	 true, true, false, false, 1, "attention_dropout", "resid_pdrop", "embd_pdrop", 0.0, 0.0,
	 0.0, .head_bias = true, .parallel = true},
	{"falcon", "hidden_size", "num_hidden_layers", "num_attention_heads", "ffn_hidden_size",
	 "max_position_embeddings", 65024, 4544, 0, 32, 71, 1, 0, 2048, 0, 0, true, false, false,
	 false, true, false, false, 1, "attention_dropout", "hidden_dropout", NULL, 0.0, 0.0, 0.0,
	 .parallel = true, .k_all_bias = "bias", .own = falcon},
	{"gpt_neox", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 50432, 6144, 24576, 44, 64, 0, 0, 2048, 0, 0, false, true, true,
	 true, true, false, false, 2, "attention_dropout", "hidden_dropout", "hidden_dropout", 0.0,
	 0.0, 0.0, .parallel = true, .k_attn_bias = "attention_bias", .fused_qkv = true,
	 .own = gpt_neox},
	{"phi3", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 32064, 3072, 8192, 32, 32, 0, 0, 4096, 0, 0, false, false,
	 false, false, false, true, false, 2, "attention_dropout", "resid_pdrop", "embd_pdrop", 0.0,
	 0.0, 0.0, .windowed = true, .fused_qkv = true},
	{"opt", "hidden_size", "num_hidden_layers", "num_attention_heads", "ffn_dim",
	 "max_position_embeddings", 50272, 768, 3072, 12, 12, 0, 0, 2048, 0, 0, true, true, true,
	 true, true, false, true, 2, "attention_dropout", "dropout", NULL, 0.0, 0.1, 0.0,
	 .own = opt},
	/* NemotronConfig (transformers configuration_nemotron.py and modeling_nemotron.py; NVIDIA's
	 * Nemotron-4 and Minitron checkpoints), whose defaults are Nemotron-4 15B's shape:
	 * LayerNorm1P (a LayerNorm with weight and bias, the weight stored less one) before
	 * attention, before the MLP and at the end; q/k/v/o and up/down without biases unless
	 * attention_bias or mlp_bias; a plain MLP, up_proj, hidden_act, down_proj (nemotron below
	 * reads the activation and the rotary share); an untied head */
	{"nemotron", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 256000, 6144, 24576, 32, 48, 0, 0, 4096, 0, 0, false, false,
	 false, false, true, false, false, 2, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .k_attn_bias = "attention_bias", .mlp_bias_key = true, .own = nemotron},
	/* GPTJConfig (transformers modeling_gptj.py): q/k/v/out_proj without biases, fc_in and
	 * fc_out with them, attention and MLP side by side on one LayerNorm (GPTJBlock), rotary
	 * positions, an untied lm_head with a bias */
	{"gptj", "n_embd", "n_layer", "n_head", "n_inner", "n_positions", 50400, 4096, 0, 28, 16, 0,
	 0, 2048, 0, 0, false, false, false, true, true, false, false, 1, "attn_pdrop",
	 "resid_pdrop", "embd_pdrop", 0.0, 0.0, 0.0, .head_bias = true, .parallel = true},
	/* no position field: seq_length where a checkpoint has it, else BLOOM's 2,048-token
	 * training sequences (the bigscience/bloom model card), a warning threshold only */
	{"bloom", "hidden_size", "n_layer", "n_head", NULL, "seq_length", 250880, 64, 0, 2, 8, 0, 0,
	 2048, 0, 0, true, true, true, true, true, false, false, 2, "attention_dropout",
	 "hidden_dropout", NULL, 0.0, 0.0, 0.0, .alibi = true, .embed_norm = true, .own = bloom},
	/* MptConfig (transformers configuration_mpt.py; MosaicML's MPT checkpoints): ALiBi, the
	 * head tied, the MLP 4 x d_model wide by GELU; mpt below reads the rest */
	{"mpt", "d_model", "n_layers", "n_heads", NULL, "max_seq_len", 50368, 2048, 0, 24, 16, 0, 0,
	 2048, 0, 0, true, false, false, false, false, false, false, 2, NULL, "resid_pdrop",
	 "emb_pdrop", 0.0, 0.0, 0.0, .alibi = true, .own = mpt},
	/* CohereConfig (transformers configuration_cohere.py and modeling_cohere.py; Command R and
	 * R+, Aya 23), whose defaults are Command R's shape: attention and the gated SiLU MLP side
	 * by side on one CohereLayerNorm (a LayerNorm's centring with a weight, no bias),
	 * q/k/v/o biased with attention_bias, the head tied; cohere below reads use_qk_norm */
	{"cohere", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 256000, 8192, 22528, 40, 64, 0, 0, 8192, 0, 0, true, false,
	 false, false, false, true, false, 1, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .parallel = true, .k_attn_bias = "attention_bias", .own = cohere, .norm_cast_back = true},
	/* Cohere2Config (transformers configuration_cohere2.py and modular_cohere2.py; Command R7B
	 * and Command A): Cohere's parallel layer on one CohereLayerNorm without qk norms, q/k/v/o
	 * biased with attention_bias, the head tied; sliding_window (4,096) on three layers of four
	 * (the sliding_window_pattern 4 its configs keep, or layer_types), the full layers without
	 * rotary (their kernels are counted as the others') */
	{"cohere2", "hidden_size", "num_hidden_layers", "num_attention_heads", "intermediate_size",
	 "max_position_embeddings", 256000, 8192, 22528, 40, 64, 0, 0, 8192, 0, 0, true, false,
	 false, false, false, true, false, 1, "attention_dropout", NULL, NULL, 0.0, 0.0, 0.0,
	 .parallel = true, .k_attn_bias = "attention_bias", .window = 4096, .full_every = 4,
	 .windowed = true, .norm_cast_back = true},
	/* Starcoder2Config (transformers configuration_starcoder2.py and modeling_starcoder2.py;
	 * BigCode's StarCoder2 3B, 7B and 15B), whose defaults are StarCoder2-3B's shape:
	 * grouped-query attention with rotary positions; q/k/v/o and the plain MLP (c_fc,
	 * hidden_act, c_proj) biased with use_bias; LayerNorms with biases, two a layer and a final
	 * one; the head tied with tie_word_embeddings; sliding_window (None), when set, on every
	 * layer; dropout after attention and the MLP (residual_dropout) and on the embeddings */
	{"starcoder2", "hidden_size", "num_hidden_layers", "num_attention_heads",
	 "intermediate_size", "max_position_embeddings", 49152, 3072, 12288, 30, 24, 2, 0, 4096, 0,
	 0, true, true, true, true, true, false, false, 2, "attention_dropout", "residual_dropout",
	 "embedding_dropout", 0.0, 0.0, 0.0, .windowed = true, .k_all_bias = "use_bias",
	 .own = starcoder2},
	/* GPTBigCodeConfig (transformers configuration_gpt_bigcode.py; StarCoder, StarCoderBase,
	 * SantaCoder and their fine-tunes): GPT-2's layer (LayerNorms and every linear biased, a
	 * learned position table, an MLP n_inner wide, 4 x n_embd when None) under multi-query
	 * attention, the head tied to the embeddings; gpt_bigcode below reads the rest */
	{"gpt_bigcode", "n_embd", "n_layer", "n_head", "n_inner", "n_positions", 50257, 768, 0, 12,
	 12, 0, 0, 1024, 0, 0, true, true, true, true, true, false, true, 2, "attn_pdrop",
	 "resid_pdrop", "embd_pdrop", 0.1, 0.1, 0.1, .own = gpt_bigcode},
	{"gpt2", "n_embd", "n_layer", "n_head", "n_inner", "n_positions", 50257, 768, 0, 12, 12, 0,
	 0, 1024, 0, 0, true, true, true, true, true, false, true, 2, "attn_pdrop", "resid_pdrop",
	 "embd_pdrop", 0.1, 0.1, 0.1},
};

#define NFAMILIES (sizeof families / sizeof families[0])


/* Upper bounds that keep every product below 2^62 and catch garbage early. */
#define MAX_DIM 1048576ull    /* hidden, head_dim, heads */
#define MAX_INTER 16777216ull /* intermediate size */
#define MAX_VOCAB 67108864ull /* vocabulary */
/* Layers: the deepest published transformers have 105-128 (Megatron 530B and 1T, Llama 3.1
 * 405B 126); 1024 leaves room for anything real while keeping a step graph of a few hundred
 * thousand tasks (a bad config.json of 100000 layers took 50 s and 714 MB in compare). */
#define MAX_LAYERS 1024ull
#define MAX_POS 1073741824ull
#define MAX_PARAMS 1e15 /* 10^15: beyond any model built; keeps counts exact in double */

/* Reads an optional whole-number field. 0 ok (absent leaves *v), -1 with err. */
static int get_uint(const cJSON *root, const char *key, uint64_t lo, uint64_t hi, uint64_t *v,
		    const char *origin, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);
	double d;

	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it)) {
		snprintf(err, errlen, "config '%s': field '%s' must be a number", origin, key);
		return -1;
	}
	d = it->valuedouble; /* never valueint: it saturates at INT_MAX */
	if (!isfinite(d) || d != floor(d) || d < (double)lo || d > (double)hi) {
		snprintf(err, errlen,
			 "config '%s': field '%s' must be a whole number from %llu to %llu, got %g",
			 origin, key, (unsigned long long)lo, (unsigned long long)hi, d);
		return -1;
	}
	*v = (uint64_t)d;
	return 0;
}

static int get_bool(const cJSON *root, const char *key, bool *v, const char *origin, char *err,
		    size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, key);

	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsBool(it)) {
		snprintf(err, errlen, "config '%s': field '%s' must be true or false", origin, key);
		return -1;
	}
	*v = cJSON_IsTrue(it);
	return 0;
}

static int get_prob(const cJSON *root, const char *key, double *v, const char *origin, char *err,
		    size_t errlen)
{
	const cJSON *it;

	if (!key)
		return 0;
	it = cJSON_GetObjectItemCaseSensitive(root, key);
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble >= 0.0 && it->valuedouble < 1.0)) {
		snprintf(err, errlen, "config '%s': field '%s' must be a probability in [0, 1)",
			 origin, key);
		return -1;
	}
	*v = it->valuedouble;
	return 0;
}

/* GptOssConfig's swiglu_limit default, the clamp of its experts' gate and up projections
 * (transformers configuration_gpt_oss.py) [A] */
#define GPT_OSS_SWIGLU_LIMIT 7.0

/* swiglu_limit into *v when the config has it: a positive number. */
static int glu_limit(const cJSON *root, double *v, const char *origin, char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(root, "swiglu_limit");
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble > 0 && it->valuedouble <= 1e4)) {
		snprintf(err, errlen,
			 "config '%s': field 'swiglu_limit' must be a number above 0 (allowed "
			 "(0, 10000])",
			 origin);
		return -1;
	}
	*v = it->valuedouble;
	return 0;
}

/* Warns (a->warning) about a config key within two edits of a key this family reads that the
 * config lacks: that key took its default. */
static void misspelled(const cJSON *root, const struct family *f, struct mdl_arch *a)
{
	const char *read[] = {"vocab_size",	     f->k_hidden,	    f->k_layers,
			      f->k_heads,	     f->k_inter,	    f->k_pos,
			      "tie_word_embeddings", "num_key_value_heads",
			      f->kv_lora ? NULL : "head_dim", /* MLA derives it */
			      "attention_bias",	     "mlp_bias",	    "num_local_experts",
			      "num_experts_per_tok", f->k_attn_drop,	    f->k_resid_drop,
			      f->k_embd_drop,	     f->quick_glu ? "swiglu_limit" : NULL};
	const char *moe[] = {"num_experts", "n_routed_experts", "moe_intermediate_size",
			     "decoder_sparse_step", "mlp_only_layers", "first_k_dense_replace",
			     "moe_layer_freq", "n_shared_experts"};
	const char *mla_keys[] = {"kv_lora_rank", "q_lora_rank", "qk_rope_head_dim",
				  "qk_nope_head_dim", "v_head_dim"};
	const char *win[] = {"sliding_window", "sliding_window_pattern", "layer_types"};
	const char *absent[sizeof read / sizeof read[0] + 16];
	int na = 0;
	const cJSON *it;

	for (size_t i = 0; i < sizeof read / sizeof read[0]; i++)
		if (read[i] && !cJSON_GetObjectItemCaseSensitive(root, read[i]))
			absent[na++] = read[i];
	for (size_t i = 0; f->moe_inter && i < sizeof moe / sizeof moe[0]; i++)
		if (!cJSON_GetObjectItemCaseSensitive(root, moe[i]))
			absent[na++] = moe[i];
	for (size_t i = 0; f->kv_lora && i < sizeof mla_keys / sizeof mla_keys[0]; i++)
		if (!cJSON_GetObjectItemCaseSensitive(root, mla_keys[i]))
			absent[na++] = mla_keys[i];
	for (size_t i = 0; f->windowed && i < sizeof win / sizeof win[0]; i++)
		if (!cJSON_GetObjectItemCaseSensitive(root, win[i]))
			absent[na++] = win[i];
	cJSON_ArrayForEach(it, root)
	{
		const char *near = it->string ? cfg_did_you_mean(it->string, absent, na) : NULL;
		if (near) {
			snprintf(a->warning, sizeof a->warning,
				 "config key '%.60s' is not one tierplan reads; did you mean '%s'? "
				 "'%s' took its default",
				 it->string, near, near);
			return;
		}
	}
}

static void add(struct mdl_tensor *t, int *n, const char *name, uint64_t rows, uint64_t cols,
		unsigned target, bool matmul, uint32_t copies, uint32_t active)
{
	t[*n] = (struct mdl_tensor){name, rows, cols, target, matmul, copies, active, 0};
	(*n)++;
}

/* The same for a tensor only some layers hold: nl of them (nl = all layers: every layer). */
static void add_in(struct mdl_tensor *t, int *n, uint64_t nl, uint64_t all, const char *name,
		   uint64_t rows, uint64_t cols, unsigned target, bool matmul, uint32_t copies,
		   uint32_t active)
{
	if (nl == 0)
		return;
	add(t, n, name, rows, cols, target, matmul, copies, active);
	t[*n - 1].layers = nl == all ? 0 : (uint32_t)nl;
}

/* Gated (gate, up, down) or plain (up, down) MLP of width I, with copies/active experts. */
static void add_mlp(const struct mdl_arch *a, struct mdl_tensor *t, int *n, uint64_t nl,
		    const char *const names[3], uint64_t I, uint32_t copies, uint32_t active)
{
	uint64_t h = a->hidden, L = a->layers;

	if (a->gated_mlp)
		add_in(t, n, nl, L, names[0], h, I, MDL_T_GATE, true, copies, active);
	add_in(t, n, nl, L, names[1], h, I, MDL_T_UP, true, copies, active);
	add_in(t, n, nl, L, names[2], I, h, MDL_T_DOWN, true, copies, active);
	if (a->mlp_bias) {
		if (a->gated_mlp)
			add_in(t, n, nl, L, "gate_proj.bias", I, 1, 0, false, copies, active);
		add_in(t, n, nl, L, "up_proj.bias", I, 1, 0, false, copies, active);
		add_in(t, n, nl, L, "down_proj.bias", h, 1, 0, false, copies, active);
	}
}

/* Query, key, value and output projections: standard (grouped-query) or MLA. */
static void add_attention(const struct mdl_arch *a, struct mdl_tensor *t, int *n)
{
	uint64_t h = a->hidden, q = a->heads * a->head_dim, kv = a->kv_heads * a->head_dim;
	uint64_t o = a->heads * a->v_head_dim;

	if (a->kv_lora_rank) {
		/* DeepseekV3Attention: q_a_proj -> q_a_layernorm -> q_b_proj (or one q_proj without
		 * q_lora_rank); kv_a_proj_with_mqa gives the compressed key-value and the shared
		 * rotary key, kv_a_layernorm, kv_b_proj decompresses keys (nope part) and values */
		if (a->q_lora_rank) {
			add(t, n, "q_a_proj", h, a->q_lora_rank, MDL_T_Q, true, 1, 1);
			add(t, n, "q_a_layernorm", a->q_lora_rank, 1, 0, false, 1, 1);
			add(t, n, "q_b_proj", a->q_lora_rank, q, MDL_T_Q, true, 1, 1);
		} else {
			add(t, n, "q_proj", h, q, MDL_T_Q, true, 1, 1);
		}
		add(t, n, "kv_a_proj_with_mqa", h, a->kv_lora_rank + a->qk_rope_dim, MDL_T_K, true, 1,
		    1);
		add(t, n, "kv_a_layernorm", a->kv_lora_rank, 1, 0, false, 1, 1);
		add(t, n, "kv_b_proj", a->kv_lora_rank,
		    a->heads * (a->head_dim - a->qk_rope_dim + a->v_head_dim), MDL_T_V, true, 1, 1);
	} else {
		add(t, n, "q_proj", h, q, MDL_T_Q, true, 1, 1);
		add(t, n, "k_proj", h, kv, MDL_T_K, true, 1, 1);
		add(t, n, "v_proj", h, kv, MDL_T_V, true, 1, 1);
		if (a->qkv_bias) {
			add(t, n, "q_proj.bias", q, 1, 0, false, 1, 1);
			add(t, n, "k_proj.bias", kv, 1, 0, false, 1, 1);
			add(t, n, "v_proj.bias", kv, 1, 0, false, 1, 1);
		}
	}
	if (a->qk_norm) {
		add(t, n, "q_norm", a->qk_norm_full ? q : a->head_dim, 1, 0, false, 1, 1);
		add(t, n, "k_norm", a->qk_norm_full ? kv : a->head_dim, 1, 0, false, 1, 1);
	}
	add(t, n, "o_proj", o, h, MDL_T_O, true, 1, 1);
	if (a->o_bias)
		add(t, n, "o_proj.bias", h, 1, 0, false, 1, 1);
	if (a->attn_sinks)
		add(t, n, "sinks", a->heads, 1, 0, false, 1, 1);
}

/* Builds the per-layer and outer tensor inventory from the resolved dimensions. */
static void build_inventory(struct mdl_arch *a)
{
	static const char *const dense[3] = {"gate_proj", "up_proj", "down_proj"};
	static const char *const routed[3] = {"experts.gate_proj", "experts.up_proj",
					      "experts.down_proj"};
	static const char *const shared[3] = {"shared_experts.gate_proj", "shared_experts.up_proj",
					      "shared_experts.down_proj"};
	uint64_t h = a->hidden, L = a->layers;
	uint64_t nb = a->norm_bias ? 2 : 1; /* LayerNorm has a bias, RMSNorm does not */
	uint32_t nw = a->norm_weightless ? 0 : 1; /* stored copies of a norm's weights */
	uint64_t moe = a->experts ? a->moe_layers : 0;
	struct mdl_tensor *t = a->layer;
	int n = 0;

	add(t, &n, "input_norm", h * nb, 1, 0, false, nw, 1);
	add_attention(a, t, &n);
	if (a->norms_per_layer == 4)
		add(t, &n, "post_attention_norm", h * nb, 1, 0, false, nw, 1);
	if (a->norms_per_layer != 1) /* a parallel block's MLP reads the input norm's output */
		add(t, &n, "mlp_norm", h * nb, 1, 0, false, nw, 1);
	add_mlp(a, t, &n, L - moe, dense, a->intermediate, 1, 1);
	if (moe) {
		add_in(t, &n, moe, L, "router", h, a->experts, 0, true, 1, 1);
		/* one more per expert: GptOssTopKRouter's bias, DeepseekV3TopkRouter's selection
		 * bias (e_score_correction_bias); DeepSeek-V2's MoEGate has none */
		if (a->router_bias)
			add_in(t, &n, moe, L, "router.bias", a->experts, 1, 0, false, 1, 1);
		add_mlp(a, t, &n, moe, routed, a->moe_intermediate, a->experts,
			a->experts_per_tok);
		if (a->shared_experts) /* one MLP as wide as the shared experts together */
			add_mlp(a, t, &n, moe, shared, a->shared_intermediate, 1, 1);
		if (a->shared_gate) /* Qwen2MoeSparseMoeBlock's shared_expert_gate: h -> 1 */
			add_in(t, &n, moe, L, "shared_expert_gate", h, 1, 0, false, 1, 1);
	}
	if (a->norms_per_layer == 4)
		add(t, &n, "post_feedforward_norm", h * nb, 1, 0, false, nw, 1);
	a->nlayer = n;

	n = 0;
	add(a->outer, &n, "embed_tokens", a->vocab, h, 0, false, 1, 1);
	if (a->learned_positions)
		add(a->outer, &n, "embed_positions", a->positions + a->position_offset, h, 0, false,
		    1, 1);
	if (a->embed_norm)
		add(a->outer, &n, "embed_norm", h * nb, 1, 0, false, nw, 1);
	add(a->outer, &n, "final_norm", h * nb, 1, 0, false, nw, 1);
	/* a tied head stores no weights but still multiplies every token */
	add(a->outer, &n, "lm_head", h, a->vocab, 0, true, a->tied ? 0 : 1, 1);
	if (a->head_bias)
		add(a->outer, &n, "lm_head.bias", a->vocab, 1, 0, false, 1, 1);
	a->nouter = n;
}

double mdl_arch_mlp_width(const struct mdl_arch *a)
{
	double w = 0;

	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (t->matmul && (t->target & MDL_T_UP))
			w += (double)t->cols * t->active * mdl_tensor_share(a, t);
	}
	return w;
}

uint64_t mdl_arch_largest_tensor(const struct mdl_arch *a)
{
	uint64_t big = 0;

	for (int i = 0; i < a->nlayer + a->nouter; i++) {
		const struct mdl_tensor *t = i < a->nlayer ? &a->layer[i] : &a->outer[i - a->nlayer];
		if (t->copies && t->rows * t->cols > big)
			big = t->rows * t->cols;
	}
	return big;
}

double mdl_arch_attn_proj_params(const struct mdl_arch *a)
{
	double p = 0;

	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		if (t->matmul && mdl_tensor_attn(t))
			p += (double)t->rows * (double)t->cols * t->active * mdl_tensor_share(a, t);
	}
	return p;
}

void mdl_arch_counts(const struct mdl_arch *a, struct mdl_counts *c)
{
	uint64_t layers = 0, layers_active = 0, layers_mm = 0; /* over all decoder layers */

	memset(c, 0, sizeof *c);
	for (int i = 0; i < a->nlayer; i++) {
		const struct mdl_tensor *t = &a->layer[i];
		uint64_t e = t->rows * t->cols * (t->layers ? t->layers : a->layers);
		layers += e * t->copies;
		layers_active += e * t->active;
		if (t->matmul)
			layers_mm += e * t->active;
	}
	for (int i = 0; i < a->nouter; i++) {
		const struct mdl_tensor *t = &a->outer[i];
		uint64_t e = t->rows * t->cols;
		if (strcmp(t->name, "embed_tokens") == 0 || strcmp(t->name, "embed_positions") == 0)
			c->embed_params += e * t->copies;
		else
			c->head_params += e * t->copies;
		if (t->matmul)
			c->matmul_params += e;
	}
	c->layer_params = layers / a->layers;
	c->params = c->embed_params + c->head_params + layers;
	c->active_params = c->embed_params + c->head_params + layers_active;
	c->matmul_params += layers_mm;
}

/* Qwen v1's own keys (QWenConfig, modeling_qwen.py): no_bias, kv_channels, and an
 * intermediate_size that counts both gated branches. */
static int qwen_v1(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		   size_t errlen)
{
	bool no_bias = true;
	if (get_bool(cfg, "no_bias", &no_bias, origin, err, errlen) ||
	    get_uint(cfg, "kv_channels", 1, MAX_DIM, &a->head_dim, origin, err, errlen))
		return -1;
	a->o_bias = a->mlp_bias = !no_bias;
	if (a->intermediate % 2) {
		snprintf(err, errlen,
			 "config '%s': Qwen's intermediate_size (%llu) counts two gated branches "
			 "and must be even",
			 origin, (unsigned long long)a->intermediate);
		return -1;
	}
	a->intermediate /= 2;
	return 0;
}

/* Baichuan: the 13B's configs have no max_position_embeddings (its modeling_baichuan.py adds
 * ALiBi biases; model_max_length is its sequence limit) where the 7B's carry one for its
 * rotary embedding. Baichuan 2's lm_head is a NormHead, its weight L2-normalised along the
 * hidden dimension in every training forward (modeling_baichuan.py, NormHead.forward); its
 * 125,696-token vocabulary tells it from Baichuan 1 (64,000), whose config is otherwise the
 * same [B: the released configs]. The copy's memory is counted (act.c, mdl_act_head); its
 * normalising passes, 2 x vocab x hidden bytes a micro-batch, about 0.3 % of a 7B step at
 * 2,048 tokens, are not. */
#define BAICHUAN2_VOCAB 125696
static int baichuan(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		    size_t errlen)
{
	if (!cJSON_GetObjectItemCaseSensitive(cfg, "max_position_embeddings")) {
		a->alibi = true;
		if (get_uint(cfg, "model_max_length", 1, MAX_POS, &a->positions, origin, err,
			     errlen))
			return -1;
	}
	a->norm_head = a->vocab == BAICHUAN2_VOCAB;
	return 0;
}

/* Llama 4 (Llama4TextConfig, Llama4TextMoe): intermediate_size is an expert's width and
 * intermediate_size_mlp the dense layers'; layers interleave_moe_layer_step - 1, 2 step - 1, ...
 * route (or those moe_layers lists) to num_local_experts beside one always-on shared expert
 * of the expert's width; q/k get a weightless L2 norm. */
static int llama4(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		  size_t errlen)
{
	uint64_t dense = 16384, step = 1; /* Llama4TextConfig's defaults (transformers v4.51) */
	const cJSON *list = cJSON_GetObjectItemCaseSensitive(cfg, "moe_layers");

	if (get_uint(cfg, "intermediate_size_mlp", 1, MAX_INTER, &dense, origin, err, errlen) ||
	    get_uint(cfg, "interleave_moe_layer_step", 1, MAX_LAYERS, &step, origin, err, errlen))
		return -1;
	if (step > a->layers) {
		snprintf(err, errlen,
			 "config '%s': field 'interleave_moe_layer_step' (%llu) exceeds the %llu "
			 "layers: none would route",
			 origin, (unsigned long long)step, (unsigned long long)a->layers);
		return -1;
	}
	a->moe_intermediate = a->intermediate;
	a->intermediate = dense;
	a->shared_experts = 1;
	a->shared_intermediate = a->moe_intermediate;
	a->moe_layers = a->layers / step;
	if (cJSON_IsArray(list)) {
		uint64_t n = (uint64_t)cJSON_GetArraySize(list);
		a->moe_layers = n < a->layers ? n : a->layers;
	}
	return 0;
}

/* partial_rotary_factor, the share of each head RoPE rotates, where a family has the key (its
 * default `share`), into a->rotary_fraction. */
static int rotary_share(const cJSON *cfg, double share, struct mdl_arch *a, const char *origin,
			char *err, size_t errlen)
{
	const cJSON *r = cJSON_GetObjectItemCaseSensitive(cfg, "partial_rotary_factor");
	a->rotary_fraction = share;
	if (!r || cJSON_IsNull(r))
		return 0;
	if (!cJSON_IsNumber(r) || !(r->valuedouble > 0.0 && r->valuedouble <= 1.0)) {
		snprintf(err, errlen, "config '%s': field 'partial_rotary_factor' must be in (0, 1]",
			 origin);
		return -1;
	}
	a->rotary_fraction = r->valuedouble;
	return 0;
}

/* ChatGLM2/3 and GLM-4 (their own ChatGLMConfig and modeling_chatglm.py): the embedding and
 * output layer have padded_vocab_size rows; query_key_value projects to the heads and, with
 * multi_query_attention, multi_query_group_num key-value groups of kv_channels, biased with
 * add_qkv_bias; dense and the MLP are biased with add_bias_linear; RMSNorm unless rmsnorm is
 * false (LayerNorm, with bias); RoPE on half of each head (RotaryEmbedding(rotary_dim // 2)).
 * Under multi_query_attention SelfAttention.forward expands the key and value groups to every
 * head and makes them contiguous before the core attention, which keeps those copies [A:
 * modeling_chatglm.py]: kv_repeated. */
static int chatglm(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		   size_t errlen)
{
	bool mqa = false, rms = true, lin_bias = false;
	uint64_t groups = 1;
	if (get_uint(cfg, "padded_vocab_size", 1, MAX_VOCAB, &a->vocab, origin, err, errlen) ||
	    get_uint(cfg, "kv_channels", 1, MAX_DIM, &a->head_dim, origin, err, errlen) ||
	    get_bool(cfg, "multi_query_attention", &mqa, origin, err, errlen) ||
	    get_uint(cfg, "multi_query_group_num", 1, MAX_DIM, &groups, origin, err, errlen) ||
	    get_bool(cfg, "add_qkv_bias", &a->qkv_bias, origin, err, errlen) ||
	    get_bool(cfg, "add_bias_linear", &lin_bias, origin, err, errlen) ||
	    get_bool(cfg, "rmsnorm", &rms, origin, err, errlen))
		return -1;
	a->kv_heads = mqa ? groups : a->heads;
	a->kv_repeated = mqa;
	a->o_bias = a->mlp_bias = lin_bias;
	a->norm_bias = !rms;
	a->rotary_fraction = 0.5;
	return 0;
}

/* GLM and GLM-4 (above): attention_bias on q, k and v alone (default true); RoPE on
 * partial_rotary_factor of each head (0.5), as ChatGLM's. */
static int glm(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err, size_t errlen)
{
	if (rotary_share(cfg, 0.5, a, origin, err, errlen))
		return -1;
	return get_bool(cfg, "attention_bias", &a->qkv_bias, origin, err, errlen);
}

/* Falcon (FalconConfig, FalconDecoderLayer; published.md A.3): keys and values in num_kv_heads
 * groups under new_decoder_architecture, one with multi_query, else one per head;
 * ffn_hidden_size defaults to 4 x hidden; biases on every linear with bias; attention and MLP
 * in parallel (parallel_attn) on one LayerNorm, or on two (ln_attn, ln_mlp) in the new
 * architecture; without parallel_attn a sequential block of two. */
static int falcon(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		  size_t errlen)
{
	bool mq = true, newarch = false, par = true;
	uint64_t kv = 0;
	if (get_bool(cfg, "multi_query", &mq, origin, err, errlen) ||
	    get_bool(cfg, "new_decoder_architecture", &newarch, origin, err, errlen) ||
	    get_bool(cfg, "parallel_attn", &par, origin, err, errlen) ||
	    get_uint(cfg, "num_kv_heads", 1, MAX_DIM, &kv, origin, err, errlen))
		return -1;
	a->kv_heads = newarch ? (kv ? kv : a->heads) : mq ? 1 : a->heads;
	if (!a->intermediate)
		a->intermediate = 4 * a->hidden;
	a->parallel = par || newarch;
	a->norms_per_layer = newarch || !par ? 2 : 1;
	return 0;
}

/* GPT-NeoX and Pythia (GPTNeoXConfig, GPTNeoXLayer, transformers v4.45): query_key_value
 * projects to 3 x hidden, whatever a config says of key-value heads, biased with dense by
 * attention_bias; the MLP (dense_h_to_4h, dense_4h_to_h, GELU) always biased; two LayerNorms a
 * layer, attention and MLP each on its own under use_parallel_residual, else one after the
 * other; an untied embed_out. */
static int gpt_neox(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		    size_t errlen)
{
	if (get_bool(cfg, "use_parallel_residual", &a->parallel, origin, err, errlen))
		return -1;
	a->kv_heads = a->heads;
	a->head_dim = 0;
	return 0;
}

/* OPT (OPTConfig, OPTDecoder and OPTDecoderLayer, transformers modeling_opt.py): the position
 * table has max_position_embeddings + 2 rows (OPTLearnedPositionalEmbedding's offset);
 * q/k/v/out_proj and fc1/fc2 carry biases with enable_bias; two LayerNorms a layer and a final
 * one; the MLP's activation_function, ReLU by default; dropout (0.1) after attention and after
 * the MLP, not on the embeddings. OPT-350M's projected embeddings (word_embed_proj_dim below
 * hidden_size: project_in and project_out) and post-norm layers (do_layer_norm_before false,
 * no final norm), a checkpoint without the final norm (_remove_final_layer_norm) and norms
 * without weights are refused: the inventory holds none of them. */
static int opt(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err, size_t errlen)
{
	uint64_t proj = a->hidden;
	bool before = true, removed = false, affine = true, bias = true;
	const cJSON *act = cJSON_GetObjectItemCaseSensitive(cfg, "activation_function");
	if (get_uint(cfg, "word_embed_proj_dim", 1, MAX_DIM, &proj, origin, err, errlen) ||
	    get_bool(cfg, "do_layer_norm_before", &before, origin, err, errlen) ||
	    get_bool(cfg, "_remove_final_layer_norm", &removed, origin, err, errlen) ||
	    get_bool(cfg, "layer_norm_elementwise_affine", &affine, origin, err, errlen) ||
	    get_bool(cfg, "enable_bias", &bias, origin, err, errlen))
		return -1;
	char why[128] = "";
	if (proj != a->hidden)
		snprintf(why, sizeof why,
			 "word_embed_proj_dim %llu differs from hidden_size %llu (projected "
			 "embeddings, as OPT-350M's)",
			 (unsigned long long)proj, (unsigned long long)a->hidden);
	else if (!before)
		snprintf(why, sizeof why, "do_layer_norm_before is false (post-norm layers, as "
					  "OPT-350M's)");
	else if (removed)
		snprintf(why, sizeof why, "_remove_final_layer_norm is true (no final norm)");
	else if (!affine)
		snprintf(why, sizeof why, "layer_norm_elementwise_affine is false (norms without "
					  "weights)");
	if (why[0]) {
		snprintf(err, errlen,
			 "config '%s': %s, which tierplan does not model (OPT-125M and OPT-1.3B to "
			 "175B are pre-norm with embeddings as wide as the layers)",
			 origin, why);
		return -1;
	}
	if (act && !cJSON_IsNull(act) && !cJSON_IsString(act)) {
		snprintf(err, errlen, "config '%s': field 'activation_function' must be a string",
			 origin);
		return -1;
	}
	a->relu_mlp = !cJSON_IsString(act) || strcmp(act->valuestring, "relu") == 0;
	a->qkv_bias = a->o_bias = a->mlp_bias = bias;
	a->position_offset = 2;
	return 0;
}

/* A plain MLP's activation under key, as ACT2FN names it (fallback when the key is absent): a
 * GELU, whose backward keeps its input and output; relu, which keeps one (relu_mlp); or, where
 * squared_ok, relu2, squared ReLU, which keeps two (squared_relu). Anything else is refused
 * naming the key. */
static int plain_mlp_act(const cJSON *cfg, const char *key, const char *fallback,
			 bool squared_ok, struct mdl_arch *a, const char *origin, char *err,
			 size_t errlen)
{
	static const char *const gelus[] = {"gelu", "gelu_new", "gelu_pytorch_tanh", "gelu_fast",
					    "gelu_python"};
	const cJSON *act = cJSON_GetObjectItemCaseSensitive(cfg, key);
	const char *name = cJSON_IsString(act) ? act->valuestring : fallback;
	bool squared = squared_ok && strcmp(name, "relu2") == 0;
	bool known = squared || strcmp(name, "relu") == 0;
	for (size_t i = 0; i < sizeof gelus / sizeof gelus[0]; i++)
		known |= strcmp(name, gelus[i]) == 0;
	if ((act && !cJSON_IsNull(act) && !cJSON_IsString(act)) || !known) {
		snprintf(err, errlen,
			 "config '%s': field '%s' must be %sa GELU (gelu, gelu_new, "
			 "gelu_pytorch_tanh, gelu_fast, gelu_python) or relu",
			 origin, key, squared_ok ? "relu2 (squared ReLU), " : "");
		return -1;
	}
	a->squared_relu = squared;
	a->relu_mlp = strcmp(name, "relu") == 0;
	return 0;
}

/* Nemotron (NemotronConfig, NemotronMLP and NemotronAttention, transformers modeling_nemotron.py):
 * hidden_act, the plain MLP's activation as ACT2FN names it, relu2 by default: squared ReLU,
 * whose backward keeps the ReLU's output and the square's, two tensors of the MLP's width as
 * GELU's; relu keeps one (relu_mlp); a GELU keeps two. partial_rotary_factor, the share of each
 * head RoPE rotates (0.5): the kernels' traffic is counted as whole heads'. Its norms are
 * LayerNorm1P, weights stored less one. */
static int nemotron(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		    size_t errlen)
{
	if (plain_mlp_act(cfg, "hidden_act", "relu2", true, a, origin, err, errlen))
		return -1;
	a->norm_1p = true;
	return rotary_share(cfg, 0.5, a, origin, err, errlen);
}

/* StarCoder2 (Starcoder2MLP): hidden_act is the MLP's, gelu_pytorch_tanh by default. */
static int starcoder2(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		      size_t errlen)
{
	return plain_mlp_act(cfg, "hidden_act", "gelu_pytorch_tanh", false, a, origin, err,
			     errlen);
}

/* Cohere (CohereAttention): use_qk_norm (false) adds q_norm and k_norm, CohereLayerNorms of
 * shape (heads, head_dim) and (key-value heads, head_dim): a weight for every element of the
 * projections, as Olmo2's whole-projection norms count. */
static int cohere(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		  size_t errlen)
{
	bool qk = false;
	if (get_bool(cfg, "use_qk_norm", &qk, origin, err, errlen))
		return -1;
	a->qk_norm = a->qk_norm_full = qk;
	return 0;
}

/* Gemma's soft-capping keys (Gemma2Config, Gemma3TextConfig): a positive cap turns one on, null
 * off, a missing key takes the family's default. */
static int softcap(const cJSON *cfg, const char *key, bool dflt, bool *on, const char *origin,
		   char *err, size_t errlen)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(cfg, key);
	*on = it ? false : dflt;
	if (!it || cJSON_IsNull(it))
		return 0;
	if (!cJSON_IsNumber(it) || !(it->valuedouble > 0)) {
		snprintf(err, errlen, "config '%s': field '%s' must be a cap above 0 or null",
			 origin, key);
		return -1;
	}
	*on = true;
	return 0;
}

static int softcaps(const cJSON *cfg, bool dflt, struct mdl_arch *a, const char *origin,
		    char *err, size_t errlen)
{
	if (softcap(cfg, "attn_logit_softcapping", dflt, &a->attn_softcap, origin, err, errlen))
		return -1;
	return softcap(cfg, "final_logit_softcapping", dflt, &a->final_softcap, origin, err,
		       errlen);
}

/* Gemma 2: attn_logit_softcapping 50.0 and final_logit_softcapping 30.0 by default
 * (transformers configuration_gemma2.py) [A] */
static int gemma2(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		  size_t errlen)
{
	return softcaps(cfg, true, a, origin, err, errlen);
}

/* Gemma 3: both caps None by default, its q and k normed instead (configuration_gemma3.py) [A] */
static int gemma3_text(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		       size_t errlen)
{
	return softcaps(cfg, false, a, origin, err, errlen);
}

/* Arcee (ArceeMLP, NemotronMLP's): hidden_act, the plain MLP's activation, relu2 by default. */
static int arcee(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		 size_t errlen)
{
	return plain_mlp_act(cfg, "hidden_act", "relu2", true, a, origin, err, errlen);
}

/* ERNIE 4.5 MoE (Ernie4_5_MoeDecoderLayer, Ernie4_5_MoeSparseMoeBlock): layer i holds experts
 * when (i + 1) % moe_layer_interval == 0 and moe_layer_start_index <= i <= moe_layer_end_index
 * (-1: the last layer); moe_k experts a token; moe_num_shared_experts shared ones beside them,
 * one MLP of moe_intermediate_size times their count. */
static int ernie4_5_moe(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
			size_t errlen)
{
	uint64_t k = a->experts_per_tok, sh = a->shared_experts, start = 1, every = 1;
	uint64_t end = a->layers - 1;
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(cfg, "moe_layer_end_index");
	if (get_uint(cfg, "moe_k", 1, a->experts, &k, origin, err, errlen) ||
	    get_uint(cfg, "moe_num_shared_experts", 0, 4096, &sh, origin, err, errlen) ||
	    get_uint(cfg, "moe_layer_start_index", 0, MAX_LAYERS, &start, origin, err, errlen) ||
	    get_uint(cfg, "moe_layer_interval", 1, MAX_LAYERS, &every, origin, err, errlen) ||
	    (!(cJSON_IsNumber(e) && e->valuedouble == -1) &&
	     get_uint(cfg, "moe_layer_end_index", 0, MAX_LAYERS, &end, origin, err, errlen)))
		return -1;
	a->experts_per_tok = (uint32_t)k;
	a->shared_experts = (uint32_t)sh;
	a->shared_intermediate = a->moe_intermediate * sh;
	a->moe_layers = 0;
	for (uint64_t i = 0; i < a->layers; i++)
		a->moe_layers += (i + 1) % every == 0 && i >= start && i <= end;
	return 0;
}

/* Seed-OSS (SeedOssAttention): attention_bias biases q, k and v, attention_out_bias o_proj. */
static int seed_oss(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		    size_t errlen)
{
	if (get_bool(cfg, "attention_bias", &a->qkv_bias, origin, err, errlen))
		return -1;
	return get_bool(cfg, "attention_out_bias", &a->o_bias, origin, err, errlen);
}

/* StableLM (StableLmAttention, StableLmDecoderLayer): use_qkv_bias (false) biases q, k and v,
 * never o; qk_layernorm (false) adds a weight-only LayerNorm per head over the queries and keys
 * (StableLmLayerNormPerHead: a weight for every element of the projections, as Olmo2's count);
 * use_parallel_residual (false) runs attention and the MLP side by side on the input norm, with
 * no second norm; partial_rotary_factor (0.25) is the share of each head RoPE turns. */
static int stablelm(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		    size_t errlen)
{
	bool qk = false;
	if (get_bool(cfg, "use_qkv_bias", &a->qkv_bias, origin, err, errlen) ||
	    get_bool(cfg, "qk_layernorm", &qk, origin, err, errlen) ||
	    get_bool(cfg, "use_parallel_residual", &a->parallel, origin, err, errlen))
		return -1;
	a->qk_norm = a->qk_norm_full = qk;
	a->norms_per_layer = a->parallel ? 1 : 2;
	return rotary_share(cfg, 0.25, a, origin, err, errlen);
}

/* Phi-3.5-MoE (PhimoeForCausalLM): lm_head_bias (false by default, true in Phi-3.5-MoE's
 * config) biases the head. */
static int phimoe(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		  size_t errlen)
{
	return get_bool(cfg, "lm_head_bias", &a->head_bias, origin, err, errlen);
}

/* GPTBigCode (GPTBigCodeAttention): multi_query (true) gives c_attn one key and one value head
 * beside the queries, embed_dim + 2 x head_dim wide; false, a key and value per head
 * (num_key_value_heads = 1 if multi_query else n_head, GPTBigCodeConfig.__init__);
 * activation_function is the MLP's, gelu_pytorch_tanh by default. */
static int gpt_bigcode(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		       size_t errlen)
{
	bool mq = true;
	if (get_bool(cfg, "multi_query", &mq, origin, err, errlen))
		return -1;
	a->kv_heads = mq ? 1 : a->heads;
	return plain_mlp_act(cfg, "activation_function", "gelu_pytorch_tanh", false, a, origin,
			     err, errlen);
}

/* GLM-4.5 and 4.6 (Glm4MoeConfig, Glm4MoeAttention and Glm4MoeMoE, transformers
 * modeling_glm4_moe.py): DeepSeek-V3's layers (first_k_dense_replace dense MLPs, then routed
 * experts with n_shared_experts beside them and a selection bias on the router) under grouped
 * attention: attention_bias biases q, k and v but never o_proj, use_qk_norm adds an RMSNorm over
 * each query and key head. The checkpoint's multi-token-prediction layer is not loaded
 * (_keys_to_ignore_on_load_unexpected) and is not counted. */
static int glm4_moe(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		    size_t errlen)
{
	if (get_bool(cfg, "attention_bias", &a->qkv_bias, origin, err, errlen) ||
	    get_bool(cfg, "use_qk_norm", &a->qk_norm, origin, err, errlen))
		return -1;
	return 0;
}

/* BLOOM (BloomConfig, BloomModel, transformers modeling_bloom.py): n_embed, where a config has
 * it, is the hidden size (BloomConfig pops it over hidden_size), and num_hidden_layers and
 * num_attention_heads stand for n_layer and n_head (its attribute_map); n_inner is read by
 * nothing (BloomMLP's dense_h_to_4h is 4 x hidden, the default below); every head has its own
 * keys and values. */
static int bloom(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
		 size_t errlen)
{
	if (get_uint(cfg, "n_embed", 1, MAX_DIM, &a->hidden, origin, err, errlen) ||
	    get_uint(cfg, "num_hidden_layers", 1, MAX_LAYERS, &a->layers, origin, err, errlen) ||
	    get_uint(cfg, "num_attention_heads", 1, MAX_DIM, &a->heads, origin, err, errlen))
		return -1;
	a->kv_heads = a->heads;
	a->head_dim = 0;
	return 0;
}

/* MPT (MptConfig and MptModel, transformers configuration_mpt.py and modeling_mpt.py; the
 * checkpoints' own modeling_mpt.py, llm-foundry's, for the keys transformers fixes): no_bias
 * (default true) takes the biases off every linear and the LayerNorms' (weight only); the MLP
 * is expansion_ratio x d_model wide (4); attn_config holds attn_pdrop and alibi (MptAttention-
 * Config's default true), and without ALiBi learned_pos_emb (default true) keeps a position
 * table of max_seq_len rows (llm-foundry turns it off under ALiBi: MPT-7B's 6,649,286,656
 * parameters, its index's 13,298,573,312 bf16 bytes, hold none). attn_config.attn_type
 * multiquery_attention keeps one key-value head and grouped_query_attention kv_n_heads (llm-
 * foundry's attention.py: both are its GroupedQueryAttention, multihead with kv_n_heads =
 * n_heads; configuration_mpt.py's default kv_n_heads 1). llm-foundry's other MLP types are
 * refused, not miscounted. */
static int mpt(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
	       size_t errlen)
{
	bool no_bias = true, learned = true;
	uint64_t ratio = 4;
	if (get_bool(cfg, "no_bias", &no_bias, origin, err, errlen) ||
	    get_bool(cfg, "learned_pos_emb", &learned, origin, err, errlen) ||
	    get_uint(cfg, "expansion_ratio", 1, 64, &ratio, origin, err, errlen))
		return -1;
	a->qkv_bias = a->o_bias = a->mlp_bias = a->norm_bias = !no_bias;
	a->intermediate = ratio * a->hidden;
	const cJSON *ac = cJSON_GetObjectItemCaseSensitive(cfg, "attn_config");
	if (ac && !cJSON_IsNull(ac)) {
		if (!cJSON_IsObject(ac)) {
			snprintf(err, errlen, "config '%s': field 'attn_config' must be an object",
				 origin);
			return -1;
		}
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(ac, "attn_type");
		const char *type = !t || cJSON_IsNull(t) ? "multihead_attention"
				   : cJSON_IsString(t)	     ? t->valuestring
							     : "";
		if (strcmp(type, "multiquery_attention") == 0) {
			a->kv_heads = 1;
		} else if (strcmp(type, "grouped_query_attention") == 0) {
			uint64_t kv = 1;
			if (get_uint(ac, "kv_n_heads", 1, a->heads, &kv, origin, err, errlen))
				return -1;
			if (a->heads % kv) { /* the shared check would name num_key_value_heads */
				snprintf(err, errlen,
					 "config '%s': field 'attn_config.kv_n_heads' (%llu) must "
					 "divide n_heads (%llu)",
					 origin, (unsigned long long)kv,
					 (unsigned long long)a->heads);
				return -1;
			}
			a->kv_heads = kv;
		} else if (strcmp(type, "multihead_attention") != 0) {
			snprintf(err, errlen,
				 "config '%s': field 'attn_config.attn_type' must be "
				 "\"multihead_attention\", \"multiquery_attention\" or "
				 "\"grouped_query_attention\"",
				 origin);
			return -1;
		}
		if (get_bool(ac, "alibi", &a->alibi, origin, err, errlen) ||
		    get_prob(ac, "attn_pdrop", &a->attn_dropout, origin, err, errlen))
			return -1;
	}
	const cJSON *fc = cJSON_GetObjectItemCaseSensitive(cfg, "ffn_config");
	const cJSON *ft = fc && cJSON_IsObject(fc) ? cJSON_GetObjectItemCaseSensitive(fc, "ffn_type")
						   : NULL;
	if (ft && !cJSON_IsNull(ft) &&
	    !(cJSON_IsString(ft) && strcmp(ft->valuestring, "mptmlp") == 0)) {
		snprintf(err, errlen,
			 "config '%s': field 'ffn_config.ffn_type' must be \"mptmlp\" (other MPT "
			 "MLP types are not modelled)",
			 origin);
		return -1;
	}
	a->learned_positions = learned && !a->alibi;
	return 0;
}

static const struct family *find_family(const char *type)
{
	for (size_t i = 0; i < NFAMILIES; i++)
		if (strcmp(families[i].model_type, type) == 0)
			return &families[i];
	return NULL;
}

/*
 * Vision-language checkpoints: the language model is text_config, of its own model_type or, where
 * it names none or one tierplan does not know, the wrapper's (Gemma3ForConditionalGeneration,
 * Llama4ForConditionalGeneration, Mistral3ForConditionalGeneration, LlavaForConditionalGeneration,
 * MllamaForConditionalGeneration); Qwen2-VL and Qwen2.5-VL keep Qwen2's fields at the top level.
 * The vision tower is not counted, and a warning says so. Llama 3.2 Vision's text model
 * (MllamaTextConfig: Llama's decoder with cross_attention_layers among its num_hidden_layers,
 * each with Llama's q/k/v/o and MLP shapes, keys and values projected from the vision states)
 * is counted and timed as Llama layers attending over the text, and the warning says that too.
 * Sets *cfg and *f: 0 found, 1 not a wrapper (*f stays NULL), -1 error.
 */
static const struct {
	const char *outer, *inner;
	bool top;	  /* the language model's fields at the top level without a text_config */
	const char *also; /* what else the warning says, or "" */
} wrappers[] = {
	{"gemma3", "gemma3_text", false, ""},
	{"llama4", "llama4_text", false, ""},
	{"mistral3", "mistral", false, ""},
	{"llava", "llama", false, ""},
	{"mllama", "llama", false,
	 "; its cross-attention layers are taken as self-attention over the text"},
	{"qwen2_vl", "qwen2", true, ""},
	{"qwen2_5_vl", "qwen2", true, ""},
};

/* The model types the family and wrapper tables read, written once (pthread_once: a sweep's
 * workers may report an unsupported config at the same time). */
static char supported[1024];
static pthread_once_t supported_once = PTHREAD_ONCE_INIT;

static void supported_init(void)
{
	size_t n = 0, cap = sizeof supported;
	for (size_t i = 0; i < NFAMILIES && n < cap; i++)
		n += (size_t)snprintf(supported + n, cap - n, "%s%s%s", i ? ", " : "",
				      families[i].model_type,
				      strcmp(families[i].model_type, "qwen") ? "" : " (v1)");
	size_t nw = sizeof wrappers / sizeof wrappers[0];
	for (size_t i = 0; i < nw && n < cap; i++)
		n += (size_t)snprintf(supported + n, cap - n, "%s%s",
				      i ? (i + 1 == nw ? " and " : ", ")
					: "; and the language model of ",
				      wrappers[i].outer);
}

const char *mdl_arch_supported(void)
{
	pthread_once(&supported_once, supported_init);
	return supported;
}

static int language_model(const cJSON *root, const char *type, const cJSON **cfg,
			  const struct family **f, struct mdl_arch *a, const char *origin,
			  char *err, size_t errlen)
{
	for (size_t i = 0; i < sizeof wrappers / sizeof wrappers[0]; i++) {
		if (strcmp(type, wrappers[i].outer) != 0)
			continue;
		const cJSON *tc = cJSON_GetObjectItemCaseSensitive(root, "text_config");
		if (!cJSON_IsObject(tc) && !wrappers[i].top) {
			snprintf(err, errlen, "config '%s': model_type '%s' needs a 'text_config' "
				 "object", origin, type);
			return -1;
		}
		*cfg = cJSON_IsObject(tc) ? tc : root;
		const cJSON *it = cJSON_GetObjectItemCaseSensitive(*cfg, "model_type");
		*f = cJSON_IsObject(tc) && cJSON_IsString(it) ? find_family(it->valuestring) : NULL;
		if (!*f)
			*f = find_family(wrappers[i].inner);
		snprintf(a->warning, sizeof a->warning,
			 "%s: the language model (%s) only; the vision tower is not counted%s",
			 type, (*f)->model_type, wrappers[i].also);
		return 0;
	}
	return 1;
}

/* A checkpoint's quantization_config (transformers' GPTQConfig and the others): its
 * quant_method and, for GPTQ, bits, group_size (GPTQConfig's default 128; -1: one group a
 * column) and desc_act (default false). Read from the top level, where a vision-language
 * checkpoint keeps it too. */
static int quantization(const cJSON *root, struct mdl_arch *a, const char *origin, char *err,
			size_t errlen)
{
	const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
	if (!q || cJSON_IsNull(q))
		return 0;
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
	if (!cJSON_IsObject(q) || !cJSON_IsString(m)) {
		snprintf(err, errlen,
			 "config '%s': field 'quantization_config' must be an object with a "
			 "'quant_method' string",
			 origin);
		return -1;
	}
	snprintf(a->quant_method, sizeof a->quant_method, "%s", m->valuestring);
	if (strcmp(m->valuestring, "gptq") != 0)
		return 0;
	uint64_t bits = 4, group = 128;
	const cJSON *g = cJSON_GetObjectItemCaseSensitive(q, "group_size");
	if (cJSON_IsNumber(g) && g->valuedouble == -1)
		group = 0;
	else if (get_uint(q, "group_size", 1, MAX_DIM, &group, origin, err, errlen))
		return -1;
	if (get_uint(q, "bits", 2, 8, &bits, origin, err, errlen) ||
	    get_bool(q, "desc_act", &a->quant_desc_act, origin, err, errlen))
		return -1;
	a->quant_bits = (uint32_t)bits;
	a->quant_group = (uint32_t)group;
	return 0;
}

/* Which layers hold experts. Qwen2MoeSparseMoeBlock and Qwen3MoeSparseMoeBlock replace the
 * MLP of layer i when i is not in mlp_only_layers and (i + 1) % decoder_sparse_step == 0;
 * DeepseekV3DecoderLayer when i >= first_k_dense_replace and i % moe_layer_freq == 0; Mixtral
 * in every layer. The expert width is moe_intermediate_size (Mixtral: intermediate_size); the
 * shared experts' is n_shared_experts times it (DeepSeek) or shared_expert_intermediate_size
 * (Qwen2-MoE, whose one shared expert a sigmoid gate scales). */
static int moe_layers(const cJSON *cfg, const struct family *f, struct mdl_arch *a,
		      const char *origin, char *err, size_t errlen)
{
	uint64_t step = 1, first = f->first_dense, freq = 1, n = 0;
	const cJSON *only = cJSON_GetObjectItemCaseSensitive(cfg, "mlp_only_layers");

	if (!f->moe_inter) {
		a->moe_intermediate = a->intermediate;
		a->moe_layers = a->layers;
		return 0;
	}
	if (get_uint(cfg, "moe_intermediate_size", 1, MAX_INTER, &a->moe_intermediate, origin, err,
		     errlen) ||
	    get_uint(cfg, "decoder_sparse_step", 1, MAX_LAYERS, &step, origin, err, errlen) ||
	    get_uint(cfg, "first_k_dense_replace", 0, MAX_LAYERS, &first, origin, err, errlen) ||
	    get_uint(cfg, "moe_layer_freq", 1, MAX_LAYERS, &freq, origin, err, errlen))
		return -1;
	if (f->shared_inter) {
		/* Qwen2-MoE: one shared expert of its own width, gated */
		a->shared_intermediate = f->shared_inter;
		if (get_uint(cfg, "shared_expert_intermediate_size", 0, MAX_INTER,
			     &a->shared_intermediate, origin, err, errlen))
			return -1;
		a->shared_experts = a->shared_intermediate ? 1 : 0;
		a->shared_gate = a->shared_experts;
	} else if (f->shared) {
		uint64_t sh = f->shared;
		if (get_uint(cfg, "n_shared_experts", 0, 4096, &sh, origin, err, errlen))
			return -1;
		a->shared_experts = (uint32_t)sh;
		a->shared_intermediate = a->moe_intermediate * sh;
	}
	if (only && !cJSON_IsNull(only) && !cJSON_IsArray(only)) {
		snprintf(err, errlen, "config '%s': field 'mlp_only_layers' must be a list of layer "
			 "numbers", origin);
		return -1;
	}
	for (uint64_t i = 0; i < a->layers; i++) {
		bool dense = i < first || i % freq != 0 || (i + 1) % step != 0;
		const cJSON *it;
		if (cJSON_IsArray(only)) {
			cJSON_ArrayForEach(it, only)
			{
				if (cJSON_IsNumber(it) && it->valuedouble == (double)i)
					dense = true;
			}
		}
		n += !dense;
	}
	a->moe_layers = n;
	return 0;
}

/* Multi-head latent attention (DeepseekV3Config): scores on heads of qk_nope_head_dim +
 * qk_rope_head_dim, values of v_head_dim; keys and values decompressed per head, so as many
 * key-value heads as heads. q_lora_rank null: one q_proj (DeepSeek-V2-Lite). */
static int mla(const cJSON *cfg, struct mdl_arch *a, const char *origin, char *err,
	       size_t errlen)
{
	uint64_t nope = 128, v = 128;
	const cJSON *ql = cJSON_GetObjectItemCaseSensitive(cfg, "q_lora_rank");

	if (get_uint(cfg, "kv_lora_rank", 1, MAX_DIM, &a->kv_lora_rank, origin, err, errlen) ||
	    get_uint(cfg, "q_lora_rank", 1, MAX_DIM, &a->q_lora_rank, origin, err, errlen) ||
	    get_uint(cfg, "qk_rope_head_dim", 1, MAX_DIM, &a->qk_rope_dim, origin, err, errlen) ||
	    get_uint(cfg, "qk_nope_head_dim", 0, MAX_DIM, &nope, origin, err, errlen) ||
	    get_uint(cfg, "v_head_dim", 1, MAX_DIM, &v, origin, err, errlen))
		return -1;
	if (ql && cJSON_IsNull(ql))
		a->q_lora_rank = 0;
	a->head_dim = nope + a->qk_rope_dim;
	a->v_head_dim = v;
	a->kv_heads = a->heads;
	return 0;
}

/* Sliding-window attention: the window, and how many layers use it (layer_types where the
 * config lists it, else the family's pattern). */
static int windows(const cJSON *cfg, const struct family *f, struct mdl_arch *a,
		   const char *origin, char *err, size_t errlen)
{
	const cJSON *w = cJSON_GetObjectItemCaseSensitive(cfg, "sliding_window");
	const cJSON *types = cJSON_GetObjectItemCaseSensitive(cfg, "layer_types");
	uint64_t every = f->full_every;

	if (w && cJSON_IsNull(w))
		a->sliding_window = 0;
	else if (get_uint(cfg, "sliding_window", 1, MAX_POS, &a->sliding_window, origin, err,
			  errlen))
		return -1;
	/* a string of L (local) and G (global), repeated from layer 0, the last layer global
	 * (Exaone4Config: "LLLG" is a pattern of 4) */
	const cJSON *pat = cJSON_GetObjectItemCaseSensitive(cfg, "sliding_window_pattern");
	size_t np = cJSON_IsString(pat) ? strlen(pat->valuestring) : 0;
	if (np && strspn(pat->valuestring, "LG") != np) {
		snprintf(err, errlen,
			 "config '%s': field 'sliding_window_pattern' must be a number or a string "
			 "of L and G, not '%.20s'",
			 origin, pat->valuestring);
		return -1;
	}
	if (!np && get_uint(cfg, "sliding_window_pattern", 1, MAX_LAYERS, &every, origin, err,
			    errlen))
		return -1;
	a->sliding_layers = 0;
	if (!a->sliding_window)
		return 0;
	if (np && !cJSON_IsArray(types)) {
		for (uint64_t i = 0; i + 1 < a->layers; i++)
			a->sliding_layers += pat->valuestring[i % np] == 'L';
		return 0;
	}
	if (cJSON_IsArray(types)) {
		const cJSON *it;
		cJSON_ArrayForEach(it, types)
			a->sliding_layers += cJSON_IsString(it) &&
					     strcmp(it->valuestring, "sliding_attention") == 0;
		if (a->sliding_layers > a->layers)
			a->sliding_layers = a->layers;
		return 0;
	}
	a->sliding_layers = every ? a->layers - a->layers / every : a->layers;
	return 0;
}

int mdl_arch_parse(const char *json, const char *origin, struct mdl_arch *a, char *err,
		   size_t errlen)
{
	cJSON *root = cJSON_Parse(json);
	const cJSON *mt, *cfg;
	const struct family *f;
	int rc = -1;

	memset(a, 0, sizeof *a);
	if (!root) {
		snprintf(err, errlen, "config '%s': not valid JSON (near byte %ld)", origin,
			 (long)(cJSON_GetErrorPtr() ? cJSON_GetErrorPtr() - json : 0));
		return -1;
	}
	if (!cJSON_IsObject(root)) {
		snprintf(err, errlen, "config '%s': expected a JSON object", origin);
		goto out;
	}
	cfg = root;
	mt = cJSON_GetObjectItemCaseSensitive(root, "model_type");
	if (!cJSON_IsString(mt)) {
		snprintf(err, errlen, "config '%s': field 'model_type' is missing (supported: %s)",
			 origin, mdl_arch_supported());
		goto out;
	}
	f = find_family(mt->valuestring);
	if (!f && language_model(root, mt->valuestring, &cfg, &f, a, origin, err, errlen) < 0)
		goto out;
	if (!f) {
		snprintf(err, errlen, "config '%s': model_type '%.40s' is not supported (supported: %s)",
			 origin, mt->valuestring, mdl_arch_supported());
		goto out;
	}
	snprintf(a->model_type, sizeof a->model_type, "%s", f->model_type);
	a->vocab = f->vocab;
	a->hidden = f->hidden;
	a->intermediate = f->intermediate;
	a->layers = f->layers;
	a->heads = f->heads;
	a->kv_heads = f->kv_heads;
	a->head_dim = f->head_dim;
	a->positions = f->positions;
	a->experts = f->experts;
	a->experts_per_tok = f->experts_per_tok;
	a->tied = f->tied;
	a->gated_mlp = f->gated;
	a->geglu = f->geglu;
	a->learned_positions = f->learned_pos;
	a->alibi = f->alibi;
	a->embed_norm = f->embed_norm;
	a->norm_weightless = f->norm_weightless;
	a->norm_cast_back = f->norm_cast_back;
	a->attn_dropout = f->attn_drop;
	a->resid_dropout = f->resid_drop;
	a->embd_dropout = f->embd_drop;
	a->qkv_bias = f->qkv_bias;
	a->o_bias = f->o_bias;
	a->mlp_bias = f->mlp_bias;
	a->norm_bias = f->norm_bias;
	a->norms_per_layer = f->norms_per_layer;
	a->head_bias = f->head_bias;
	a->parallel = f->parallel;
	a->fused_qkv = f->fused_qkv;
	a->qk_norm = f->qk_norm;
	a->qk_norm_full = f->qk_norm_full;
	a->router_bias = f->router_bias;
	a->attn_sinks = f->sinks;
	a->quick_glu = f->quick_glu;
	a->glu_limit = f->quick_glu ? GPT_OSS_SWIGLU_LIMIT : 0;
	a->moe_intermediate = f->moe_inter;
	a->shared_experts = f->shared;
	a->q_lora_rank = f->q_lora;
	a->kv_lora_rank = f->kv_lora;
	a->qk_rope_dim = f->qk_rope;
	a->sliding_window = f->window;

	uint64_t ex = a->experts, ek = a->experts_per_tok;
	if (get_uint(cfg, "vocab_size", 1, MAX_VOCAB, &a->vocab, origin, err, errlen) ||
	    get_uint(cfg, f->k_hidden, 1, MAX_DIM, &a->hidden, origin, err, errlen) ||
	    get_uint(cfg, f->k_layers, 1, MAX_LAYERS, &a->layers, origin, err, errlen) ||
	    get_uint(cfg, f->k_heads, 1, MAX_DIM, &a->heads, origin, err, errlen) ||
	    get_uint(cfg, f->k_inter, 1, MAX_INTER, &a->intermediate, origin, err, errlen) ||
	    get_uint(cfg, f->k_pos, 1, MAX_POS, &a->positions, origin, err, errlen) ||
	    get_bool(cfg, "tie_word_embeddings", &a->tied, origin, err, errlen) ||
	    get_prob(cfg, f->k_attn_drop, &a->attn_dropout, origin, err, errlen) ||
	    get_prob(cfg, f->k_resid_drop, &a->resid_dropout, origin, err, errlen) ||
	    get_prob(cfg, f->k_embd_drop, &a->embd_dropout, origin, err, errlen) ||
	    (f->quick_glu && glu_limit(cfg, &a->glu_limit, origin, err, errlen)))
		goto out;
	if (strcmp(f->model_type, "gpt2") != 0) {
		if (get_uint(cfg, "num_key_value_heads", 1, MAX_DIM, &a->kv_heads, origin, err,
			     errlen) ||
		    get_uint(cfg, "head_dim", 1, MAX_DIM, &a->head_dim, origin, err, errlen))
			goto out;
	}
	if (f->k_attn_bias) {
		bool ab = f->qkv_bias;
		if (get_bool(cfg, f->k_attn_bias, &ab, origin, err, errlen))
			goto out;
		a->qkv_bias = a->o_bias = ab;
	}
	if (f->mlp_bias_key && get_bool(cfg, "mlp_bias", &a->mlp_bias, origin, err, errlen))
		goto out;
	if (f->k_all_bias) {
		bool b = f->qkv_bias;
		if (get_bool(cfg, f->k_all_bias, &b, origin, err, errlen))
			goto out;
		a->qkv_bias = a->o_bias = a->mlp_bias = b;
	}
	if (f->experts) {
		const char *k_ex = f->k_experts ? f->k_experts : "num_experts";
		if (get_uint(cfg, k_ex, 1, 4096, &ex, origin, err, errlen) ||
		    get_uint(cfg, "num_experts_per_tok", 1, 4096, &ek, origin, err, errlen))
			goto out;
		if (ek > ex) {
			snprintf(err, errlen,
				 "config '%s': field 'num_experts_per_tok' (%llu) exceeds '%s' (%llu)",
				 origin, (unsigned long long)ek, k_ex, (unsigned long long)ex);
			goto out;
		}
		a->experts = (uint32_t)ex;
		a->experts_per_tok = (uint32_t)ek;
		if (moe_layers(cfg, f, a, origin, err, errlen))
			goto out;
	}
	if (f->own && f->own(cfg, a, origin, err, errlen))
		goto out;
	if (f->kv_lora && mla(cfg, a, origin, err, errlen))
		goto out;
	if (quantization(root, a, origin, err, errlen))
		goto out;
	if (f->windowed && windows(cfg, f, a, origin, err, errlen))
		goto out;
	if (a->intermediate == 0) /* GPT2Config: n_inner None means 4 * n_embd */
		a->intermediate = 4 * a->hidden;
	if (a->kv_heads == 0)
		a->kv_heads = a->heads;
	if (a->head_dim == 0) {
		if (a->hidden % a->heads) {
			snprintf(err, errlen,
				 "config '%s': hidden size %llu is not divisible by %llu heads "
				 "(set 'head_dim')",
				 origin, (unsigned long long)a->hidden,
				 (unsigned long long)a->heads);
			goto out;
		}
		a->head_dim = a->hidden / a->heads;
	}
	if (a->v_head_dim == 0)
		a->v_head_dim = a->head_dim;
	if (a->heads % a->kv_heads) {
		snprintf(err, errlen,
			 "config '%s': field 'num_key_value_heads' (%llu) must divide "
			 "'num_attention_heads' (%llu)",
			 origin, (unsigned long long)a->kv_heads, (unsigned long long)a->heads);
		goto out;
	}
	build_inventory(a);
	{
		/* the inventory's products fit in uint64 only for sane sizes: check in double */
		double total = 0;
		for (int i = 0; i < a->nlayer; i++)
			total += (double)a->layer[i].rows * (double)a->layer[i].cols *
				 a->layer[i].copies * (double)a->layers;
		total += 2.0 * (double)a->vocab * (double)a->hidden;
		if (total > MAX_PARAMS) {
			snprintf(err, errlen,
				 "config '%s': the model would have %.3g parameters, more than the "
				 "%.0e tierplan supports",
				 origin, total, MAX_PARAMS);
			goto out;
		}
	}
	misspelled(cfg, f, a);
	rc = 0;
out:
	cJSON_Delete(root);
	return rc;
}

/*
 * A sweep or a search loads the same config.json for every point: each thread keeps its last
 * few loads, keyed by path and the file's stamp (model/file.h), so a point reads and parses it
 * once. Per thread, so nothing is shared between sweep workers.
 */
#define ARCH_MEMO 4
static _Thread_local struct {
	char path[1024];
	struct cfg_stamp st;
	struct mdl_arch a;
} arch_memo[ARCH_MEMO];
static _Thread_local unsigned arch_memo_next;

int mdl_arch_load(const char *path, struct mdl_arch *a, char *err, size_t errlen)
{
	struct cfg_stamp st;
	bool stamped = cfg_file_stamp(path, &st) == 0 && strlen(path) < sizeof arch_memo[0].path;

	for (int i = 0; stamped && i < ARCH_MEMO; i++)
		if (!strcmp(arch_memo[i].path, path) && !memcmp(&arch_memo[i].st, &st, sizeof st)) {
			*a = arch_memo[i].a;
			return 0;
		}
	/* the largest real config.json files are a few KiB; 4 MiB rejects garbage quickly */
	char *json = cfg_read_file(path, "config", 4u << 20, err, errlen);
	int rc;

	if (!json)
		return -1;
	rc = mdl_arch_parse(json, path, a, err, errlen);
	free(json);
	if (rc == 0 && !a->name[0]) {
		const char *base = strrchr(path, '/');
		snprintf(a->name, sizeof a->name, "%s", base ? base + 1 : path);
	}
	if (rc == 0 && stamped) {
		unsigned k = arch_memo_next++ % ARCH_MEMO;
		snprintf(arch_memo[k].path, sizeof arch_memo[k].path, "%s", path);
		arch_memo[k].st = st;
		arch_memo[k].a = *a;
	}
	return rc;
}

static const struct {
	const char *name;
	unsigned bit;
} target_names[] = {
	{"q", MDL_T_Q},       {"k", MDL_T_K},   {"v", MDL_T_V},       {"o", MDL_T_O},
	{"gate", MDL_T_GATE}, {"up", MDL_T_UP}, {"down", MDL_T_DOWN}, {"embed", MDL_T_EMBED},
	{"head", MDL_T_HEAD},
};

int mdl_parse_targets(const char *s, unsigned *mask, char *err, size_t errlen)
{
	char buf[256];
	unsigned m = 0;

	snprintf(buf, sizeof buf, "%s", s);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		size_t i;
		if (strcmp(tok, "all") == 0) {
			m |= MDL_T_ALL;
			continue;
		}
		for (i = 0; i < sizeof target_names / sizeof target_names[0]; i++)
			if (strcmp(tok, target_names[i].name) == 0)
				break;
		if (i == sizeof target_names / sizeof target_names[0]) {
			snprintf(err, errlen,
				 "unknown LoRA target '%s' (allowed: q,k,v,o,gate,up,down or all, "
				 "and embed,head trained whole)",
				 tok);
			return -1;
		}
		m |= target_names[i].bit;
	}
	if (!(m & MDL_T_ALL)) {
		snprintf(err, errlen,
			 "no adapted projection given (allowed: q,k,v,o,gate,up,down or all; embed "
			 "and head are trained beside them)");
		return -1;
	}
	*mask = m;
	return 0;
}

char *mdl_targets_str(unsigned mask, char *buf, size_t n)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof target_names / sizeof target_names[0] && used < n; i++)
		if (mask & target_names[i].bit)
			used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? "," : "",
						 target_names[i].name);
	return buf;
}
