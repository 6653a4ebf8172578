/* test_arch — config.json reading, defaults and exact parameter counts. */
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../model/act.h"
#include "../model/arch.h"
#include "../model/job.h"
#include "tests.h"

/*
 * Published totals: the Hugging Face checkpoints' safetensors index total_size / 2 (bf16), as
 * published.md A.3 states its counting rule reproduces them (Llama-2 without the 256 B/layer
 * rotary inv_freq buffers); GPT-3 175B has no checkpoint and is counted by the same rules
 * (Brown et al. 2020 report "175.0B"). Qwen3 and Gemma 3: the Hub's safetensors.total
 * (Qwen/Qwen3-8B 8,190,735,360; Qwen/Qwen3-32B 32,762,123,264; Qwen/Qwen3-30B-A3B
 * 30,532,122,624 with "3.3B activated" on its card; google/gemma-3-1b-it 999,885,952).
 * DeepSeek-V3: the main model's 671,026,419,200 elements of the checkpoint without the 14B
 * multi-token-prediction module transformers does not load and without the FP8 scale tensors
 * (DeepSeek's README_WEIGHTS.md: "671B main model weights and 14B of the MTP module"); its card
 * says "37B activated", which 37,552,297,472 is. Qwen-7B (v1, its own modeling code): the
 * safetensors index's total_size 15,442,649,088 / 2; Qwen-14B: 14,167,290,880, what GGUF
 * files of the same shapes report (Qwen1.5-14B derivatives: n_params). Gemma-7B: 8,537,680,896, the count
 * KerasHub's gemma_7b_en preset publishes. gpt-oss-120b: the GGUF's general.parameter_count
 * 116,829,156,672 (Ollama); gpt-oss-20b: "20.91B" total on OpenAI's model card. Their active
 * counts keep the 0.58B embedding table the card leaves out of its 5.13B and 3.61B.
 * DeepSeek-V2-Lite: 15,706,484,224 ("with 15706484224 (2.7B effect.) parameters", a serving
 * log of the checkpoint); published.md A.3 gives its counting rule, and the active count
 * (6 of 64 routed experts and the 2 shared) follows from it. Qwen1.5-MoE-A2.7B:
 * 14,315,784,192, KerasHub's qwen1.5_moe preset (and a serving log); active: 4 of 60 experts
 * and the gated shared one. Llama-4-Scout-17B-16E: the Hub's 108,641,793,536 less its vision
 * tower, adapter and projector, 871,932,416 by Llama4VisionModel's modeling code (34 layers of
 * 23,807,872, patch and position embeddings, the pixel-shuffle MLP, the projector); active:
 * 1 of 16 experts and the shared one, the card's "17B". OLMo-2-1124-7B: the Hub's
 * safetensors total, 7,298,617,344 (its q and k norms span the whole projections). GLM-4-9B
 * (ChatGLM's own modeling code): 9,399,951,360, as transformers reports it loaded. Phi-2: the
 * Hub's safetensors count, 2,779,683,840 (one LayerNorm per parallel block, biases everywhere,
 * a biased lm_head). Falcon-7B: published.md A.3's rule (fused q/k/v with one key-value head,
 * one LayerNorm, no linear biases, tied head), which it says reproduces the checkpoint's
 * total_size. Pythia-6.9B: 6,857,302,016, the Pythia suite's table of total parameters
 * (EleutherAI/pythia README: two LayerNorms a layer, biases everywhere, untied embed_out).
 * Qwen3-235B-A22B: the Hub's safetensors total, 235,093,634,560; active: 8 of 128 experts.
 * Mixtral-8x22B-v0.1 (the base release's config, vocabulary 32,000): 140,620,634,112, the Hub's
 * safetensors count of a checkpoint of the same shapes (alpindale/WizardLM-2-8x22B); active: 2
 * of 8 experts, Mistral's "39B active".
 * OPT-125M: 125,239,296 and OPT-1.3B: 1,315,758,080, sum(p.numel()) of the loaded models as
 * scripts print them (DeepSpeed-Chat's feature selection for OPT-1.3B; KerasHub's presets,
 * 125,237,760 and 1,315,753,984, keep 2 x hidden fewer: a position table without OPT's offset
 * rows). BLOOM-560M: 559,214,592, the Hub's safetensors parameter_count (huggingface_hub's
 * tests, bigscience/bloomz-560m); BLOOM-7B1 7,069,016,064 and BLOOM-176B 176,247,271,424, the
 * family's published sizes (a results script's bloom_params list). GPT-J-6B: 6,050,882,784, the
 * loaded model's parameters as a LoRA test script prints them (EleutherAI's 6,053,381,344 is
 * mesh-transformer-jax's count of its own checkpoint). MPT-7B: 6,649,286,656, the
 * pytorch_model.bin index's total_size of a checkpoint of its shapes (13,298,573,312 bf16 bytes,
 * a Databricks MPT-7B derivative's model card).
 */
static const struct {
	const char *file;
	uint64_t params, active;
} published[] = {
	{"llama-3.1-8b.json", 8030261248ull, 8030261248ull},
	{"llama-3.1-70b.json", 70553706496ull, 70553706496ull},
	{"llama-3.1-405b.json", 405853388800ull, 405853388800ull},
	{"llama-3.2-1b.json", 1235814400ull, 1235814400ull},
	{"llama-3.2-3b.json", 3212749824ull, 3212749824ull},
	{"llama-3.3-70b.json", 70553706496ull, 70553706496ull},
	{"llama-2-7b.json", 6738415616ull, 6738415616ull},
	{"llama-2-13b.json", 13015864320ull, 13015864320ull},
	{"llama-2-70b.json", 68976648192ull, 68976648192ull},
	{"mistral-7b-v0.1.json", 7241732096ull, 7241732096ull},
	{"mixtral-8x7b-v0.1.json", 46702792704ull, 12879925248ull},
	{"mixtral-8x22b-v0.1.json", 140620634112ull, 39152031744ull},
	{"qwen-7b.json", 7721324544ull, 7721324544ull},
	{"qwen-14b.json", 14167290880ull, 14167290880ull},
	{"qwen2.5-0.5b.json", 494032768ull, 494032768ull},
	{"qwen2.5-7b.json", 7615616512ull, 7615616512ull},
	{"qwen2.5-14b.json", 14770033664ull, 14770033664ull},
	{"qwen2.5-32b.json", 32763876352ull, 32763876352ull},
	{"qwen2.5-72b.json", 72706203648ull, 72706203648ull},
	{"gemma-7b.json", 8537680896ull, 8537680896ull},
	{"gemma-2-9b.json", 9241705984ull, 9241705984ull},
	{"gemma-2-27b.json", 27227128320ull, 27227128320ull},
	{"qwen3-8b.json", 8190735360ull, 8190735360ull},
	{"qwen3-32b.json", 32762123264ull, 32762123264ull},
	{"qwen3-30b-a3b.json", 30532122624ull, 3353032704ull},
	{"qwen3-235b-a22b.json", 235093634560ull, 22190763520ull},
	{"gemma-3-1b.json", 999885952ull, 999885952ull},
	{"deepseek-v3.json", 671026419200ull, 37552297472ull},
	{"deepseek-v2-lite.json", 15706484224ull, 2661150208ull},
	{"qwen1.5-moe-a2.7b.json", 14315784192ull, 2689173504ull},
	{"llama-4-scout-17b-16e.json", 107769861120ull, 17172894720ull},
	{"olmo-2-7b.json", 7298617344ull, 7298617344ull},
	{"glm-4-9b.json", 9399951360ull, 9399951360ull},
	{"gpt-oss-120b.json", 116829156672ull, 5711982912ull},
	{"gpt-oss-20b.json", 20914757184ull, 4187440704ull},
	{"phi-2.json", 2779683840ull, 2779683840ull},
	{"falcon-7b.json", 6921720704ull, 6921720704ull},
	{"pythia-6.9b.json", 6857302016ull, 6857302016ull},
	{"phi-3-mini-4k.json", 3821079552ull, 3821079552ull},
	{"gpt3-175b.json", 174604259328ull, 174604259328ull},
	{"gpt-j-6b.json", 6050882784ull, 6050882784ull},
	{"opt-125m.json", 125239296ull, 125239296ull},
	{"opt-1.3b.json", 1315758080ull, 1315758080ull},
	{"bloom-560m.json", 559214592ull, 559214592ull},
	{"bloom-7b1.json", 7069016064ull, 7069016064ull},
	{"bloom-176b.json", 176247271424ull, 176247271424ull},
	{"mpt-7b.json", 6649286656ull, 6649286656ull},
};

static void every_catalog_model_has_its_exact_parameter_count(void)
{
	for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
		struct mdl_arch a;
		struct mdl_counts c;
		char err[256];
		int rc = mdl_arch_load(model_path(published[i].file), &a, err, sizeof err);
		CU_ASSERT_EQUAL_FATAL(rc, 0);
		mdl_arch_counts(&a, &c);
		CU_ASSERT_EQUAL(c.params, published[i].params);
		CU_ASSERT_EQUAL(c.active_params, published[i].active);
		if (c.params != published[i].params)
			printf("\n  %s: %llu, published %llu\n", published[i].file,
			       (unsigned long long)c.params, (unsigned long long)published[i].params);
	}
}

static uint64_t count_of(const char *json)
{
	struct mdl_arch a;
	struct mdl_counts c;
	char err[256];

	if (mdl_arch_parse(json, "test", &a, err, sizeof err) < 0)
		return 0;
	mdl_arch_counts(&a, &c);
	return c.params;
}

/* The config parses into *a and counts `params` in all. */
static void counts(const char *json, uint64_t params, struct mdl_arch *a)
{
	struct mdl_counts c;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(json, "t", a, err, sizeof err), 0);
	mdl_arch_counts(a, &c);
	CU_ASSERT_EQUAL(c.params, params);
}

/* The same for a MoE config, with `active` of them a token passes through. */
static void counts_active(const char *json, uint64_t params, uint64_t active, struct mdl_arch *a)
{
	struct mdl_counts c;
	counts(json, params, a);
	mdl_arch_counts(a, &c);
	CU_ASSERT_EQUAL(c.active_params, active);
}

/* The config is refused (-1), its message naming `named`. */
static void refused(const char *json, const char *named)
{
	struct mdl_arch a;
	char err[256];

	CU_ASSERT_EQUAL(mdl_arch_parse(json, "t", &a, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, named));
}

/* Gemma's MLP gates by GELU (GemmaMLP's act_fn is hidden_activation, gelu_pytorch_tanh), in
 * every generation; Llama's by SiLU: the shapes agree, the activation is what emit must know. */
static void gemma_gates_by_gelu(void)
{
	const char *const gelu[] = {"gemma", "gemma2", "gemma3_text"};
	struct mdl_arch a;
	char err[256], json[96];

	for (int i = 0; i < 3; i++) {
		snprintf(json, sizeof json, "{\"model_type\": \"%s\"}", gelu[i]);
		CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(json, "test", &a, err, sizeof err), 0);
		CU_ASSERT(a.gated_mlp && a.geglu);
	}
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"llama\"}", "test", &a, err,
					     sizeof err),
			      0);
	CU_ASSERT(a.gated_mlp && !a.geglu);
}

/* gpt-oss gates its experts by quick GELU with the up projection offset by one, both clamped
 * at swiglu_limit (GptOssExperts; GptOssConfig's default 7.0), which a config may change */
static void gpt_oss_gates_by_quick_gelu(void)
{
	struct mdl_arch a;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"gpt_oss\"}", "test", &a, err,
					     sizeof err),
			      0);
	CU_ASSERT(a.quick_glu && !a.geglu);
	CU_ASSERT_DOUBLE_EQUAL(a.glu_limit, 7.0, 0);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"gpt_oss\", \"swiglu_limit\": 5.5}",
					     "test", &a, err, sizeof err),
			      0);
	CU_ASSERT_DOUBLE_EQUAL(a.glu_limit, 5.5, 0);
	CU_ASSERT_EQUAL(mdl_arch_parse("{\"model_type\": \"gpt_oss\", \"swiglu_limit\": 0}", "test",
				       &a, err, sizeof err),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "swiglu_limit"));
}

/* A GPTQ checkpoint's config says so in quantization_config (transformers' GPTQConfig: bits,
 * group_size, default 128, -1 for one group, desc_act, default false); other methods are
 * named only, and a malformed one is refused naming the field. */
static void gptq_checkpoints_declare_their_format(void)
{
	struct mdl_arch a;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"llama\", \"quantization_config\": "
					     "{\"quant_method\": \"gptq\", \"bits\": 4}}",
					     "test", &a, err, sizeof err),
			      0);
	CU_ASSERT_STRING_EQUAL(a.quant_method, "gptq");
	CU_ASSERT(a.quant_bits == 4 && a.quant_group == 128 && !a.quant_desc_act);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"qwen2\", \"quantization_config\": "
					     "{\"quant_method\": \"gptq\", \"bits\": 4, "
					     "\"group_size\": -1, \"desc_act\": true}}",
					     "test", &a, err, sizeof err),
			      0);
	CU_ASSERT(a.quant_group == 0 && a.quant_desc_act);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"llama\", \"quantization_config\": "
					     "{\"quant_method\": \"awq\", \"bits\": 4}}",
					     "test", &a, err, sizeof err),
			      0);
	CU_ASSERT_STRING_EQUAL(a.quant_method, "awq");
	CU_ASSERT_EQUAL(a.quant_bits, 0);
	CU_ASSERT_EQUAL(mdl_arch_parse("{\"model_type\": \"llama\", \"quantization_config\": "
				       "{\"quant_method\": \"gptq\", \"group_size\": 0}}",
				       "test", &a, err, sizeof err),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "group_size"));
	CU_ASSERT_EQUAL(mdl_arch_parse("{\"model_type\": \"llama\", \"quantization_config\": 4}",
				       "test", &a, err, sizeof err),
			-1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "quantization_config"));
}

/* OPT (by hand, a 2-layer config of hidden 8, 2 heads, ffn 16, 10 tokens, 4 positions): q, k,
 * v, out_proj with biases 4 x (64 + 8) = 288, fc1 128 + 16 and fc2 128 + 8, two LayerNorms 32:
 * 600 a layer; the embedding 80, the position table (4 + 2) x 8 = 48, the final LayerNorm 16:
 * 1,344, the head tied. Its ReLU keeps one tensor of the MLP's width where GELU keeps two
 * (s x b x ffn x 2 B = 4 x 1 x 16 x 2 = 128 B of a 4-token micro-batch); 350M-style configs are
 * refused with the field named. */
static void opt_counts_its_offset_positions_and_keeps_relu_once(void)
{
	const char *c = "{\"model_type\": \"opt\", \"hidden_size\": 8, \"num_hidden_layers\": 2, "
			"\"num_attention_heads\": 2, \"ffn_dim\": 16, \"vocab_size\": 10, "
			"\"max_position_embeddings\": 4%s}";
	char json[320], err[320];
	struct mdl_arch relu, gelu;
	snprintf(json, sizeof json, c, "");
	CU_ASSERT_EQUAL(count_of(json), 1344ull);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(json, "t", &relu, err, sizeof err), 0);
	CU_ASSERT(relu.relu_mlp && relu.learned_positions && !mdl_arch_rotary(&relu));
	CU_ASSERT(relu.tied && relu.qkv_bias && relu.mlp_bias && relu.norm_bias);
	CU_ASSERT_DOUBLE_EQUAL(relu.resid_dropout, 0.1, 0);
	snprintf(json, sizeof json, c, ", \"activation_function\": \"gelu\"");
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(json, "t", &gelu, err, sizeof err), 0);
	CU_ASSERT(!gelu.relu_mlp);
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .optimizer = MDL_ADAMW, .recompute = MDL_RC_NONE,
			    .attention = MDL_ATTN_FLASH, .seq = 4, .micro_batch = 1};
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_saved(&gelu, &j, 1, false) -
				       mdl_act_layer_saved(&relu, &j, 1, false),
			       128.0, 1e-9);
	/* enable_bias false takes the linears' 2 x (4 x 8 + 16 + 8) = 112 biases out */
	snprintf(json, sizeof json, c, ", \"enable_bias\": false");
	CU_ASSERT_EQUAL(count_of(json), 1344ull - 112);
	const char *refused[][2] = {{", \"word_embed_proj_dim\": 4", "word_embed_proj_dim 4"},
				    {", \"do_layer_norm_before\": false", "do_layer_norm_before"},
				    {", \"_remove_final_layer_norm\": true", "final norm"},
				    {", \"activation_function\": 1", "activation_function"}};
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
		snprintf(json, sizeof json, c, refused[i][0]);
		CU_ASSERT_EQUAL(mdl_arch_parse(json, "t", &relu, err, sizeof err), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, refused[i][1]));
	}
}

/* BLOOM (by hand, hidden 8 given as n_embed, 2 layers given as num_hidden_layers, 2 heads, 10
 * tokens): query_key_value 3 x (64 + 8) = 216, dense 72, the MLP 4 x hidden wide, 8 x 32 + 32
 * = 288 and 32 x 8 + 8 = 264, two LayerNorms 32: 872 a layer; the embedding 80, its LayerNorm
 * 16, the final one 16: 1,856 with the head tied. ALiBi: no position table, no rotary embedding; the
 * embedding LayerNorm keeps its input (4 tokens x 8 x 2 B = 64 B beside the 8 B token ids). */
static void bloom_reads_its_aliases_and_norms_its_embeddings(void)
{
	const char *json = "{\"model_type\": \"bloom\", \"n_embed\": 8, \"num_hidden_layers\": 2, "
			   "\"n_head\": 2, \"vocab_size\": 10}";
	struct mdl_arch a;
	char err[256];
	CU_ASSERT_EQUAL(count_of(json), 1856ull);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(json, "t", &a, err, sizeof err), 0);
	CU_ASSERT(a.alibi && a.embed_norm && !a.learned_positions && !mdl_arch_rotary(&a));
	CU_ASSERT(!a.relu_mlp && !a.gated_mlp && a.tied);
	CU_ASSERT_EQUAL(a.intermediate, 32);
	struct mdl_job j = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			    .optimizer = MDL_ADAMW, .seq = 4, .micro_batch = 1};
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_embed(&a, &j, 1, false), 4 * 8.0 + 64.0, 1e-9);
	/* run as eager PyTorch ops: LayerNorm is one kernel and no rotary embedding runs, so
	 * nothing moves beyond the inventory (a Llama-style layer would: its RMSNorms and RoPE) */
	double bwd;
	j.eager_ops = true;
	CU_ASSERT_DOUBLE_EQUAL(mdl_act_layer_eager(&a, &j, 1, false, &bwd, NULL), 0.0, 0);
	CU_ASSERT_DOUBLE_EQUAL(bwd, 0.0, 0);
	/* BloomConfig()'s own defaults: hidden 64, 2 layers, 8 heads, the 250,880 vocabulary */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"bloom\"}"),
			2ull * (12 * 64 * 64 + 13 * 64) + 250880ull * 64 + 4 * 64);
}

/* MPT. MPT-7B's config (d_model 4096, 32 layers, 32 heads, vocabulary 50,432, ALiBi, no_bias):
 * 12 x 4096^2 x 32 in the layers, two weight-only LayerNorms a layer and the final one, the
 * tied embedding: 6,649,286,656, its checkpoint index's 13,298,573,312 bf16 bytes. MptConfig()'s
 * defaults (d_model 2048, 24 layers, 50,368): 1,311,213,568. llm-foundry's benchmark MPT-1b
 * (no_bias false, ALiBi off, learned positions of 2,048): 12 d^2 L + 13 d L + 2 d +
 * (50368 + 2048) d = 1,315,950,592, the MosaicML table's count. llm-foundry's grouped-query
 * attention (by hand: d_model 64, 8 heads of 8, kv_n_heads 2, 2 layers, vocabulary 100): Wqkv
 * 64 x (64 + 2 x 2 x 8) = 6,144, out_proj 4,096, the MLP 2 x 64 x 256 = 32,768, two LayerNorm
 * weights 128: 43,136 a layer, 86,272 with the final norm's 64 and the tied embedding's 6,400
 * 92,736; multi-query keeps one key-value head. Other attention or MLP types are refused,
 * naming the field. */
static void mpt_counts_its_variants(void)
{
	struct mdl_arch a;
	char err[256];
	const char *m7 = "{\"model_type\": \"mpt\", \"d_model\": 4096, \"n_layers\": 32, "
			 "\"n_heads\": 32, \"vocab_size\": 50432, \"no_bias\": true, "
			 "\"learned_pos_emb\": true, \"expansion_ratio\": 4, "
			 "\"attn_config\": {\"alibi\": true, \"attn_pdrop\": 0}}";
	CU_ASSERT_EQUAL(count_of(m7), 6649286656ull);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(m7, "t", &a, err, sizeof err), 0);
	CU_ASSERT(a.alibi && !a.learned_positions && a.tied && !a.gated_mlp);
	CU_ASSERT_EQUAL(a.intermediate, 16384);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"mpt\"}"), 1311213568ull);
	const char *b1 = "{\"model_type\": \"mpt\", \"d_model\": 2048, \"n_layers\": 24, "
			 "\"n_heads\": 16, \"no_bias\": false, \"learned_pos_emb\": true, "
			 "\"attn_config\": {\"alibi\": false}}";
	CU_ASSERT_EQUAL(count_of(b1), 1315950592ull);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"mpt\", \"d_model\": 64, \"n_heads\": 8, "
				 "\"n_layers\": 2, \"vocab_size\": 100, \"attn_config\": "
				 "{\"attn_type\": \"grouped_query_attention\", \"kv_n_heads\": 2}}"),
			92736ull);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"mpt\", \"attn_config\": "
					     "{\"attn_type\": \"multiquery_attention\"}}",
					     "t", &a, err, sizeof err),
			      0);
	CU_ASSERT_EQUAL(a.kv_heads, 1);
	refused("{\"model_type\": \"mpt\", \"attn_config\": {\"attn_type\": \"cross_attention\"}}",
		"attn_config.attn_type");
	refused("{\"model_type\": \"mpt\", \"n_heads\": 16, \"attn_config\": {\"attn_type\": "
		"\"grouped_query_attention\", \"kv_n_heads\": 3}}",
		"attn_config.kv_n_heads");
	refused("{\"model_type\": \"mpt\", \"ffn_config\": {\"ffn_type\": \"mptglu\"}}",
		"ffn_config.ffn_type");
}

/* Nemotron. NemotronConfig()'s defaults are Nemotron-4 15B's shape (hidden 6144, 32 layers, 48
 * heads, MLP 24,576, vocabulary 256,000); with its 8 key-value heads the Nemotron-4 15B report
 * (Parmar et al. 2024, arXiv 2402.16819, sec. 2) counts "3.2 billion embedding parameters and
 * 12.5 billion non-embedding parameters": the untied embedding and head 2 x 256,000 x 6,144 =
 * 3,145,728,000; a layer q and o 6,144^2 each, k and v 6,144 x 1,024 each, up and down 6,144 x
 * 24,576 each, two LayerNorms of weight and bias 24,576: 390,094,848, x 32 and the final norm's
 * 12,288 = 12,483,047,424. Nemotron-4 340B (the 340B report, arXiv 2406.11704, Table 1: hidden
 * 18,432, 96 layers, 96 heads, 8 key-value heads, vocabulary 256,000; the MLP 4 x hidden) is
 * "9.4 billion embedding parameters and 331.6 billion non-embedding": 9,437,184,000 and
 * 331,592,011,776. The MLP is plain (no gate) and its norms LayerNorms. */
static void nemotron_counts_the_reports(void)
{
	struct mdl_arch a;
	char err[256];
	const char *n15 = "{\"model_type\": \"nemotron\", \"num_key_value_heads\": 8}";
	CU_ASSERT_EQUAL(count_of(n15), 3145728000ull + 12483047424ull);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(n15, "t", &a, err, sizeof err), 0);
	CU_ASSERT(!a.gated_mlp && !a.relu_mlp && a.norm_bias && !a.tied && !a.qkv_bias);
	CU_ASSERT(a.squared_relu && a.norm_1p && a.rotary_fraction == 0.5 && mdl_arch_rotary(&a));
	/* hidden_act relu keeps one tensor (as OPT's), a GELU two; anything else is refused by
	 * name, as is a rotary share outside (0, 1] */
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"nemotron\", \"hidden_act\": "
					     "\"relu\", \"partial_rotary_factor\": 1.0}",
					     "t", &a, err, sizeof err),
			      0);
	CU_ASSERT(a.relu_mlp && !a.squared_relu && a.rotary_fraction == 1.0);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"nemotron\", \"hidden_act\": "
					     "\"gelu_pytorch_tanh\"}",
					     "t", &a, err, sizeof err),
			      0);
	CU_ASSERT(!a.relu_mlp && !a.squared_relu);
	refused("{\"model_type\": \"nemotron\", \"hidden_act\": \"silu\"}", "'hidden_act'");
	refused("{\"model_type\": \"nemotron\", \"partial_rotary_factor\": 0}",
		"'partial_rotary_factor'");
	const char *n340 = "{\"model_type\": \"nemotron\", \"hidden_size\": 18432, "
			   "\"intermediate_size\": 73728, \"num_hidden_layers\": 96, "
			   "\"num_attention_heads\": 96, \"num_key_value_heads\": 8}";
	CU_ASSERT_EQUAL(count_of(n340), 9437184000ull + 331592011776ull);
	/* attention_bias and mlp_bias put biases on q, k, v, o and on up and down */
	const char *b = "{\"model_type\": \"nemotron\", \"num_key_value_heads\": 8, "
			"\"attention_bias\": true, \"mlp_bias\": true}";
	CU_ASSERT_EQUAL(count_of(b) - count_of(n15),
			32ull * (6144 + 2 * 1024 + 6144 + 24576 + 6144));
	/* the list an unknown model_type's error gives is the family table's */
	char whole[1024];
	CU_ASSERT_EQUAL(mdl_arch_parse("{\"model_type\": \"t5\"}", "t", &a, whole, sizeof whole),
			-1);
	CU_ASSERT(strstr(whole, ", nemotron, ") && strstr(whole, "qwen (v1)") &&
		  strstr(whole, "language model of gemma3, ") && strstr(whole, " and qwen2_5_vl)"));
}

/* BigCode's code models. Starcoder2Config()'s defaults are StarCoder2-3B's shape (the model card's
 * 3.03B): by hand the tied embedding 49,152 x 3,072 = 150,994,944; a layer of q and o 3,072^2 +
 * 3,072 each, k and v 3,072 x 256 + 256 each (2 key-value heads of 128), c_fc 3,072 x 12,288 +
 * 12,288, c_proj 12,288 x 3,072 + 3,072 and two LayerNorms of weight and bias 12,288:
 * 95,979,008, x 30, and the final norm's 6,144: 3,030,371,328. use_bias false drops every
 * linear's bias. StarCoder (bigcode/starcoder's config: n_embd 6,144, 48 heads, 40 layers,
 * n_inner 24,576, 8,192 positions, vocabulary 49,152, multi_query; "15.5B parameters" in its
 * card): the tied wte 301,989,888, wpe 8,192 x 6,144 = 50,331,648, a layer of c_attn 6,144 x
 * (6,144 + 2 x 128) + 6,400, c_proj 6,144^2 + 6,144, c_fc 6,144 x 24,576 + 24,576, the MLP's
 * c_proj 24,576 x 6,144 + 6,144 and two LayerNorms: 379,128,064, x 40, and ln_f 12,288:
 * 15,517,456,384. Without multi_query every head has its key and value. */
static void bigcode_counts_by_hand(void)
{
	struct mdl_arch a;
	char err[256];
	const char *sc2 = "{\"model_type\": \"starcoder2\"}";
	counts(sc2, 3030371328ull, &a);
	CU_ASSERT(!a.gated_mlp && !a.relu_mlp && a.norm_bias && a.tied && a.qkv_bias &&
		  a.o_bias && a.mlp_bias && a.kv_heads == 2 && mdl_arch_rotary(&a));
	CU_ASSERT_EQUAL(count_of(sc2) - count_of("{\"model_type\": \"starcoder2\", "
						 "\"use_bias\": false}"),
			30ull * (3072 + 256 + 256 + 3072 + 12288 + 3072));
	const char *sc = "{\"model_type\": \"gpt_bigcode\", \"n_embd\": 6144, \"n_head\": 48, "
			 "\"n_layer\": 40, \"n_positions\": 8192, \"vocab_size\": 49152, "
			 "\"n_inner\": 24576, \"multi_query\": true}";
	counts(sc, 15517456384ull, &a);
	CU_ASSERT(a.kv_heads == 1 && a.learned_positions && a.tied && !a.gated_mlp &&
		  !mdl_arch_rotary(&a) && a.attn_dropout == 0.1);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"gpt_bigcode\", "
					     "\"multi_query\": false, "
					     "\"activation_function\": \"relu\"}",
					     "t", &a, err, sizeof err),
			      0);
	CU_ASSERT(a.kv_heads == 12 && a.relu_mlp && a.intermediate == 4 * 768);
	/* an activation these MLPs are not built with is refused by its key */
	refused("{\"model_type\": \"starcoder2\", \"hidden_act\": \"silu\"}", "'hidden_act'");
}

/* SmolLM3. SmolLM3Config()'s defaults are SmolLM3-3B's shape ("3.08B" in its card): the tied
 * embedding 128,256 x 2,048 = 262,668,288; a layer of q and o 2,048^2 each, k and v 2,048 x 512
 * each (4 key-value heads of 128), gate, up and down 2,048 x 11,008 each and two RMSNorms:
 * 78,123,008, x 36, and the final norm: 3,075,098,624. */
static void smollm3_counts_by_hand(void)
{
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"smollm3\"}"), 3075098624ull);
}

/* InternLM2.5-7B (its config.json: vocabulary 92,544, hidden 4,096, MLP 14,336, 32 layers, 32
 * heads, 8 key-value heads, bias false; "7.74B" in its card): the untied embedding and head
 * 92,544 x 4,096 each; a layer of wqkv 4,096 x (4,096 + 2 x 1,024), wo 4,096^2, w1, w3 and w2
 * 4,096 x 14,336 each and two RMSNorms: 218,112,000, x 32, and the final norm: 7,737,708,544.
 * With InternLM2Config's default bias, wqkv and wo carry biases: 32 x (6,144 + 4,096) more. */
static void internlm2_counts_by_hand(void)
{
	struct mdl_arch a;
	const char *c = "{\"model_type\": \"internlm2\", \"vocab_size\": 92544, "
			"\"intermediate_size\": 14336, \"num_key_value_heads\": 8, "
			"\"bias\": false}";
	counts(c, 7737708544ull, &a);
	CU_ASSERT(!a.qkv_bias && !a.o_bias && !a.tied && a.gated_mlp);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"internlm2\", \"vocab_size\": 92544, "
				 "\"intermediate_size\": 14336, \"num_key_value_heads\": 8}"),
			7737708544ull + 32ull * (6144 + 4096));
}

/* StableLM. StableLmConfig()'s defaults are StableLM-3B-4E1T's shape ("2.8B" in its card): the
 * untied 50,304 x 2,560 twice; a layer of 4 x 2,560^2, gate, up and down 2,560 x 6,912 each and
 * two LayerNorms of weight and bias: 79,308,800, x 32, and the final norm: 2,795,443,200.
 * StableLM 2 1.6B (its config: vocabulary 100,352, hidden 2,048, MLP 5,632, 24 layers, 32 heads,
 * use_qkv_bias; "1.64B"): 2 x 100,352 x 2,048 + 24 x (3 x (2,048^2 + 2,048) + 2,048^2 + 3 x
 * 2,048 x 5,632 + 8,192) + 4,096 = 1,644,515,328. Parallel residuals keep one norm a layer. */
static void stablelm_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"stablelm\"}", 2795443200ull, &a);
	CU_ASSERT(a.norm_bias && !a.qkv_bias && !a.parallel && a.rotary_fraction == 0.25);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"stablelm\", \"vocab_size\": 100352, "
				 "\"hidden_size\": 2048, \"intermediate_size\": 5632, "
				 "\"num_hidden_layers\": 24, \"use_qkv_bias\": true}"),
			1644515328ull);
	counts("{\"model_type\": \"stablelm\", \"use_parallel_residual\": true}",
	       2795443200ull - 32ull * 2 * 2560, &a);
	CU_ASSERT(a.parallel && a.norms_per_layer == 1);
}

/* OLMo (v1). OlmoConfig()'s defaults are OLMo-7B's shape ("6.9B"): the untied 50,304 x 4,096
 * twice and 32 layers of 4 x 4,096^2 + 3 x 4,096 x 11,008, its LayerNorms holding nothing:
 * 6,888,095,744. OLMo-1B-hf (hidden 2,048, 16 layers and heads, MLP 8,192, tied; "1.18B"):
 * 50,304 x 2,048 + 16 x (4 x 2,048^2 + 3 x 2,048 x 8,192) = 1,176,764,416. */
static void olmo_norms_hold_nothing(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"olmo\"}", 6888095744ull, &a);
	CU_ASSERT(a.norm_weightless && a.norms_per_layer == 2);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"olmo\", \"hidden_size\": 2048, "
				 "\"num_hidden_layers\": 16, \"num_attention_heads\": 16, "
				 "\"intermediate_size\": 8192, \"tie_word_embeddings\": true}"),
			1176764416ull);
}

/* Cohere's Command R. CohereConfig()'s defaults are Command R's shape ("35B" in its card): by
 * hand the tied embedding 256,000 x 8,192 = 2,097,152,000; a layer of q, k, v and o 8,192^2
 * each (64 key-value heads), gate, up and down 8,192 x 22,528 each and one weight-only
 * CohereLayerNorm of 8,192: 822,091,776, x 40, and the final norm: 34,980,831,232. Command R+
 * (hidden 12,288, 64 layers, 96 heads, 8 key-value heads, MLP 33,792, use_qk_norm; "104B"):
 * 3,145,728,000 + 64 x (2 x 12,288^2 + 2 x 12,288 x 1,024 + 3 x 12,288 x 33,792 + 12,288 +
 * q_norm 96 x 128 + k_norm 8 x 128) + 12,288 = 103,810,674,688. */
static void cohere_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"cohere\"}", 34980831232ull, &a);
	CU_ASSERT(a.parallel && a.norms_per_layer == 1 && !a.norm_bias && a.tied && a.gated_mlp &&
		  !a.qk_norm && !a.qkv_bias);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"cohere\", \"hidden_size\": 12288, "
				 "\"num_hidden_layers\": 64, \"num_attention_heads\": 96, "
				 "\"num_key_value_heads\": 8, \"intermediate_size\": 33792, "
				 "\"use_qk_norm\": true}"),
			103810674688ull);
}

/* Arcee's AFM-4.5B (its config: vocabulary 128,004, hidden 2,560, MLP 18,432, 36 layers, 20
 * heads, 4 key-value heads of 128; "4.5B"): the untied 128,004 x 2,560 twice; a layer of q and o
 * 2,560^2 each, k and v 2,560 x 512 each, up and down 2,560 x 18,432 each (no gate: squared
 * ReLU) and two RMSNorms: 110,105,600, x 36, and the final norm: 4,619,184,640. */
static void arcee_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"arcee\", \"vocab_size\": 128004, \"num_hidden_layers\": 36, "
	       "\"num_attention_heads\": 20, \"num_key_value_heads\": 4, \"head_dim\": 128}",
	       4619184640ull, &a);
	CU_ASSERT(!a.gated_mlp && a.squared_relu && !a.tied);
	refused("{\"model_type\": \"arcee\", \"hidden_act\": \"silu\"}", "'hidden_act'");
}

/* Hunyuan-7B (its config: vocabulary 128,167, hidden 4,096, MLP 14,336, 32 layers, 32 heads, 8
 * key-value heads of 128, the head tied; "7.5B"): the tied 128,167 x 4,096; a layer of q and o
 * 4,096^2 each, k and v 4,096 x 1,024 each, gate, up and down 4,096 x 14,336 each, the query and
 * key head norms 128 each and two RMSNorms: 218,112,256, x 32, and the final norm:
 * 7,504,568,320. */
static void hunyuan_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"hunyuan_v1_dense\", \"vocab_size\": 128167, "
	       "\"intermediate_size\": 14336, \"num_key_value_heads\": 8, \"head_dim\": 128, "
	       "\"tie_word_embeddings\": true}",
	       7504568320ull, &a);
	CU_ASSERT(a.qk_norm && !a.qk_norm_full && a.tied && !a.mlp_bias);
	CU_ASSERT_STRING_EQUAL(a.model_type, "hunyuan_v1_dense"); /* the longest type, whole */
}

/* ERNIE-4.5-21B-A3B (Ernie4_5_MoeConfig()'s defaults; "21B total, 3B active"): the tied
 * 103,424 x 2,560; every layer's attention (q and o 2,560^2, k and v 2,560 x 512) and two
 * RMSNorms, 15,733,760, x 28; layer 0's dense MLP 3 x 2,560 x 12,288; layers 1-27 each 64
 * experts of 3 x 2,560 x 1,536, two shared ones as one MLP 3,072 wide, the router 2,560 x 64 and
 * its 64 correction biases: 778,731,584; and the final norm: 21,825,437,888. Active, six
 * experts of the 64: 3,352,150,208. Experts on every other layer (moe_layer_interval 2: 1, 3,
 * ..., 27) and no shared ones: 14 dense layers and 14 of 755,138,624, 12,598,459,776. */
static void ernie4_5_moe_counts_by_hand(void)
{
	struct mdl_arch a;
	counts_active("{\"model_type\": \"ernie4_5_moe\"}", 21825437888ull, 3352150208ull, &a);
	CU_ASSERT(a.experts == 64 && a.experts_per_tok == 6 && a.moe_layers == 27 && a.tied);
	counts("{\"model_type\": \"ernie4_5_moe\", \"moe_layer_interval\": 2, "
	       "\"moe_num_shared_experts\": 0, \"moe_layer_end_index\": -1}",
	       12598459776ull, &a);
	CU_ASSERT_EQUAL(a.moe_layers, 14);
	refused("{\"model_type\": \"ernie4_5_moe\", \"moe_k\": 65}", "'moe_k'");
}

/* Baichuan2-7B (its config: vocabulary 125,696, hidden 4,096, 32 layers of 32 heads, MLP
 * 11,008, max_position_embeddings 4,096; "7.5B"): the untied 125,696 x 4,096 twice; every
 * layer's W_pack 3 x 4,096^2, o_proj 4,096^2, the MLP 3 x 4,096 x 11,008 and two RMSNorms,
 * 202,383,360, x 32; the final norm: 7,505,973,248. Rotary, q/k/v fused, a NormHead.
 * Baichuan2-13B (hidden 5,120, 40 layers of 40 heads, MLP 13,696, model_max_length alone):
 * 2 x 125,696 x 5,120 + 40 x 315,238,400 + 5,120 = 13,896,668,160, ALiBi. Baichuan 1's
 * 64,000-token vocabulary: a plain head. */
static void baichuan_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"baichuan\", \"max_position_embeddings\": 4096, "
	       "\"model_max_length\": 4096}",
	       7505973248ull, &a);
	CU_ASSERT(a.fused_qkv && a.norm_head && !a.alibi && mdl_arch_rotary(&a) && !a.tied);
	counts("{\"model_type\": \"baichuan\", \"hidden_size\": 5120, \"intermediate_size\": "
	       "13696, \"num_hidden_layers\": 40, \"num_attention_heads\": 40, "
	       "\"model_max_length\": 4096}",
	       13896668160ull, &a);
	CU_ASSERT(a.alibi && a.positions == 4096 && a.norm_head);
	counts("{\"model_type\": \"baichuan\", \"vocab_size\": 64000, "
	       "\"max_position_embeddings\": 4096}",
	       7505973248ull - 2ull * (125696 - 64000) * 4096, &a);
	CU_ASSERT(!a.norm_head);
}

/* dots.llm1 (its config: hidden 4,096, 62 layers, 32 heads and key-value heads, 128 experts of
 * 1,408, six a token, two shared, one dense layer of 10,944; "142B total, 14B active"): the
 * untied 152,064 x 4,096 twice; every layer's attention 4 x 4,096^2, its q and k head norms and
 * two RMSNorms, 67,117,312, x 62; layer 0's MLP 3 x 4,096 x 10,944; layers 1-61 each 128 experts
 * of 3 x 4,096 x 1,408, the shared pair as one MLP 2,816 wide, the router 4,096 x 128 and its
 * 128 biases, 2,249,719,936; and the final norm: 142,774,381,696, of which 14,016,588,928
 * active. */
static void dots1_counts_by_hand(void)
{
	struct mdl_arch a;
	counts_active("{\"model_type\": \"dots1\", \"hidden_size\": 4096}", 142774381696ull,
		      14016588928ull, &a);
	CU_ASSERT(a.qk_norm && !a.qk_norm_full && a.moe_layers == 61 && a.shared_experts == 2);
}

/* Seed-OSS-36B (its config: SeedOssConfig's defaults but hidden 5,120; "36B" in its card): the
 * untied embedding and head 155,136 x 5,120 each; a layer of q 5,120 x 10,240 (80 heads of 128)
 * with its bias, k and v 5,120 x 1,024 with theirs, o 10,240 x 5,120 without (attention_bias
 * and attention_out_bias as SeedOssConfig sets them), gate, up and down 5,120 x 27,648 each and
 * two RMSNorms: 540,039,168, x 64, and the final norm: 36,151,104,512. Its 0.1 dropouts come
 * with the config's defaults. */
static void seed_oss_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"seed_oss\", \"hidden_size\": 5120}", 36151104512ull, &a);
	CU_ASSERT(a.qkv_bias && !a.o_bias && !a.mlp_bias && !a.tied && a.gated_mlp);
	CU_ASSERT(a.attn_dropout == 0.1 && a.resid_dropout == 0.1);
	counts("{\"model_type\": \"seed_oss\", \"hidden_size\": 5120, "
	       "\"attention_out_bias\": true}",
	       36151104512ull + 64 * 5120, &a);
}

/* ERNIE-4.5-0.3B (Ernie4_5Config()'s defaults; "0.36B"): the tied embedding 103,424 x 1,024; a
 * layer of q and o 1,024 x 2,048 each (16 heads of 128), k and v 1,024 x 256 each, gate, up and
 * down 1,024 x 3,072 each and two RMSNorms: 14,157,824, x 18, and the final norm: 360,748,032.
 * use_bias biases every projection: 18 x (2,048 + 2 x 256 + 1,024 + 2 x 3,072 + 1,024) more. */
static void ernie4_5_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"ernie4_5\"}", 360748032ull, &a);
	CU_ASSERT(a.tied && !a.qkv_bias && !a.mlp_bias && a.attn_dropout == 0);
	counts("{\"model_type\": \"ernie4_5\", \"use_bias\": true}",
	       360748032ull + 18ull * (2048 + 2 * 256 + 1024 + 2 * 3072 + 1024), &a);
	CU_ASSERT(a.qkv_bias && a.o_bias && a.mlp_bias);
}

/* EXAONE 4.0 32B (its config: vocabulary 102,400, hidden 5,120, MLP 27,392, 64 layers, 40 heads,
 * 8 key-value heads of 128; "32.0B"): the untied 102,400 x 5,120 twice; a layer of q and o
 * 5,120^2 each, k and v 5,120 x 1,024 each, gate, up and down 5,120 x 27,392 each, q_norm and
 * k_norm 128 each and two RMSNorms: 483,666,176, x 64, and the final norm: 32,003,216,384. Its
 * pattern "LLLG" windows three layers of four, the last layer global: 48 of the 64; a pattern
 * of other letters is refused. */
static void exaone4_counts_by_hand(void)
{
	struct mdl_arch a;
	const char *c = "{\"model_type\": \"exaone4\", \"hidden_size\": 5120, "
			"\"intermediate_size\": 27392, \"num_hidden_layers\": 64, "
			"\"num_attention_heads\": 40, \"num_key_value_heads\": 8, "
			"\"head_dim\": 128, \"sliding_window_pattern\": \"LLLG\"}";
	counts(c, 32003216384ull, &a);
	CU_ASSERT(a.qk_norm && !a.qk_norm_full && !a.tied && a.sliding_window == 4096);
	CU_ASSERT_EQUAL(a.sliding_layers, 48);
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"exaone4\", "
					     "\"num_hidden_layers\": 64}",
					     "t", &a, err, sizeof err),
			      0);
	CU_ASSERT_EQUAL(a.sliding_layers, 48); /* sliding_window_pattern 4 */
	refused("{\"model_type\": \"exaone4\", \"sliding_window_pattern\": \"LLXG\"}",
		"'sliding_window_pattern'");
}

/* OLMo 3 7B (its config: vocabulary 100,278, otherwise Olmo3Config's defaults; "7B"): the
 * untied 100,278 x 4,096 twice; a layer of q, k, v and o 4,096^2 each, gate, up and down 4,096
 * x 11,008 each, q_norm and k_norm 4,096 each (over the whole projections) and two RMSNorms:
 * 202,391,552, x 32, and the final norm: 7,298,011,136; windows on 24 of the 32 layers. */
static void olmo3_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"olmo3\", \"vocab_size\": 100278}", 7298011136ull, &a);
	CU_ASSERT(a.qk_norm && a.qk_norm_full && !a.tied && !a.qkv_bias);
	CU_ASSERT_EQUAL(a.sliding_layers, 24);
}

/* Command R7B (Cohere2; its config: hidden 4,096, MLP 14,336, 32 layers, 32 heads, 8 key-value
 * heads; "8B"): the tied 256,000 x 4,096; a layer of q and o 4,096^2 each, k and v 4,096 x 1,024
 * each, gate, up and down 4,096 x 14,336 each and one weight-only CohereLayerNorm: 218,107,904,
 * x 32, and the final norm: 8,028,033,024; windows on 24 of the 32 layers. */
static void cohere2_counts_by_hand(void)
{
	struct mdl_arch a;
	counts("{\"model_type\": \"cohere2\", \"hidden_size\": 4096, "
	       "\"intermediate_size\": 14336, \"num_hidden_layers\": 32, "
	       "\"num_attention_heads\": 32, \"num_key_value_heads\": 8}",
	       8028033024ull, &a);
	CU_ASSERT(a.parallel && a.norms_per_layer == 1 && a.tied && !a.qk_norm);
	CU_ASSERT_EQUAL(a.sliding_layers, 24);
}

/* Two MoE families. Phi-3.5-MoE (PhimoeConfig()'s defaults with its config's attention_bias and
 * lm_head_bias; "41.9B" parameters, "6.6B active" in its card): the untied embedding and head
 * 32,064 x 4,096 each and the head's bias 32,064; a layer of q and o 4,096^2 + 4,096 each, k
 * and v 4,096 x 1,024 + 1,024 each, 16 experts of 3 x 4,096 x 6,400, the router 4,096 x 16
 * and two LayerNorms of weight and bias: 1,300,326,400, x 32, and the final norm's 8,192:
 * 41,873,153,344; active, two experts of the sixteen: 6,640,999,744. OLMoE-1B-7B (OlmoeConfig
 * with its checkpoint's 1,024-wide experts; "6.9B" total, "1.3B" active in the paper): the
 * untied 50,304 x 2,048 twice; a layer of 4 x 2,048^2, q_norm and k_norm 2,048 each, 64
 * experts of 3 x 2,048 x 1,024, the router 2,048 x 64 and two RMSNorms: 419,569,664, x 16, and
 * the final norm: 6,919,161,856, of which 1,282,017,280 active with eight experts a token. */
static void moe_families_count_by_hand(void)
{
	struct mdl_arch a;
	counts_active("{\"model_type\": \"phimoe\", \"attention_bias\": true, "
		      "\"lm_head_bias\": true}",
		      41873153344ull, 6640999744ull, &a);
	CU_ASSERT(a.norm_bias && a.head_bias && a.qkv_bias && !a.tied && a.experts == 16);
	counts_active("{\"model_type\": \"olmoe\", \"intermediate_size\": 1024}", 6919161856ull,
		      1282017280ull, &a);
	CU_ASSERT(a.qk_norm && a.qk_norm_full && !a.norm_bias && a.experts_per_tok == 8);
	/* Granite 3.0 1B-A400M (hidden 1,024, 24 layers, 16 heads, 8 key-value heads, 32 experts
	 * of 512, eight a token, vocabulary 49,155, tied): 49,155 x 1,024 + 24 x (2 x 1,024^2 +
	 * 2 x 1,024 x 512 + 32 x 3 x 1,024 x 512 + 1,024 x 32 + 2 x 1,024) + 1,024 =
	 * 1,334,628,352; active, 8 of the 32 experts: 428,658,688 */
	counts_active("{\"model_type\": \"granitemoe\", \"vocab_size\": 49155, "
		      "\"hidden_size\": 1024, \"intermediate_size\": 512, "
		      "\"num_hidden_layers\": 24, \"num_attention_heads\": 16, "
		      "\"num_key_value_heads\": 8, \"num_local_experts\": 32, "
		      "\"num_experts_per_tok\": 8, \"tie_word_embeddings\": true}",
		      1334628352ull, 428658688ull, &a);
}

/* GLM-4 in transformers' own classes. GlmConfig()'s defaults are GLM-4-9B's shape, and its
 * tensors ChatGLM's (the catalog's glm-4-9b, 9,399,951,360: by hand the untied embedding and
 * head 2 x 151,552 x 4,096, a layer of q 4,096^2 + 4,096, k and v 4,096 x 256 + 256 each, o
 * 4,096^2 without a bias, the merged gate and up 4,096 x 27,392, down 13,696 x 4,096 and two
 * RMSNorms: 203,960,832, x 40, and the final norm); Glm4Config() the same with two RMSNorms a
 * layer more (40 x 2 x 4,096 = 327,680). attention_bias false drops the q, k and v biases. Both
 * rotate half of each head, as ChatGLM does. */
static void glm_counts_as_chatglm(void)
{
	struct mdl_arch a;
	char err[256];
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"glm\"}"), 9399951360ull);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"glm4\"}"), 9399951360ull + 327680ull);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"glm\", \"attention_bias\": false}"),
			9399951360ull - 40ull * (4096 + 2 * 256));
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"glm4\"}", "t", &a, err, sizeof err),
			      0);
	CU_ASSERT(a.gated_mlp && !a.o_bias && a.norms_per_layer == 4 && a.rotary_fraction == 0.5);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("glm-4-9b.json"), &a, err, sizeof err), 0);
	CU_ASSERT(a.rotary_fraction == 0.5);
}

/* GLM-4.5 (by hand, hidden 8, 3 layers of which the first dense, 2 heads and 1 key-value head
 * of 4, 10 tokens, untied): q 64 + 8, k and v 32 + 4 each (attention_bias), o_proj 64 without
 * one, q_norm and k_norm 4 each, two RMSNorms 16: 232 a layer; the dense MLP 3 x 8 x 16 = 384;
 * an MoE layer's router 32 and its 4 selection biases, 4 experts of 3 x 8 x 4 = 96 and the shared
 * one: 516; 3 x 232 + 384 + 2 x 516 = 2,112, with the embedding, head and final norm 2,280;
 * a token passes 2 of the 4 experts: 2,280 - 2 x 2 x 96 = 1,896 active. */
static void glm4_moe_biases_qkv_not_o(void)
{
	const char *json = "{\"model_type\": \"glm4_moe\", \"hidden_size\": 8, "
			   "\"num_hidden_layers\": 3, \"num_attention_heads\": 2, "
			   "\"num_key_value_heads\": 1, \"head_dim\": 4, \"intermediate_size\": 16, "
			   "\"moe_intermediate_size\": 4, \"n_routed_experts\": 4, "
			   "\"num_experts_per_tok\": 2, \"vocab_size\": 10, "
			   "\"attention_bias\": true, \"use_qk_norm\": true}";
	struct mdl_arch a;
	struct mdl_counts c;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(json, "t", &a, err, sizeof err), 0);
	CU_ASSERT(a.qkv_bias && !a.o_bias && a.qk_norm && a.router_bias && !a.tied);
	CU_ASSERT_EQUAL(a.moe_layers, 2);
	mdl_arch_counts(&a, &c);
	CU_ASSERT_EQUAL(c.params, 2280ull);
	CU_ASSERT_EQUAL(c.active_params, 1896ull);
}

static void omitted_fields_take_the_transformers_defaults(void)
{
	/* LlamaConfig() defaults are the Llama-2-7B shape */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"llama\"}"), 6738415616ull);
	/* GPT2Config() defaults are GPT-2 small, 124,439,808 params (openai-community/gpt2) */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"gpt2\"}"), 124439808ull);
	/* Gemma2 ties its embeddings by default: an explicit false adds a 256000 x h head */
	const char *g = "{\"model_type\": \"gemma2\", \"hidden_size\": 3584, \"intermediate_size\": "
			"14336, \"num_attention_heads\": 16, \"num_key_value_heads\": 8, "
			"\"head_dim\": 256, \"num_hidden_layers\": 42}";
	CU_ASSERT_EQUAL(count_of(g), 9241705984ull);
	const char *gu = "{\"model_type\": \"gemma2\", \"hidden_size\": 3584, \"intermediate_size\": "
			 "14336, \"num_attention_heads\": 16, \"num_key_value_heads\": 8, "
			 "\"head_dim\": 256, \"num_hidden_layers\": 42, \"tie_word_embeddings\": false}";
	CU_ASSERT_EQUAL(count_of(gu), 9241705984ull + 256000ull * 3584ull);
	/* a llama config with attention_bias adds q, k, v, o biases */
	const char *lb = "{\"model_type\": \"llama\", \"attention_bias\": true}";
	CU_ASSERT_EQUAL(count_of(lb), 6738415616ull + 32ull * 4 * 4096);
	/* QWenConfig() defaults are Qwen-7B's shape; without no_bias its attention output and
	 * the MLP's three projections (11008 wide: half of intermediate_size) take biases */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"qwen\"}"), 7721324544ull);
	/* GraniteConfig() has LlamaConfig's defaults and tensors (its multipliers change no
	 * shape) */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"granite\"}"), 6738415616ull);
	/* GPTNeoXConfig() defaults are GPT-NeoX-20B's shape: 20,554,567,680 on its card */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"gpt_neox\"}"), 20554567680ull);
	/* Pythia-1B (1,011,781,632 in the Pythia table); GPT-NeoX's fused q/k/v is 3 x hidden
	 * whatever a config says of key-value heads (recent configs carry the field) */
	const char *py = "{\"model_type\": \"gpt_neox\", \"hidden_size\": 2048, "
			 "\"num_hidden_layers\": 16, \"num_attention_heads\": 8, "
			 "\"intermediate_size\": 8192, \"vocab_size\": 50304, "
			 "\"num_key_value_heads\": 2}";
	CU_ASSERT_EQUAL(count_of(py), 1011781632ull);
	/* ChatGLM2-6B: 28 layers, 2 key-value groups, q/k/v biased, padded_vocab_size rows:
	 * 6,243,584,000 as transformers reports it loaded */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"chatglm\", \"multi_query_attention\": true, "
				 "\"multi_query_group_num\": 2, \"add_qkv_bias\": true}"),
			6243584000ull);
	/* GemmaConfig() defaults are Gemma-7B's shape: 8,537,680,896 (google/gemma-7b) */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"gemma\"}"), 8537680896ull);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"qwen\", \"no_bias\": false}"),
			7721324544ull + 32ull * (4096 + 2 * 11008 + 4096));
}

/* A vision-language config reads as its language model, with a warning, and counts params. */
static void language_model_counts(const char *json, uint64_t params, struct mdl_arch *a)
{
	counts(json, params, a);
	CU_ASSERT_PTR_NOT_NULL(strstr(a->warning, "vision tower"));
}

static void layers_that_differ_keep_exact_totals(void)
{
	struct mdl_arch a;
	struct mdl_counts c;
	struct mdl_job j;
	struct mdl_states whole, part[4];
	char err[256];

	/* DeepSeek-V3: 3 dense layers, 58 with 256 routed and 1 shared expert */
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("deepseek-v3.json"), &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(a.moe_layers, 58);
	CU_ASSERT_EQUAL(a.head_dim, 192);
	CU_ASSERT_EQUAL(a.v_head_dim, 128);
	/* a token's MLP is 8 routed + 1 shared experts of 2048 in 58 layers, 18432 in 3: the same */
	CU_ASSERT_DOUBLE_EQUAL(mdl_arch_mlp_width(&a), 18432.0, 1e-6);
	mdl_arch_counts(&a, &c);
	/* the pipeline's stages add up to the model whatever the split */
	j = (struct mdl_job){.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			     .optimizer = MDL_ADAMW, .seq = 4096, .micro_batch = 1};
	mdl_job_states(&a, &j, &whole);
	uint64_t sum = 0;
	mdl_job_states_part(&a, &j, 61, true, true, &part[0]);
	CU_ASSERT_EQUAL(part[0].params, whole.params);
	CU_ASSERT_EQUAL(whole.params, c.params);
	for (int i = 0; i < 2; i++) {
		mdl_job_states_part(&a, &j, i ? 31 : 30, i == 0, i == 1, &part[i]);
		sum += part[i].params;
	}
	CU_ASSERT(sum <= c.params && c.params - sum < 2);
	/* Qwen3-MoE: mlp_only_layers and decoder_sparse_step leave dense layers of
	 * intermediate_size; the parameters follow */
	const char *q = "{\"model_type\": \"qwen3_moe\", \"num_hidden_layers\": 8, "
			"\"mlp_only_layers\": [0, 3], \"decoder_sparse_step\": 1}";
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse(q, "t", &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(a.moe_layers, 6);
	uint64_t h = 2048, moe = 128ull * 3 * h * 768 + 128 * h, dense = 3ull * h * 6144;
	uint64_t attn = h * 4096 * 2 + 2 * h * 512 + 2 * 128 + 2 * h;
	mdl_arch_counts(&a, &c);
	CU_ASSERT_EQUAL(c.params, 8 * attn + 6 * moe + 2 * dense + 2 * 151936ull * h + h);
	/* Gemma 3's multimodal config: the language model from text_config, with a warning */
	const char *g = "{\"model_type\": \"gemma3\", \"text_config\": {\"hidden_size\": 1152, "
			"\"intermediate_size\": 6912, \"num_attention_heads\": 4, "
			"\"num_key_value_heads\": 1, \"head_dim\": 256, \"num_hidden_layers\": 26, "
			"\"vocab_size\": 262144, \"sliding_window\": 512}}";
	language_model_counts(g, 999885952ull, &a);
	CU_ASSERT_EQUAL(a.sliding_layers, 26 - 26 / 6);
	/* other vision-language wrappers: Qwen2.5-VL's language model at the top level (its 7B's is
	 * Qwen2.5-7B's shape), Mistral 3's and LLaVA's in text_config */
	const char *vl = "{\"model_type\": \"qwen2_5_vl\", \"hidden_size\": 3584, "
			 "\"intermediate_size\": 18944, \"num_attention_heads\": 28, "
			 "\"num_key_value_heads\": 4, \"num_hidden_layers\": 28, "
			 "\"vocab_size\": 152064, \"tie_word_embeddings\": false, "
			 "\"vision_config\": {\"depth\": 32}}";
	language_model_counts(vl, 7615616512ull, &a);
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"llava\", \"text_config\": {}}"),
			6738415616ull); /* LlamaConfig's defaults */
	CU_ASSERT_EQUAL(count_of("{\"model_type\": \"mistral3\", \"text_config\": "
				 "{\"model_type\": \"mistral\", \"vocab_size\": 32000}}"),
			7241732096ull); /* MistralConfig's defaults: Mistral-7B */
	/* Llama 3.2 11B Vision's text model: Llama-3.1-8B's layers, 40 of them, 8 being
	 * cross-attention layers of the same shapes: 8,030,261,248 + 8 x 218,112,000; the
	 * warning says how its cross-attention is taken */
	const char *ml = "{\"model_type\": \"mllama\", \"text_config\": {\"model_type\": "
			 "\"mllama_text_model\", \"vocab_size\": 128256, \"hidden_size\": 4096, "
			 "\"intermediate_size\": 14336, \"num_hidden_layers\": 40, "
			 "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
			 "\"cross_attention_layers\": [3, 8, 13, 18, 23, 28, 33, 38]}}";
	language_model_counts(ml, 9775157248ull, &a);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.warning, "cross-attention"));
	/* a parallel block (Phi): the MLP reads the attention's normed input, so the block keeps
	 * 2 (norm input + MLP input) x s b h bytes less than a sequential one; with a norm of its
	 * own on the same input (Falcon's ln_mlp), one less */
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("phi-2.json"), &a, err, sizeof err), 0);
	struct mdl_job pj = {.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			     .optimizer = MDL_ADAMW, .seq = 2048, .micro_batch = 1,
			     .attention = MDL_ATTN_FLASH, .recompute = MDL_RC_NONE};
	double par = mdl_act_layer_saved(&a, &pj, 1, false);
	a.norms_per_layer = 2; /* Falcon's new architecture: ln_attn and ln_mlp on one input */
	double two = mdl_act_layer_saved(&a, &pj, 1, false);
	a.parallel = false; /* a sequential block */
	double seq = mdl_act_layer_saved(&a, &pj, 1, false);
	CU_ASSERT_DOUBLE_EQUAL(two - par, 2.0 * 2048 * 2560, 1);
	CU_ASSERT_DOUBLE_EQUAL(seq - par, 2.0 * 2 * 2048 * 2560, 1);
	/* Llama 4 Maverick's interleaving: every second layer routed (128 experts and a shared
	 * one of the expert's 8192), the others dense at intermediate_size_mlp */
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"llama4_text\", "
					     "\"num_local_experts\": 128, "
					     "\"interleave_moe_layer_step\": 2}",
					     "t", &a, err, sizeof err),
			      0);
	CU_ASSERT_EQUAL(a.moe_layers, 24);
	CU_ASSERT_EQUAL(a.moe_intermediate, 8192);
	CU_ASSERT_EQUAL(a.intermediate, 16384);
	CU_ASSERT_EQUAL(a.shared_intermediate, 8192);
	/* GPT-OSS: every layer routed, every other one windowed (GptOssConfig's layer_types) */
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"gpt_oss\"}", "t", &a, err,
					     sizeof err),
			      0);
	CU_ASSERT_EQUAL(a.moe_layers, 36);
	CU_ASSERT_EQUAL(a.sliding_layers, 18);
	mdl_arch_counts(&a, &c);
	CU_ASSERT_EQUAL(c.params, 116829156672ull);
}

static void sliding_windows_cut_the_attention_flash_runs_and_counts(void)
{
	struct mdl_arch a;
	struct mdl_job j;
	struct mdl_flops f, g;
	char err[256];

	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("mistral-7b-v0.1.json"), &a, err, sizeof err),
			      0);
	j = (struct mdl_job){.method = MDL_FULL, .precision = MDL_BF16_MIXED,
			     .optimizer = MDL_ADAMW, .seq = 4096, .micro_batch = 1,
			     .attention = MDL_ATTN_FLASH};
	/* within the 4096 window: the causal half, as without one */
	double attn4k = 2.0 * 4096.0 * 4096.0 * 32 * 256;
	mdl_job_flops(&a, &j, &f);
	CU_ASSERT_DOUBLE_EQUAL(f.attn_core_fwd_exec, 0.5 * attn4k, attn4k * 1e-9);
	j.seq = 16384; /* a band of s w - w^2 / 2 of the s^2 scores: 7/32 */
	mdl_job_flops(&a, &j, &g);
	double attn = 2.0 * 16384.0 * 16384.0 * 32 * 256;
	CU_ASSERT_DOUBLE_EQUAL(g.attn_core_fwd_exec, attn * 7.0 / 32.0, attn * 1e-9);
	/* the convention (what MFU divides) counts every key a query may see, no causal
	 * discount: all 4096 within the window (the executed half beyond), the 4096 of the window
	 * at 16384 tokens, a quarter of s^2, of which the band runs 7/32 */
	CU_ASSERT_DOUBLE_EQUAL(f.layer_fwd - f.layer_fwd_exec, 0.5 * attn4k, attn4k * 1e-9);
	CU_ASSERT_DOUBLE_EQUAL(g.layer_fwd - g.layer_fwd_exec, attn / 4.0 - attn * 7.0 / 32.0,
			       attn * 1e-9);
	/* eager attention computes the whole s^2 and masks: more than the convention counts */
	j.attention = MDL_ATTN_EAGER;
	mdl_job_flops(&a, &j, &g);
	CU_ASSERT_DOUBLE_EQUAL(g.layer_fwd_exec - g.layer_fwd, attn - attn / 4.0, attn * 1e-9);
}

static void bad_configs_are_rejected_with_the_field_named(void)
{
	static const struct {
		const char *json, *says;
	} bad[] = {
		{"{\"model_type\": \"bert\"}", "not supported"},
		{"{\"hidden_size\": 10}", "model_type"},
		{"[1, 2]", "object"},
		{"{\"model_type\": \"llama\", \"hidden_size\": -1}", "hidden_size"},
		{"{\"model_type\": \"llama\", \"hidden_size\": 4096.5}", "hidden_size"},
		{"{\"model_type\": \"llama\", \"hidden_size\": \"4096\"}", "must be a number"},
		{"{\"model_type\": \"llama\", \"num_key_value_heads\": 5}", "num_key_value_heads"},
		{"{\"model_type\": \"llama\", \"hidden_size\": 4097}", "divisible"},
		{"{\"model_type\": \"llama\", \"vocab_size\": 1e300}", "vocab_size"},
		{"{\"model_type\": \"llama\", \"tie_word_embeddings\": 1}", "true or false"},
		{"{\"model_type\": \"llama\", \"num_hidden_layers\": 1024, \"hidden_size\": 1048576, "
		 "\"num_attention_heads\": 1024}",
		 "parameters"},
		{"{\"model_type\": \"llama\", \"num_hidden_layers\": 100000}", "num_hidden_layers"},
		{"{\"model_type\": \"mixtral\", \"num_experts_per_tok\": 9}", "exceeds"},
		{"{\"model_type\": \"llama\"", "not valid JSON"},
		{"{\"model_type\": \"qwen3_moe\", \"num_experts\": 4}", "exceeds 'num_experts'"},
		{"{\"model_type\": \"qwen3_moe\", \"mlp_only_layers\": 3}", "mlp_only_layers"},
		{"{\"model_type\": \"deepseek_v3\", \"kv_lora_rank\": 0}", "kv_lora_rank"},
		{"{\"model_type\": \"gemma3\"}", "text_config"},
		{"{\"model_type\": \"mistral\", \"sliding_window\": -4}", "sliding_window"},
		{"{\"model_type\": \"qwen\", \"intermediate_size\": 22015}", "must be even"},
		{"{\"model_type\": \"llama4_text\", \"interleave_moe_layer_step\": 49}",
		 "interleave_moe_layer_step"},
	};
	struct mdl_arch a;
	char err[256];

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err[0] = '\0';
		CU_ASSERT_EQUAL(mdl_arch_parse(bad[i].json, "t.json", &a, err, sizeof err), -1);
		CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].says));
	}
}

static void unreadable_files_get_one_clear_message(void)
{
	struct mdl_arch a;
	char err[256];

	CU_ASSERT_EQUAL(mdl_arch_load("/nonexistent/config.json", &a, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "cannot open"));
	CU_ASSERT_EQUAL(mdl_arch_load("/", &a, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "not a regular file"));
	CU_ASSERT_EQUAL(mdl_arch_load("/bin/sh", &a, err, sizeof err), -1);
}

static void lora_trainable_counts_match_litgpt(void)
{
	/* LitGPT resource table (published.md B.12): r = 8 on query and value */
	struct mdl_arch a;
	char err[256];
	struct mdl_job j = {.method = MDL_LORA, .lora_rank = 8, .lora_targets = MDL_T_Q | MDL_T_V};

	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("llama-2-7b.json"), &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(mdl_job_trainable(&a, &j), 4194304ull);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("llama-2-13b.json"), &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(mdl_job_trainable(&a, &j), 6553600ull);
}

/* PEFT's modules_to_save (Qwen's finetune.py for base models: wte and lm_head): the embedding
 * and head train whole beside the adapters, as copies in the base's dtype: weights, gradients and
 * AdamW's two states at 2 B each, no fp32 master; the head's weight gradient is computed. */
static void lora_trains_the_embedding_and_head_whole_where_asked(void)
{
	struct mdl_arch a;
	struct mdl_states s0, s1;
	struct mdl_flops f0, f1;
	char err[256];
	struct mdl_job j = {.method = MDL_LORA, .lora_rank = 8, .lora_targets = MDL_T_ALL,
			    .precision = MDL_BF16_MIXED, .optimizer = MDL_ADAMW, .seq = 1024,
			    .micro_batch = 1, .attention = MDL_ATTN_FLASH};

	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("qwen-7b.json"), &a, err, sizeof err), 0);
	mdl_job_states(&a, &j, &s0);
	mdl_job_flops(&a, &j, &f0);
	j.lora_targets |= MDL_T_EMBED | MDL_T_HEAD;
	mdl_job_states(&a, &j, &s1);
	mdl_job_flops(&a, &j, &f1);
	double vh = 151936.0 * 4096.0; /* wte, and lm_head untied */
	CU_ASSERT_EQUAL(s1.trainable_params - s0.trainable_params, (uint64_t)(2 * vh));
	CU_ASSERT_DOUBLE_EQUAL(s1.weights_bytes - s0.weights_bytes, 2 * vh * 2, 1);
	CU_ASSERT_DOUBLE_EQUAL(s1.gradients_bytes - s0.gradients_bytes, 2 * vh * 2, 1);
	CU_ASSERT_DOUBLE_EQUAL(s1.optimizer_bytes - s0.optimizer_bytes, 2 * vh * 4, 1);
	CU_ASSERT_DOUBLE_EQUAL(f1.head_bwd, 2 * f0.head_bwd, 1);
	/* the embedding alone: the head stays frozen */
	j.lora_targets = MDL_T_ALL | MDL_T_EMBED;
	mdl_job_states(&a, &j, &s1);
	mdl_job_flops(&a, &j, &f1);
	CU_ASSERT_EQUAL(s1.trainable_params - s0.trainable_params, (uint64_t)vh);
	CU_ASSERT_DOUBLE_EQUAL(f1.head_bwd, f0.head_bwd, 1);
}

/* Loads are remembered per thread by path and file stamp: the same file loads once, and a file
 * rewritten between two loads is read again. */
static void a_rewritten_config_is_read_again(void)
{
	char path[] = "/tmp/tierplan-arch-XXXXXX";
	int fd = mkstemp(path);
	CU_ASSERT_FATAL(fd >= 0);
	const char *v1 = "{\"model_type\": \"llama\", \"num_hidden_layers\": 2}";
	const char *v2 = "{\"model_type\": \"llama\", \"num_hidden_layers\": 30}";
	CU_ASSERT_FATAL(write(fd, v1, strlen(v1)) == (ssize_t)strlen(v1));
	close(fd);
	struct mdl_arch a;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(path, &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(a.layers, 2);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(path, &a, err, sizeof err), 0); /* remembered */
	CU_ASSERT_EQUAL(a.layers, 2);
	fd = open(path, O_WRONLY | O_TRUNC); /* the test's own temporary file */
	CU_ASSERT_FATAL(fd >= 0);
	/* one byte longer: the stamp changes whatever the clock's resolution */
	CU_ASSERT_FATAL(write(fd, v2, strlen(v2)) == (ssize_t)strlen(v2));
	close(fd);
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(path, &a, err, sizeof err), 0);
	CU_ASSERT_EQUAL(a.layers, 30);
	unlink(path);
}

static void lora_targets_parse_and_print(void)
{
	unsigned m;
	char err[128], buf[64];

	CU_ASSERT_EQUAL(mdl_parse_targets("q,v", &m, err, sizeof err), 0);
	CU_ASSERT_EQUAL(m, MDL_T_Q | MDL_T_V);
	CU_ASSERT_STRING_EQUAL(mdl_targets_str(MDL_T_ALL, buf, sizeof buf), "q,k,v,o,gate,up,down");
	CU_ASSERT_EQUAL(mdl_parse_targets("q,x", &m, err, sizeof err), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "'x'"));
	CU_ASSERT_EQUAL(mdl_parse_targets("all,embed,head", &m, err, sizeof err), 0);
	CU_ASSERT_EQUAL(m, MDL_T_ALL | MDL_T_EMBED | MDL_T_HEAD);
	CU_ASSERT_EQUAL(mdl_parse_targets("embed", &m, err, sizeof err), -1); /* nothing adapted */
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no adapted projection"));
}

/* A key two edits from one the family reads, which the config lacks, is named in a warning:
 * num_hidden_layer left num_hidden_layers at its default. Real configs warn about nothing. */
static void misspelled_keys_warn(void)
{
	struct mdl_arch a;
	char err[256];
	CU_ASSERT_EQUAL_FATAL(mdl_arch_parse("{\"model_type\": \"llama\", \"num_hidden_layer\": 8, "
					     "\"rope_theta\": 10000}",
					     "t.json", &a, err, sizeof err),
			      0);
	CU_ASSERT_PTR_NOT_NULL(strstr(a.warning, "'num_hidden_layer'"));
	CU_ASSERT_PTR_NOT_NULL(strstr(a.warning, "'num_hidden_layers'"));
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("llama-3.1-8b.json"), &a, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(a.warning, "");
	/* MLA derives head_dim: DeepSeek's v_head_dim is not a misspelling of it */
	CU_ASSERT_EQUAL_FATAL(mdl_arch_load(model_path("deepseek-v3.json"), &a, err, sizeof err), 0);
	CU_ASSERT_STRING_EQUAL(a.warning, "");
}

int suite_arch(void)
{
	static const struct test_case c[] = {
		{"misspelled keys warn", misspelled_keys_warn},
		{"every_catalog_model_has_its_exact_parameter_count",
		 every_catalog_model_has_its_exact_parameter_count},
		{"omitted_fields_take_the_transformers_defaults",
		 omitted_fields_take_the_transformers_defaults},
		{"gemma gates by gelu", gemma_gates_by_gelu},
		{"gpt-oss gates by quick gelu", gpt_oss_gates_by_quick_gelu},
		{"opt counts its offset positions and keeps relu once",
		 opt_counts_its_offset_positions_and_keeps_relu_once},
		{"bloom reads its aliases and norms its embeddings",
		 bloom_reads_its_aliases_and_norms_its_embeddings},
		{"mpt counts its variants", mpt_counts_its_variants},
		{"nemotron counts the reports", nemotron_counts_the_reports},
		{"bigcode counts by hand", bigcode_counts_by_hand},
		{"cohere counts by hand", cohere_counts_by_hand},
		{"arcee counts by hand", arcee_counts_by_hand},
		{"seed_oss counts by hand", seed_oss_counts_by_hand},
		{"hunyuan counts by hand", hunyuan_counts_by_hand},
		{"ernie4_5_moe counts by hand", ernie4_5_moe_counts_by_hand},
		{"dots1 counts by hand", dots1_counts_by_hand},
		{"baichuan counts by hand", baichuan_counts_by_hand},
		{"ernie4_5 counts by hand", ernie4_5_counts_by_hand},
		{"exaone4 counts by hand", exaone4_counts_by_hand},
		{"cohere2 counts by hand", cohere2_counts_by_hand},
		{"olmo3 counts by hand", olmo3_counts_by_hand},
		{"smollm3 counts by hand", smollm3_counts_by_hand},
		{"internlm2 counts by hand", internlm2_counts_by_hand},
		{"stablelm counts by hand", stablelm_counts_by_hand},
		{"olmo norms hold nothing", olmo_norms_hold_nothing},
		{"moe families count by hand", moe_families_count_by_hand},
		{"glm counts as chatglm", glm_counts_as_chatglm},
		{"glm4_moe biases q, k and v, not o", glm4_moe_biases_qkv_not_o},
		{"layers_that_differ_keep_exact_totals", layers_that_differ_keep_exact_totals},
		{"sliding_windows_cut_the_attention_flash_runs_and_counts",
		 sliding_windows_cut_the_attention_flash_runs_and_counts},
		{"bad_configs_are_rejected_with_the_field_named",
		 bad_configs_are_rejected_with_the_field_named},
		{"unreadable_files_get_one_clear_message", unreadable_files_get_one_clear_message},
		{"lora_trainable_counts_match_litgpt", lora_trainable_counts_match_litgpt},
		{"lora_targets_parse_and_print", lora_targets_parse_and_print},
		{"lora_trains_the_embedding_and_head_whole_where_asked",
		 lora_trains_the_embedding_and_head_whole_where_asked},
		{"a_rewritten_config_is_read_again", a_rewritten_config_is_read_again},
		{"gptq_checkpoints_declare_their_format", gptq_checkpoints_declare_their_format},
	};
	return add_suite("arch", c, (int)(sizeof c / sizeof c[0]));
}
